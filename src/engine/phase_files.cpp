// The files of a phase: their names (the output, partial files, subfiles, node-local copies),
// opening them, sizing subfiles, the output's index.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <vector>

#include "arch/node_local.hpp"
#include "common/error.hpp"
#include "engine/phase_impl.hpp"

namespace strata {

// The files of the phase: written, one shared file or one per group of partitions; read,
// what the output's index lists (or the one file). Local part of a collective step.
FileSet PhaseImpl::choose_files(std::vector<SubFile> listed) {
  std::vector<SubFile> files;
  if (mode_ == PhaseMode::read) {
    const bool subfiled = listed.size() > 1 || (!listed.empty() && listed[0].path != path_);
    FileSet set(std::move(listed), subfiled);
    set.check_contiguous("index \"" + index_path(path_) + "\"");
    return set;
  }
  if (options_.tiers.node_local && plan_.partitions() > 0) return node_local_files();  // tiers
  const std::string tail = commit_ ? kPartialSuffix : "";                              // committed at close
  if (options_.subfile_group == 0 || plan_.partitions() == 0) {
    files.push_back({path_ + tail, 0, UINT64_MAX, -1});
    return FileSet(std::move(files), false);
  }
  const size_t parts = static_cast<size_t>(plan_.partitions());
  for (size_t p = 0, f = 0; p < parts; p += options_.subfile_group, ++f) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".subfile.%05zu", f);
    const size_t next = p + options_.subfile_group;
    files.push_back(
        {path_ + suffix + tail, p == 0 ? 0 : plan_.start[p], next < parts ? plan_.start[next] : UINT64_MAX, -1});
  }
  files.front().begin = plan_.start[0];
  return FileSet(std::move(files), true);
}

// Rank 0's list of files, for every rank (an empty list means the one file at path_).
std::vector<SubFile> PhaseImpl::share_from_rank0(std::vector<SubFile> files) {
  std::string text;
  if (rank_ == 0) {
    for (const auto& f : files) text += f.path + '\n' + std::to_string(f.begin) + '\n' + std::to_string(f.end) + '\n';
  }
  unsigned long long n = text.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm_);
  text.resize(n);
  MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, comm_);
  std::vector<SubFile> out;
  std::istringstream in(text);
  std::string path, begin, end;
  while (std::getline(in, path) && std::getline(in, begin) && std::getline(in, end)) {
    out.push_back({path, std::stoull(begin), std::stoull(end), -1});
  }
  if (out.empty()) out.push_back({path_, 0, UINT64_MAX, -1});
  return out;
}

// Opens the files this rank touches: its aggregation runs and direct runs; rank 0 also opens
// a single shared file so that it exists (write) or is checked (read). Local part of a
// collective step.
void PhaseImpl::open_file() {
  // This node's directory, checked (a link or another user's folder is refused) inside the
  // step's agreement, so a refusal on one node reaches every rank before any byte is written.
  if (options_.tiers.node_local && mode_ == PhaseMode::write) node_local_dir(engine_.nodes.node);
  std::vector<size_t> touched;
  auto touch = [&](uint64_t global, uint64_t length) {
    files_.split(global, length, [&](const SubFile& f, uint64_t, uint64_t, uint64_t) {
      const size_t i = files_.index_of(f.begin);
      if (std::find(touched.begin(), touched.end(), i) == touched.end()) touched.push_back(i);
    });
  };
  for (const RoundIo& round : round_io()) {
    for (const RoundSpan& r : round.spans) touch(r.file_offset, r.length);
  }
  for (const StreamExtent& d : direct_) touch(d.file_offset, d.length);
  if (rank_ == 0 && !files_.subfiled() && touched.empty()) touched.push_back(0);
  // A node-local write: every aggregator's own file, even one its partition leaves empty.
  if (options_.tiers.node_local && mode_ == PhaseMode::write && my_partition_ >= 0) {
    const size_t mine = static_cast<size_t>(my_partition_);
    if (std::find(touched.begin(), touched.end(), mine) == touched.end()) touched.push_back(mine);
  }
  // A read-modify-write (data sieving, in place) reads what it writes.
  bool sieves = false;
  for (const RoundIo& round : round_io()) {
    for (const RoundSpan& r : round.spans) sieves = sieves || !r.pieces.empty();
  }
  // strata_target=in-place writes a file the caller made (a program's MPI-IO file): never created here.
  const int create = options_.tiers.in_place ? 0 : O_CREAT;
  // A node-local copy is written in place, and no byte of an earlier copy may survive where this
  // phase declares nothing (a drain copies what the files hold): each file's aggregator empties
  // it, unless the ranks' bytes tile the domain (every byte is written again: its pages are
  // reused, cheaper than new ones), and cuts it to its size when the write starts
  // (start_node_file). The owners that write into it too (owners_local_) open it as it is, and
  // write only after the step's agreement.
  const int flags = mode_ == PhaseMode::write ? ((sieves ? O_RDWR : O_WRONLY) | create) : O_RDONLY;
  for (size_t i : touched) {
    const bool mine = options_.tiers.node_local && mode_ == PhaseMode::write && static_cast<int>(i) == my_partition_;
    const bool fresh = mine && !node_local_tiled_;
    if (options_.tiers.in_place && ::access(files_.files()[i].path.c_str(), F_OK) != 0 && errno == ENOENT) {
      throw_usage("hint strata_target=in-place writes into an existing file, and \"" + files_.files()[i].path +
                  "\" does not exist");
    }
    files_.open(i, flags | (fresh ? O_TRUNC : 0));
  }
  // Aggregation rounds and direct runs have a thread each, so a long direct write never
  // delays the buffer an aggregation round waits for.
  // A committed write hashes what it writes while it is in memory (the index's checksums).
  const uint64_t hash_chunk = commit_ || indexes_in_place() ? options_.checksum_chunk : 0;
  // A write that close() will fsync starts its writeback piece by piece as it goes.
  const uint64_t behind = mode_ == PhaseMode::write && syncs_data() ? kWriteBehindBytes : 0;
  if (my_partition_ >= 0 && !owners_local_) io_ = std::make_unique<IoWorker>(files_, hash_chunk, true, behind);
  // Without aggregation there is nothing for the direct writes to overlap: no thread.
  if (!direct_.empty()) {
    direct_io_ = std::make_unique<IoWorker>(files_, hash_chunk, plan_.partitions() > 0 && !owners_local_, behind);
  }
}

