// Crash-consistent commit of an engine output: partial files, intent record, renames, and the
// chunk checksums (XXH3-64 from libxxhash) the index carries.
#include "engine/commit.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "common/error.hpp"
#include "common/xxh3.hpp"
#include "engine/output_index.hpp"
#include "engine/phase_impl.hpp"

namespace strata::engine {

namespace {

constexpr uint64_t kReadBytes = uint64_t{1} << 20;

std::string folder_of(const std::string& output) {
  const auto dir = std::filesystem::path(output).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Moves `name` aside to `name.strata-retired` when it exists; true when it did. A rename onto a
// name that exists makes ext4 (auto_da_alloc) write the renamed file's delayed blocks inside
// rename() — 10–15 ms for 16 MiB here — so a commit never renames onto an existing name: the old
// file leaves first, under a name that does not exist either.
// `clear_second`: remove a second name left by a crash first (roll_forward); a commit's own
// second names are gone already (recycled, removed, or cleared with the folder's leftovers),
// and a rename would replace one anyway, only more slowly.
bool retire(const std::string& name, bool clear_second) {
  const std::string second = name + kRetiredSuffix;
  if (clear_second) ::unlink(second.c_str());
  if (std::rename(name.c_str(), second.c_str()) == 0) return true;
  if (errno == ENOENT) return false;
  throw_system("cannot move \"" + name + "\" aside to \"" + second + "\"", errno);
}

// The renames of a commit whose intent record is written, then the record becomes the index.
// Each file: the old one aside, the partial one in its place — only while the partial one
// exists (a commit completed after a crash finds some renamed already, and must not move
// those). Between the two renames the name is briefly absent; a crash there is completed by
// roll_forward() like any other. `retired` receives the second names of the old files (and
// of the old index unless `drop_old_index`: then the old index becomes the spare, for the next
// commit's intent record, and is not listed). `after_crash`: completing an interrupted commit.
void finish_commit(const std::string& output, const OutputIndex& index, bool sync, bool drop_old_index,
                   std::vector<std::string>* retired, bool after_crash = false) {
  for (const IndexedFile& f : index.files) {
    const std::string final_name = resolve_indexed_path(output, f.path);
    const std::string partial = partial_path(final_name);
    if (::access(partial.c_str(), F_OK) != 0) continue;  // renamed already (by the commit this one completes)
    if (retire(final_name, after_crash) && retired != nullptr) retired->push_back(final_name + kRetiredSuffix);
    if (std::rename(partial.c_str(), final_name.c_str()) != 0) {
      throw_system("cannot rename \"" + partial + "\" to \"" + final_name + "\"", errno);
    }
  }
  const std::string intent = intent_path(output), index_file = index_path(output);
  if (drop_old_index) {
    // Kept as the spare (no unlink: creating the next intent record's inode would cost more
    // than the whole rest of a small commit on ext4).
    if (std::rename(index_file.c_str(), spare_index_path(output).c_str()) != 0) ::unlink(index_file.c_str());
  } else if (retire(index_file, after_crash) && retired != nullptr) {
    retired->push_back(index_file + kRetiredSuffix);
  }
  if (std::rename(intent.c_str(), index_file.c_str()) != 0) {
    throw_system("cannot rename the commit record \"" + intent + "\" to \"" + index_file + "\"", errno);
  }
  if (sync) sync_directory(folder_of(output));
}

}  // namespace

std::string partial_path(const std::string& file) { return file + kPartialSuffix; }

std::string final_path(const std::string& file) {
  return ends_with(file, kPartialSuffix) ? file.substr(0, file.size() - std::string(kPartialSuffix).size()) : file;
}

std::string intent_path(const std::string& output) { return output + ".strata-commit.json"; }

std::string spare_index_path(const std::string& output) { return index_path(output) + kRetiredSuffix; }

std::vector<std::string> leftover_partials(const std::string& output, const std::string& suffix) {
  return leftovers(output, {suffix})[0];
}

std::vector<std::vector<std::string>> leftovers(const std::string& output, const std::vector<std::string>& suffixes) {
  const std::string name = std::filesystem::path(output).filename().string();
  std::vector<std::vector<std::string>> found(suffixes.size());
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder_of(output), ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(name, 0) != 0) continue;
    for (size_t i = 0; i < suffixes.size(); ++i) {
      const std::string& suffix = suffixes[i];
      if (!ends_with(n, suffix)) continue;
      if (n == name + suffix || n == name + ".strata-index.json" + suffix || n.rfind(name + ".subfile.", 0) == 0) {
        found[i].push_back(e.path().string());
      }
    }
  }
  for (auto& f : found) std::sort(f.begin(), f.end());
  return found;
}

