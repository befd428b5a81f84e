// Which file systems stripe, and whether the file system and file count favour one shared
// file or a file per process (MSLIO paper).
#include <algorithm>

#include "advise/advice.hpp"

namespace strata::advise {

const std::vector<std::string>& known_file_systems() {
  // The names fs_type_name() gives (src/fs/fs_info.cpp), less "unknown" and the pseudo file
  // systems no output goes to.
  static const std::vector<std::string> names = {"lustre", "beegfs", "gpfs",  "ext4",      "xfs", "btrfs",
                                                 "zfs",    "tmpfs",  "ramfs", "overlayfs", "nfs", "ceph",
                                                 "afs",    "fuse",   "aufs",  "squashfs"};
  return names;
}

bool is_striped(const std::string& fs_type) { return fs_type == "lustre" || fs_type == "beegfs"; }

LayoutChoice choose_layout(const std::string& fs_type, int64_t files) {
  // BeeGFS: the shared-file version was slower in every PlaFRIM case, and file per process is
  // reported to do better there (MSLIO VI-C).
  if (fs_type == "beegfs") return LayoutChoice::file_per_process;
  // Lustre: creating tens of thousands of files loads its metadata server; the shared file cut
  // the I/O time by up to about 90 % on SDumont as the file count grew (MSLIO IV-A, VI-C).
  if (fs_type == "lustre" && files >= many_files) return LayoutChoice::shared_file;
  return LayoutChoice::either;
}

std::string layout_name(LayoutChoice c) {
  switch (c) {
    case LayoutChoice::shared_file: return "shared file";
    case LayoutChoice::file_per_process: return "file per process";
    case LayoutChoice::either: return "either";
  }
  return "either";
}

std::string strategy_name(Strategy s) { return s == Strategy::per_dataset ? "per-dataset" : "multi-dataset"; }

std::string fit_name(StripeCountFit f) { return f == StripeCountFit::hazel_hen ? "5.6n+4.9" : "5n+3"; }

}  // namespace strata::advise