namespace {

// An in-place write's index: the ranges every rank wrote, with their hashes (none if two overlap:
// a range written twice in one phase has no single content to check).
void add_in_place_checksums(OutputIndex& index, const std::vector<uint64_t>& hashes, uint64_t chunk) {
  for (size_t k = 0; k + 3 < hashes.size(); k += 4) {
    if (hashes[k] >= index.files.size()) throw_runtime("internal: a checksum names file " + std::to_string(hashes[k]));
    index.files[hashes[k]].ranges.push_back({hashes[k + 1], hashes[k + 2], hashes[k + 3]});
  }
  for (IndexedFile& f : index.files) {
    std::sort(f.ranges.begin(), f.ranges.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < f.ranges.size(); ++i) {
      if (f.ranges[i].offset < f.ranges[i - 1].offset + f.ranges[i - 1].length) {
        for (IndexedFile& g : index.files) g.ranges.clear();
        return;
      }
    }
  }
  index.checksum_chunk = chunk;
  index.checksum_ranges = true;
  index.in_place = true;
}

}  // namespace

void PhaseImpl::gather_written_hashes() {
  std::vector<uint64_t> mine;
  mine.reserve(4 * written_hashes_.size());
  for (const WrittenHash& h : written_hashes_) mine.insert(mine.end(), {h.file, h.offset, h.length, h.hash});
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(rank_ == 0 ? static_cast<size_t>(size_) : 0), displs(counts.size());
  check_mpi(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_), "MPI_Gather");
  int total = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    displs[r] = total;
    total += counts[r];
  }
  in_place_hashes_.assign(static_cast<size_t>(total), 0);
  check_mpi(MPI_Gatherv(mine.data(), n, MPI_UINT64_T, in_place_hashes_.data(), counts.data(), displs.data(),
                        MPI_UINT64_T, 0, comm_),
            "MPI_Gatherv");
  stats_.collectives += 2;
}

// Rank 0, after a write: subfiles cut to their final size (no stale tail from an older,
// larger output) and the index. Local part of a collective step.
void PhaseImpl::finish_output() {
  if (rank_ != 0 || mode_ != PhaseMode::write) return;
  if (options_.tiers.in_place) return;  // the caller's file: no index, no size of ours
  OutputIndex index = make_index();
  if (indexes_in_place()) add_in_place_checksums(index, in_place_hashes_, options_.checksum_chunk);
  if (options_.tiers.node_local) {
    // sized by their aggregators at open (size_node_file): on other nodes, rank 0 cannot see them
  } else if (files_.subfiled()) {
    for (const SubFile& f : files_.files()) size_subfile(f, false);
  } else {
    extend_in_place();
  }
  write_output_index(index_output(), index);
}

// The index of what this phase wrote, without sizes and checksums. Files are named by their
// final names, relative to the index's folder.
OutputIndex PhaseImpl::make_index() const {
  OutputIndex index;
  for (const auto& v : vars_) index.variables.push_back({v.name, v.element_size, v.dims, v.file_offset});
  index.bytes = declared_bytes_;
  index.writer_ranks = size_;
  for (const SubFile& f : files_.files()) {
    // Node-local copies are named by their absolute paths (they are not beside the index).
    const std::string name =
        options_.tiers.node_local ? f.path : std::filesystem::path(final_path(f.path)).filename().string();
    index.files.push_back({name, f.begin, f.end, std::nullopt, {}, {}, {}});
  }
  return index;
}

