// Crash-consistent commit of an engine output: partial files, intent record, renames, and the
// chunk checksums (XXH3-64 from libxxhash) the index carries.
#include "engine/commit.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "common/error.hpp"
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

// The renames of a commit whose intent record is written, then the record becomes the index.
void finish_commit(const std::string& output, const OutputIndex& index, bool sync) {
  for (const IndexedFile& f : index.files) {
    const std::string final_name = resolve_indexed_path(output, f.path);
    const std::string partial = partial_path(final_name);
    // ENOENT: renamed already (by the interrupted commit this one completes).
    if (std::rename(partial.c_str(), final_name.c_str()) != 0 && errno != ENOENT) {
      throw_system("cannot rename \"" + partial + "\" to \"" + final_name + "\"", errno);
    }
  }
  const std::string intent = intent_path(output), index_file = index_path(output);
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

std::vector<std::string> leftover_partials(const std::string& output) {
  const std::string name = std::filesystem::path(output).filename().string();
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder_of(output), ec)) {
    const std::string n = e.path().filename().string();
    if (!ends_with(n, kPartialSuffix)) continue;
    if (n == name + kPartialSuffix || n.rfind(name + ".subfile.", 0) == 0) found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end());
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

std::vector<std::vector<uint64_t>> hash_chunks(MPI_Comm comm, const std::vector<std::string>& paths,
                                               const std::vector<uint64_t>& sizes, uint64_t chunk) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<size_t> first(paths.size() + 1, 0);  // the first global chunk of each file
  for (size_t f = 0; f < paths.size(); ++f) first[f + 1] = first[f] + static_cast<size_t>((sizes[f] + chunk - 1) / chunk);
  std::vector<uint64_t> all(first.back(), 0);
  collectively(comm, [&] {
    for (size_t f = 0; f < paths.size(); ++f) {
      for (size_t c = first[f]; c < first[f + 1]; ++c) {
        if (static_cast<int>(c % static_cast<size_t>(size)) != rank) continue;
        const uint64_t offset = (c - first[f]) * chunk;
        all[c] = hash_file_range(paths[f], offset, std::min(chunk, sizes[f] - offset));
      }
    }
  });
  // Each chunk is hashed by one rank, zero elsewhere: a bitwise OR gathers them.
  if (!all.empty()) MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_UINT64_T, MPI_BOR, comm);
  std::vector<std::vector<uint64_t>> out(paths.size());
  for (size_t f = 0; f < paths.size(); ++f) out[f].assign(all.begin() + static_cast<long>(first[f]), all.begin() + static_cast<long>(first[f + 1]));
  return out;
}

void commit_output(const std::string& output, const OutputIndex& index, bool sync) {
  std::optional<OutputIndex> old;
  try {
    old = read_output_index(output);
  } catch (const Error&) {  // a damaged old index: replaced, its files left alone
  }
  // The intent record is durable before any rename, so a crash between renames rolls forward.
  write_index_file(intent_path(output), index, sync);
  if (sync) sync_directory(folder_of(output));
  finish_commit(output, index, sync);
  if (!old) return;
  for (const IndexedFile& f : old->files) {
    if (std::filesystem::path(f.path).is_absolute()) continue;  // node-local copies are not ours
    const bool kept = std::any_of(index.files.begin(), index.files.end(), [&](const IndexedFile& n) { return n.path == f.path; });
    if (!kept) ::unlink(resolve_indexed_path(output, f.path).c_str());
  }
}

bool roll_forward(const std::string& output) {
  const auto intent = read_index_file(intent_path(output));
  if (!intent) return false;
  finish_commit(output, *intent, true);
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
bool PhaseImpl::prepare_commit() const {
  if (options_.tiers.dry_run) return false;  // a dry run touches no file
  roll_forward(path_);
  if (mode_ != PhaseMode::write || options_.commit == PhaseOptions::Commit::in_place || options_.tiers.node_local) return false;
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return false;
  for (const std::string& p : leftover_partials(path_)) {
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) throw_system("cannot remove the uncommitted \"" + p + "\"", errno);
  }
  return true;
}

// Rank 0, after an agreed failure or a phase closed unwritten: the partial files go, unless
// a commit record names them (a commit that failed half-way rolls forward instead).
void PhaseImpl::discard_partials() const {
  if (!commit_ || rank_ != 0) return;
  struct stat st {};
  if (::stat(intent_path(path_).c_str(), &st) == 0) return;
  for (const SubFile& f : files_.files()) ::unlink(f.path.c_str());
}

// After a write: every rank's partial files synced (unless strata_commit=nosync), sized,
// checksummed in parallel, then committed by rank 0. Collective.
void PhaseImpl::commit_written() {
  const bool sync = (options_.commit == PhaseOptions::Commit::sync) || options_.fsync;
  const std::vector<SubFile>& files = files_.files();
  std::vector<uint64_t> sizes(files.size(), 0);
  collectively(comm_, [&] {
    if (rank_ == 0) {
      for (size_t i = 0; i < files.size(); ++i) {
        if (files_.subfiled()) {
          sizes[i] = size_subfile(files[i], sync);
        } else {
          struct stat st {};
          if (::stat(files[i].path.c_str(), &st) != 0) throw_system("cannot stat \"" + files[i].path + "\"", errno);
          sizes[i] = static_cast<uint64_t>(st.st_size);
        }
      }
    }
    if (sync && engine_.nodes.local_rank == 0) sync_files_of_node();
  });
  MPI_Bcast(sizes.data(), static_cast<int>(sizes.size()), MPI_UINT64_T, 0, comm_);
  std::vector<std::string> paths;
  for (const SubFile& f : files) paths.push_back(f.path);
  const auto sums = hash_chunks(comm_, paths, sizes, options_.checksum_chunk);
  collectively(comm_, [&] {
    if (rank_ != 0) return;
    OutputIndex index = make_index();
    index.checksum_chunk = options_.checksum_chunk;
    for (size_t i = 0; i < files.size(); ++i) {
      index.files[i].size = sizes[i];
      index.files[i].checksums = sums[i];
    }
    commit_output(path_, index, sync);
  });
}

}  // namespace strata
