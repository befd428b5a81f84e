// Crash-consistent commit of an engine output. A write phase writes its files under their
// names plus ".strata-partial"; when every rank has written (and, by default, synced), rank 0
// records the new index as an intent record (PATH.strata-commit.json), renames each partial
// file over its final name, then renames the intent record over the index and syncs the
// directory. A crash before the intent record leaves the previous output and its index
// untouched (the partial files are an uncommitted write); a crash after it leaves a commit that
// roll_forward() completes (every byte it names is already written and synced).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "strata/strata.hpp"

namespace strata::engine {

inline constexpr const char* kPartialSuffix = ".strata-partial";
// The previous output's files keep this second name from the commit's renames until the
// engine removes them in the background (a crash may leave one; the next write removes it).
inline constexpr const char* kRetiredSuffix = ".strata-retired";
// Checksums cover chunks of this many bytes (hint strata_checksum_chunk), hashed in parallel
// over the ranks.
inline constexpr uint64_t kChecksumChunk = uint64_t{4} << 20;
// In a commit message's file word: the quadruple is a hole (file, offset, length, 0) that a
// whole-span write filled with zeros, not a checksum.
inline constexpr uint64_t kHoleMark = uint64_t{1} << 63;

std::string partial_path(const std::string& file);
// A partial file's final name (the name itself when it is not partial).
std::string final_path(const std::string& file);
// PATH.strata-commit.json: the index of a commit in progress.
std::string intent_path(const std::string& output);
// PATH.strata-index.json.strata-retired: the index a commit replaced with one of the same files,
// kept by the engine as the spare whose inode the next commit's intent record reuses.
std::string spare_index_path(const std::string& output);
// The partial files of `output` (PATH.strata-partial, PATH.subfile.N.strata-partial) in its folder.
// (With `suffix`: the files of `output` that end so, such as retired ones.)
std::vector<std::string> leftover_partials(const std::string& output, const std::string& suffix = kPartialSuffix);
// The same for several suffixes in one look at the folder: one list per suffix.
std::vector<std::vector<std::string>> leftovers(const std::string& output, const std::vector<std::string>& suffixes);

// XXH3-64 of bytes [offset, offset + length) of `path` (streaming, one read buffer). Throws a
// runtime Error naming the file when it cannot be read whole.
uint64_t hash_file_range(const std::string& path, uint64_t offset, uint64_t length);
// A range of a file to hash: file index, offset, length.
struct FileRange {
  size_t file = 0;
  uint64_t offset = 0, length = 0;
};
// Collective: the XXH3-64 of every range of the files (the same list on every rank), ranges
// shared round robin over the ranks; every rank gets all of them. A failure on any rank is
// raised on every rank.
std::vector<uint64_t> hash_ranges(MPI_Comm comm, const std::vector<std::string>& paths,
                                  const std::vector<FileRange>& ranges);
// The XXH3-64 of `length` zero bytes (what a range never written holds).
uint64_t zero_hash(uint64_t length);
// Collective: the XXH3-64 of every `chunk` bytes of each file (sizes[i] bytes of paths[i], the
// same on every rank), chunks shared round robin over the ranks; every rank gets all of them.
// A failure on any rank is raised on every rank.
std::vector<std::vector<uint64_t>> hash_chunks(MPI_Comm comm, const std::vector<std::string>& paths,
                                               const std::vector<uint64_t>& sizes, uint64_t chunk);

// Rank 0, after every rank's partial files are written (and synced when `sync`): makes
// `index` (its files named by their final names) the output's. The previous files — those the
// new index replaces and those it drops — are moved to their second names (PATH.strata-retired),
// which commit_output() returns for the caller to remove with remove_retired() (in the
// background: freeing a large file's pages takes milliseconds); only second names are ever
// removed there, never a name a later phase may use. With `same_files` (the
// caller knows the previous index lists exactly the new one's files) the old index is simply
// replaced: nothing it names can be dropped, and it becomes the spare (spare_index_path). With
// `spare` (the caller kept the last commit's spare), the intent record is written into the
// spare and renamed, reusing its inode.
// `at_commit_point` runs once the intent record is durable, before any rename (a drain removes
// its record there: engine/drain_job.hpp).
std::vector<std::string> commit_output(const std::string& output, const OutputIndex& index, bool sync,
                                       bool same_files = false, bool spare = false,
                                       const std::function<void()>& at_commit_point = {});
// Removes the second names commit_output() returned.
void remove_retired(const std::vector<std::string>& retired);
// Completes a commit interrupted after its intent record was written; false when there is none.
// A drain record of the output (PATH.strata-drain.json) goes too: the intent record supersedes it.
bool roll_forward(const std::string& output);
// fsync of a directory, so that renames in it are durable.
void sync_directory(const std::string& dir);

}  // namespace strata::engine