// Every listed subfile exists (one no aggregator wrote is created empty) at its size, which
// it returns; with `sync`, a subfile whose size changed is fsynced. Rank 0.
uint64_t PhaseImpl::declared_end() const {
  uint64_t end = 0;
  for (const PhaseVariable& v : vars_) end = std::max(end, v.file_offset + v.bytes());
  return end;
}

uint64_t PhaseImpl::size_subfile(const SubFile& f, bool sync) const {
  const uint64_t hi = std::min(f.end, std::max(plan_.hi, declared_end()));
  const uint64_t size = hi > f.begin ? hi - f.begin : 0;
  const int fd = ::open(f.path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw_system("cannot create \"" + f.path + "\"", errno);
  struct stat st {};
  int rc = ::fstat(fd, &st);
  const bool changed = rc == 0 && static_cast<uint64_t>(st.st_size) != size;
  if (rc == 0 && changed) rc = ::ftruncate(fd, static_cast<off_t>(size));
  if (rc == 0 && changed && sync) rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw_system("cannot set the size of \"" + f.path + "\"", err);
  return size;
}

// A node-local write's own partition file, opened by its aggregator (the one rank that sees
// it), when the write starts (after the open's agreement: a refused open elsewhere leaves it as
// it was): cut or extended to its final size, and, rewritten in place, the bytes before the
// first declared one (the partition's aligned start) cleared. Then a drain may follow the write
// (follow_with_drain). No rank writes past that size or before that start meanwhile.
void PhaseImpl::start_node_file() {
  if (mode_ != PhaseMode::write || !options_.tiers.node_local || my_partition_ < 0) return;
  const SubFile& mine = files_.files()[static_cast<size_t>(my_partition_)];
  size_node_file(mine);
  if (!owners_local_) return;
  follow_with_drain(mine);
  if (drain_ && drain_->follower && direct_io_) {  // the copy follows this rank's writes into its file
    direct_io_->on_written([f = drain_->follower, p = static_cast<size_t>(my_partition_)](size_t file, uint64_t end) {
      if (file == p) f->advance(end);
    });
  }
}

void PhaseImpl::size_node_file(const SubFile& f) const {
  const uint64_t hi = std::min(f.end, std::max(plan_.hi, declared_end()));
  const uint64_t size = hi > f.begin ? hi - f.begin : 0;
  int rc = ::ftruncate(f.fd, static_cast<off_t>(size));
  const uint64_t head = plan_.lo > f.begin ? std::min(plan_.lo, hi) - f.begin : 0;
  if (rc == 0 && node_local_tiled_ && head > 0) {
    rc = ::fallocate(f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(head));
    if (rc != 0 && errno == EOPNOTSUPP) {  // a file system without holes: zeros (less than a block)
      const std::vector<char> zeros(static_cast<size_t>(head), 0);
      rc = ::pwrite(f.fd, zeros.data(), zeros.size(), 0) == static_cast<ssize_t>(head) ? 0 : -1;
    }
  }
  if (rc != 0) throw_system("cannot set the size of \"" + f.path + "\"", errno);
}

// Rank 0, after a write in place: a regular file shorter than the declared variables (their
// last elements belong to no rank) is extended to their end; it is never shortened (another
// tool's file, an HDF5 container, may hold more than the variables).
void PhaseImpl::extend_in_place() const {
  const std::string& path = files_.files().front().path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;  // /dev/null, a device: nothing to size
  const uint64_t end = declared_end();
  if (static_cast<uint64_t>(st.st_size) < end && ::truncate(path.c_str(), static_cast<off_t>(end)) != 0) {
    throw_system("cannot extend \"" + path + "\" to the end of its variables (" + std::to_string(end) + " bytes)",
                 errno);
  }
}

// A write to node-local storage: one file per partition, in its aggregator's node directory.
FileSet PhaseImpl::node_local_files() {  // the directories are made and checked by open_file()
  const std::string name = std::filesystem::path(path_).filename().string();
  std::vector<SubFile> files;
  const size_t parts = static_cast<size_t>(plan_.partitions());
  for (size_t p = 0; p < parts; ++p) {
    const int node = engine_.nodes.node_of_rank[static_cast<size_t>(plan_.aggregator[p])];
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".part.%05zu", p);
    const auto dir = std::filesystem::absolute(std::filesystem::path(node_local_root()) / std::to_string(node));
    files.push_back({(dir / (name + suffix)).string(), p == 0 ? 0 : plan_.start[p],
                     p + 1 < parts ? plan_.start[p + 1] : UINT64_MAX, -1});
  }
  files.front().begin = plan_.start[0];
  return FileSet(std::move(files), true);
}

// fsync of every file of the phase that exists, by one rank of each node.
void PhaseImpl::sync_files_of_node() const {
  for (const SubFile& f : files_.files()) {
    const int fd = ::open(f.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;  // a subfile no aggregator wrote: created empty later
      throw_system("cannot open \"" + f.path + "\" to sync it", errno);
    }
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) throw_system("fsync of \"" + f.path + "\" failed", err);
  }
}

}  // namespace strata
