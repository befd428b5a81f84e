#include "backends/backend.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "arch/node_local.hpp"
#include "common/error.hpp"
#include "fs/fs_info.hpp"
#include "strata/strata.hpp"

namespace strata {

std::string layout_name(Layout l) {
  switch (l) {
    case Layout::shared: return "shared";
    case Layout::file_per_process: return "file-per-process";
    case Layout::file_per_node: return "file-per-node";
  }
  return "?";
}

FileGroup file_group(MPI_Comm comm, const NodeMap& nodes, const Target& t, const Decomposition& d) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  FileGroup f;
  std::string path = t.path;
  collectively(comm, [&] {
    if (t.node_local) {
      if (t.layout == Layout::shared) {
        throw_usage(
            "--node-local needs --file-per-node or --file-per-process: a shared file cannot live on "
            "node-local storage");
      }
      path = (std::filesystem::path(node_local_dir(nodes.node)) / std::filesystem::path(t.path).filename()).string();
    }
  });
  char suffix[24];
  const unsigned long long local = d.local_bytes();
  switch (t.layout) {
    case Layout::shared:
      f.path = path;
      f.comm = comm;
      f.creator = rank == 0;
      f.bytes_needed = d.global_bytes();
      f.file_bytes = d.global_bytes();
      f.files = 1;
      break;
    case Layout::file_per_process:
      std::snprintf(suffix, sizeof suffix, ".%08d", rank);
      f.path = path + suffix;
      f.comm = MPI_COMM_SELF;
      f.raw_layout = false;
      f.bytes_needed = local;
      f.file_bytes = local;
      f.files = size;
      break;
    case Layout::file_per_node: {
      std::snprintf(suffix, sizeof suffix, ".node%05d", nodes.node);
      f.path = path + suffix;
      f.comm = nodes.node_comm.get();
      f.raw_layout = false;
      unsigned long long before = 0;
      MPI_Exscan(&local, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, f.comm);
      f.base = nodes.local_rank == 0 ? 0 : before;
      f.bytes_needed = f.base + local;
      unsigned long long node_bytes = 0;
      MPI_Allreduce(&local, &node_bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, f.comm);
      f.file_bytes = node_bytes;
      f.creator = nodes.local_rank == 0;
      f.files = nodes.node_count;
      break;
    }
  }
  return f;
}

uint64_t file_offset(const FileGroup& f, const Decomposition& d, int var, uint64_t elem_begin, uint64_t mem_offset) {
  if (!f.raw_layout) return f.base + mem_offset;
  return d.variable_offset(var) + elem_begin * elem_size(d.variables[static_cast<size_t>(var)].type);
}

void extend_to_extent(const FileGroup& f) {
  if (!f.creator) return;
  struct stat st {};
  if (::stat(f.path.c_str(), &st) != 0) throw_system("cannot stat \"" + f.path + "\" to size it", errno);
  if (static_cast<uint64_t>(st.st_size) >= f.file_bytes) return;
  if (::truncate(f.path.c_str(), static_cast<off_t>(f.file_bytes)) != 0) {
    throw_system("cannot extend \"" + f.path + "\" to the decomposition's " + std::to_string(f.file_bytes) + " bytes",
                 errno);
  }
}

namespace {

// The file's length against what it must hold: FileGroup::file_bytes (a container too: it holds
// the data besides its metadata). `after_write`: the post-condition of a write, else the
// precondition of a read. False when the file is missing but an index stands for it (subfiles).
void check_length(const FileGroup& f, bool raw_file, bool indexed, bool after_write) {
  if (!f.creator) return;
  struct stat st {};
  if (::stat(f.path.c_str(), &st) != 0) {
    const int err = errno;
    if (indexed && ::stat(index_path(f.path).c_str(), &st) == 0) return;  // subfiles, sized by their commit
    throw_system(after_write ? "after the write, \"" + f.path + "\" cannot be found (the write did not leave its file)"
                             : "cannot read \"" + f.path + "\"",
                 err);
  }
  if (static_cast<uint64_t>(st.st_size) >= f.file_bytes) return;
  const std::string holds = "\"" + f.path + "\" holds " + std::to_string(st.st_size) + " bytes but " +
                            (raw_file ? "the decomposition spans " : "its data alone is ") +
                            std::to_string(f.file_bytes);
  if (after_write) {
    // PnetCDF under OMPIO has returned success from a write that a full disk cut short, leaving
    // 2 MiB of 7.6.
    throw_runtime("after the write, " + holds +
                  (raw_file ? " (the write left it short of the decomposition's extent)"
                            : " (the write did not store it all, whatever the library reported)") +
                  no_space_note(f.path));
  }
  // PnetCDF reads past the end of a truncated file as if it held zeros.
  throw_runtime(holds + " (the file is shorter than the decomposition: truncated, or not this run's output)");
}

}  // namespace

void check_written(const FileGroup& f, bool raw_file, bool indexed) { check_length(f, raw_file, indexed, true); }

void check_readable(const FileGroup& f, bool raw_file, bool indexed) { check_length(f, raw_file, indexed, false); }

void remove_output(const BackendContext& ctx) {
  if (!ctx.file.creator) return;
  const std::string& path = ctx.file.path;
  // The engine's index describes the output it wrote; any new write makes it stale.
  for (const std::string& p : {path, index_path(path)}) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 && errno == ENOENT)
      continue;  // nothing to remove (even on a read-only file system)
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) {
      throw_system("cannot remove the previous output \"" + p + "\"", errno);
    }
  }
}

}  // namespace strata