uint64_t hash_file_range(const std::string& path, uint64_t offset, uint64_t length) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_system("cannot open \"" + path + "\" to checksum it", errno);
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(), XXH3_freeState);
  if (!state || XXH3_64bits_reset(state.get()) != XXH_OK) {
    ::close(fd);
    throw_runtime("cannot create an XXH3 state");
  }
  std::vector<char> buffer(static_cast<size_t>(std::min(length, kReadBytes)));
  uint64_t done = 0;
  while (done < length) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(length - done, buffer.size()));
    const ssize_t n = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      ::close(fd);
      if (err != 0) throw_system("cannot read \"" + path + "\" to checksum it", err);
      throw_runtime("\"" + path + "\" ends at byte " + std::to_string(offset + done) + ", before " +
                    std::to_string(offset + length));
    }
    XXH3_64bits_update(state.get(), buffer.data(), static_cast<size_t>(n));
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  return XXH3_64bits_digest(state.get());
}

std::vector<uint64_t> hash_ranges(MPI_Comm comm, const std::vector<std::string>& paths,
                                  const std::vector<FileRange>& ranges) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<uint64_t> all(ranges.size(), 0);
  collectively(comm, [&] {
    for (size_t i = static_cast<size_t>(rank); i < ranges.size(); i += static_cast<size_t>(size)) {
      all[i] = hash_file_range(paths[ranges[i].file], ranges[i].offset, ranges[i].length);
    }
  });
  // Each range is hashed by one rank, zero elsewhere: a bitwise OR gathers them.
  if (!all.empty()) MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_UINT64_T, MPI_BOR, comm);
  return all;
}

uint64_t zero_hash(uint64_t length) {
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(), XXH3_freeState);
  if (!state || XXH3_64bits_reset(state.get()) != XXH_OK) throw_runtime("cannot create an XXH3 state");
  static const std::vector<char> zeros(static_cast<size_t>(kReadBytes), 0);
  for (uint64_t done = 0; done < length;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(length - done, zeros.size()));
    XXH3_64bits_update(state.get(), zeros.data(), n);
    done += n;
  }
  return XXH3_64bits_digest(state.get());
}

std::vector<std::vector<uint64_t>> hash_chunks(MPI_Comm comm, const std::vector<std::string>& paths,
                                               const std::vector<uint64_t>& sizes, uint64_t chunk) {
  std::vector<FileRange> ranges;
  std::vector<size_t> first(paths.size() + 1, 0);  // the first range of each file
  for (size_t f = 0; f < paths.size(); ++f) {
    for (uint64_t offset = 0; offset < sizes[f]; offset += chunk)
      ranges.push_back({f, offset, std::min(chunk, sizes[f] - offset)});
    first[f + 1] = ranges.size();
  }
  const std::vector<uint64_t> all = hash_ranges(comm, paths, ranges);
  std::vector<std::vector<uint64_t>> out(paths.size());
  for (size_t f = 0; f < paths.size(); ++f)
    out[f].assign(all.begin() + static_cast<long>(first[f]), all.begin() + static_cast<long>(first[f + 1]));
  return out;
}

std::vector<std::string> commit_output(const std::string& output, const OutputIndex& index, bool sync, bool same_files,
                                       bool spare, const std::function<void()>& at_commit_point) {
  // Written in place: a crash while writing it leaves a record that does not parse, and then no
  // rename has happened yet (roll_forward() drops such a record). Into the spare and renamed
  // when there is one: a crash while writing leaves a damaged spare (a retired name that the
  // next write removes), never a record.
  if (spare) {
    write_index_file(intent_path(output), index, sync, true, spare_index_path(output));
  } else {
    write_index_file(intent_path(output), index, sync, false);
  }
  if (sync) sync_directory(folder_of(output));
  if (at_commit_point) at_commit_point();
  // The files replaced keep their second name until the caller removes them (in the
  // background: freeing a large file's pages takes milliseconds). Unless the old index lists the
  // same files (then nothing can be dropped), it says which of its files the new index dropped:
  // those are moved aside to their second names now, so that nothing removed later, in the
  // background, is ever a name another phase (of this engine or another) may use by then. The
  // old index itself goes now, for the same reason (its second name is the spare's).
  std::vector<std::string> retired;
  finish_commit(output, index, sync, same_files, &retired);
  const std::string old_index = spare_index_path(output);
  auto listed = std::find(retired.begin(), retired.end(), old_index);
  if (listed != retired.end()) {
    retired.erase(listed);
    std::optional<OutputIndex> old;
    try {
      old = read_index_file(old_index);
    } catch (const Error&) {  // a damaged index: its files are left alone
    }
    for (const IndexedFile& f : old ? old->files : std::vector<IndexedFile>{}) {
      if (std::filesystem::path(f.path).is_absolute()) continue;  // node-local copies are not ours
      const bool kept =
          std::any_of(index.files.begin(), index.files.end(), [&](const IndexedFile& n) { return n.path == f.path; });
      if (kept) continue;
      const std::string name = resolve_indexed_path(output, f.path);
      if (std::rename(name.c_str(), (name + kRetiredSuffix).c_str()) == 0) retired.push_back(name + kRetiredSuffix);
    }
    ::unlink(old_index.c_str());
  }
  return retired;
}

