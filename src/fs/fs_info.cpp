#include "fs/fs_info.hpp"

#include <sys/statfs.h>

#include <cerrno>
#include <filesystem>

#include "common/error.hpp"

namespace strata {

std::string full_file_system(const std::string& path) {
  FsInfo fs;
  try {
    fs = fs_info(path);
  } catch (const Error&) {
    return "";
  }
  if (fs.total_bytes == 0 || fs.free_bytes >= (uint64_t{1} << 20)) return "";
  return "the file system holding \"" + path + "\" is full: " + std::to_string(fs.free_bytes) + " bytes free";
}

std::string no_space_note(const std::string& path) {
  const std::string full = full_file_system(path);
  return full.empty() ? "" : " (" + full + ")";
}

std::string fs_type_name(uint64_t magic) {
  switch (magic) {
    case 0xEF53: return "ext4";  // ext2/3/4 share the magic
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x01021994: return "tmpfs";
    case 0x794C7630: return "overlayfs";
    case 0x0BD00BD0: return "lustre";
    case 0x47504653: return "gpfs";
    case 0x19830326: return "beegfs";
    case 0x6969: return "nfs";
    case 0x65735546: return "fuse";
    case 0x2FC12FC1: return "zfs";
    case 0x5346414F: return "afs";
    case 0x00C36400: return "ceph";
    case 0x73717368: return "squashfs";
    case 0x858458F6: return "ramfs";
    case 0x61756673: return "aufs";
    case 0x6A656A63: return "fakeowner";
    case 0x62656572: return "sysfs";
    case 0x9FA0: return "proc";
    default: return "unknown";
  }
}

FsInfo fs_info(const std::string& path) {
  namespace fsys = std::filesystem;
  fsys::path p = path.empty() ? fsys::path(".") : fsys::path(path);
  p = fsys::absolute(p);
  struct statfs st {};
  fsys::path probe = p;
  while (true) {
    if (statfs(probe.c_str(), &st) == 0) break;
    int err = errno;
    if (err != ENOENT || !probe.has_parent_path() || probe.parent_path() == probe) {
      throw_system("cannot examine the file system of \"" + path + "\"", err);
    }
    probe = probe.parent_path();
  }
  FsInfo info;
  info.path = probe.string();
  info.magic = static_cast<uint64_t>(static_cast<uint32_t>(st.f_type));
  info.type = fs_type_name(info.magic);
  info.block_size = static_cast<uint64_t>(st.f_bsize);
  info.total_bytes = static_cast<uint64_t>(st.f_blocks) * static_cast<uint64_t>(st.f_frsize);
  info.free_bytes = static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
  return info;
}

}  // namespace strata