void remove_retired(const std::vector<std::string>& retired) {
  for (const std::string& p : retired) ::unlink(p.c_str());
}

bool roll_forward(const std::string& output) {
  std::optional<OutputIndex> intent;
  try {
    intent = read_index_file(intent_path(output));
  } catch (const Error&) {
    // A record cut short by a crash while it was written: no file was renamed yet, so the
    // previous output is whole and the record goes (its partial files go with the next write).
    ::unlink(intent_path(output).c_str());
    return false;
  }
  if (!intent) return false;
  ::unlink((output + ".strata-drain.json").c_str());  // a drain whose commit point was passed
  finish_commit(output, *intent, true, false, nullptr, true);
  return true;
}

void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_system("cannot open the folder \"" + dir + "\" to sync it", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw_system("fsync of the folder \"" + dir + "\" failed", err);
}

}  // namespace strata::engine

// ---- The commit as the Phase runs it ----------------------------------------------------

namespace strata {

// Rank 0, before the plan's agreement: whether this phase commits (engine/commit.hpp). A
// commit interrupted after its intent record is completed first (a read then sees it, a
// write replaces it); a write removes the partial files a killed write left. Files that are
// not regular (a device) and node-local targets are written in place.
bool PhaseImpl::prepare_commit() {
  if (options_.tiers.dry_run) return false;  // a dry run touches no file
  // The caller's own file (strata_target=in-place): no commit record, partial or index of ours
  // to look at or remove.
  if (options_.tiers.in_place) return false;
  // An output this engine left clean has no intent record, no stranger's partial file, and is
  // a regular file: a read needs no check, a write only the steps below it.
  if (!clean_) roll_forward(path_);
  if (mode_ == PhaseMode::write) engine_.clean.erase(path_);  // clean again once this write commits
  if (mode_ != PhaseMode::write || options_.commit == PhaseOptions::Commit::in_place || options_.tiers.node_local)
    return false;
  struct stat st {};
  if (!clean_ && ::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return false;
  engine_.remove_later({});  // the last commit's background removals are over
  std::vector<std::vector<std::string>> left(2);
  if (!clean_) left = leftovers(path_, {kPartialSuffix, kRetiredSuffix});  // one look at the folder
  for (const std::string& p : left[0]) {
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) throw_system("cannot remove the uncommitted \"" + p + "\"", errno);
  }
  // The previous output's old file, kept by this engine's last commit of the same output, is
  // this write's partial file: overwriting its pages costs less than freeing them and
  // allocating new ones (commit_index() then cuts it to size and clears what was not written).
  // Only for one shared file, whose name is known before the plan.
  const std::string retired = path_ + kRetiredSuffix;
  recycled_ = options_.subfile_group == 0 && engine_.take_retired(retired) &&
              std::rename(retired.c_str(), partial_path(path_).c_str()) == 0;
  if (clean_ && !recycled_) ::unlink(partial_path(path_).c_str());  // unscanned: start from no file
  for (const std::string& p : left[1]) {                            // a commit's leftovers (not the one just taken)
    if (!(recycled_ && p == retired)) ::unlink(p.c_str());
  }
  return true;
}

// Rank 0, after an agreed failure or a phase closed unwritten: the partial files go, unless
// a commit record names them (a commit that failed half-way rolls forward instead).
void PhaseImpl::discard_partials() const {
  if (recycled_ && !commit_ && rank_ == 0) ::unlink(partial_path(path_).c_str());  // failed before the agreement
  if (!commit_ || rank_ != 0) return;
  struct stat st {};
  if (::stat(intent_path(path_).c_str(), &st) == 0) return;
  for (const SubFile& f : files_.files()) ::unlink(f.path.c_str());
}

// After a write (`failure`: this rank's, not agreed yet; rank 0's commit failure is added to
// it): the partial files synced once per node (unless strata_commit=nosync), then every rank's
// checksums of what it wrote (hashed on its I/O threads while the data was in memory) and its
// statistics sent to rank 0 in one message, received in any order (no collective is needed to
// learn the counts first). Rank 0 sizes the files and commits when every part went well, then
// broadcasts the reduced statistics, its failure included: one gather and one broadcast are
// the whole agreement, and no byte is read back.
void PhaseImpl::commit_written(std::optional<Error>& failure, double t0, double* reduced) {
  const bool sync = syncs_data();
  if (sync) {
    // Every rank's data must be in its node's cache before one rank per node syncs the files:
    // a rank still writing after the fsync would leave bytes the commit calls durable undone.
    // One small reduction; the messages below carry each rank's outcome as before.
    int bad = failure ? 1 : 0, any = 0;
    check_mpi(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
    ++stats_.collectives;
    try {
      if (!failure && any == 0 && engine_.nodes.local_rank == 0) sync_files_of_node();
    } catch (const Error& e) {
      failure = e;
    }
  }
  constexpr int kTag = 0x5717;
  std::vector<uint64_t> all;
  for (const WrittenHash& h : written_hashes_) all.insert(all.end(), {h.file, h.offset, h.length, h.hash});
  // The holes this aggregator's whole spans filled with zeros, per file, marked in the file word.
  for (const RoundIo& round : round_io()) {
    for (const auto& [global, length] : round.holes) {
      files_.split(global, length, [&](const SubFile& f, uint64_t local, uint64_t n, uint64_t) {
        all.insert(all.end(), {files_.index_of(f.begin) | kHoleMark, local, n, 0});
      });
    }
  }
  if (rank_ != 0) {
    // The message: checksum quadruples (and hole quadruples), the statistics (as bits), and 1
    // when this part went well.
    stats_.close_s = MPI_Wtime() - t0;
    double d[kStats];
    stats_array(failure, d);
    const size_t at = all.size();
    all.resize(at + kStats);
    std::memcpy(all.data() + at, d, sizeof d);
    all.push_back(failure ? 0 : 1);
    check_mpi(MPI_Send(all.data(), static_cast<int>(all.size()), MPI_UINT64_T, 0, kTag, comm_), "MPI_Send");
  } else {
    double acc[kStats] = {};
    bool everyone_ok = !failure;
    std::vector<uint64_t> got;
    for (int r = 1; r < size_; ++r) {
      MPI_Status st;
      int n = 0;
      check_mpi(MPI_Probe(MPI_ANY_SOURCE, kTag, comm_, &st), "MPI_Probe");
      MPI_Get_count(&st, MPI_UINT64_T, &n);
      got.resize(static_cast<size_t>(n));
      check_mpi(MPI_Recv(got.data(), n, MPI_UINT64_T, st.MPI_SOURCE, kTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
      if (n < kStats + 1) throw_runtime("internal: a commit message of " + std::to_string(n) + " words");
      everyone_ok = everyone_ok && got.back() == 1;
      double theirs[kStats];
      std::memcpy(theirs, got.data() + (n - 1 - kStats), sizeof theirs);
      EngineImpl::reduce_stats(theirs, acc, kStats);
      all.insert(all.end(), got.begin(), got.end() - 1 - kStats);
    }
    const double c0 = MPI_Wtime();
    if (everyone_ok && !failure) {
      try {
        commit_index(all, sync);
      } catch (const Error& e) {
        failure = e;
      } catch (const std::exception& e) {
        failure = Error(ErrorKind::runtime, e.what());
      }
    }
    stats_.commit_s = MPI_Wtime() - c0;
    stats_.close_s = MPI_Wtime() - t0;
    double mine[kStats];
    stats_array(failure, mine);
    EngineImpl::reduce_stats(mine, acc, kStats);
    std::copy(acc, acc + kStats, reduced);
  }
  check_mpi(MPI_Bcast(reduced, kStats, MPI_DOUBLE, 0, comm_), "MPI_Bcast");
}

// Rank 0: the files' sizes and the gathered checksums (file, offset, length, hash quadruples)
// in the index, then the commit itself.
void PhaseImpl::commit_index(const std::vector<uint64_t>& hashes, bool sync) const {
  const std::vector<SubFile>& files = files_.files();
  OutputIndex index = make_index();
  index.checksum_chunk = options_.checksum_chunk;
  index.checksum_ranges = true;
  for (size_t k = 0; k + 3 < hashes.size(); k += 4) {
    const bool hole = (hashes[k] & kHoleMark) != 0;
    const uint64_t file = hashes[k] & ~kHoleMark;
    if (file >= files.size()) throw_runtime("internal: a checksum names file " + std::to_string(file));
    if (hole) {
      index.files[file].holes.emplace_back(hashes[k + 1], hashes[k + 2]);
    } else {
      index.files[file].ranges.push_back({hashes[k + 1], hashes[k + 2], hashes[k + 3]});
    }
  }
  for (IndexedFile& f : index.files) {
    std::sort(f.holes.begin(), f.holes.end());
    std::sort(f.ranges.begin(), f.ranges.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < f.ranges.size(); ++i) {
      if (f.ranges[i].offset < f.ranges[i - 1].offset + f.ranges[i - 1].length) {
        throw_runtime("internal: two writes of \"" + f.path + "\" overlap at byte " +
                      std::to_string(f.ranges[i].offset));
      }
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (files_.subfiled()) {
      index.files[i].size = size_subfile(files[i], sync);
    } else if (recycled_) {
      index.files[i].size = clear_unwritten(files[i].path, index.files[i].ranges, declared_end(), sync);
    } else {
      // A new file: as long as its variables, trailing elements no rank owns included.
      struct stat st {};
      if (::stat(files[i].path.c_str(), &st) != 0) throw_system("cannot stat \"" + files[i].path + "\"", errno);
      const uint64_t size = std::max<uint64_t>(static_cast<uint64_t>(st.st_size), declared_end());
      index.files[i].size = size;
      if (size > static_cast<uint64_t>(st.st_size) &&
          ::truncate(files[i].path.c_str(), static_cast<off_t>(size)) != 0) {
        throw_system("cannot extend \"" + files[i].path + "\" to the end of its variables", errno);
      }
    }
  }
  engine_.remove_later({});  // the previous commit's removals are over before this one renames
  // When this engine made the output's last commit with the same files, the old index has
  // nothing to say about dropped files: it is replaced, not kept for remove_retired().
  std::vector<std::string> names;
  for (const IndexedFile& f : index.files) names.push_back(f.path);
  const bool same_files = engine_.committed_files(path_) == names;
  const std::string spare = engine::spare_index_path(path_);
  std::vector<std::string> removed = commit_output(path_, index, sync, same_files, engine_.take_retired(spare));
  engine_.remember_committed(path_, std::move(names));
  if (same_files) engine_.keep_retired(spare);  // the old index, the next commit's intent record
  // The old shared file is kept (as PATH.strata-retired) for this engine's next write of PATH.
  const std::string retired = path_ + kRetiredSuffix;
  auto kept = std::find(removed.begin(), removed.end(), retired);
  if (kept != removed.end() && !files_.subfiled()) {
    engine_.keep_retired(retired);
    removed.erase(kept);
  }
  engine_.remove_later(std::move(removed));
  if (!files_.subfiled() && files.size() == 1) engine_.clean[path_] = fs_;  // nothing left behind
}

// Rank 0, a recycled partial file: cut to `end` (the end of the variables, at least the end of
// the last write), and every byte not written (holes between the ranges and after the last)
// cleared, so it reads as a new file would. Its size.
uint64_t PhaseImpl::clear_unwritten(const std::string& path, const std::vector<IndexedFile::Range>& ranges,
                                    uint64_t end, bool sync) const {
  if (!ranges.empty()) end = std::max(end, ranges.back().offset + ranges.back().length);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_system("cannot open \"" + path + "\" to size it", errno);
  int rc = ::ftruncate(fd, static_cast<off_t>(end));
  std::vector<char> zeros;  // only where holes cannot be punched: 1 MiB faulted in costs ~0.4 ms
  uint64_t at = 0;
  for (size_t i = 0; i <= ranges.size() && rc == 0; ++i) {
    const uint64_t stop = i < ranges.size() ? ranges[i].offset : end;
    if (stop > at && ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at),
                                 static_cast<off_t>(stop - at)) != 0) {
      if (zeros.empty()) zeros.assign(1 << 20, 0);
      for (uint64_t z = at; z < stop && rc == 0;) {  // no hole punching here: write zeros
        const ssize_t n = ::pwrite(fd, zeros.data(), std::min<uint64_t>(stop - z, zeros.size()), static_cast<off_t>(z));
        if (n <= 0) rc = -1;
        z += n > 0 ? static_cast<uint64_t>(n) : 0;
      }
    }
    if (i < ranges.size()) at = ranges[i].offset + ranges[i].length;
  }
  if (rc == 0 && sync) rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw_system("cannot size \"" + path + "\"", err);
  return end;
}

}  // namespace strata
