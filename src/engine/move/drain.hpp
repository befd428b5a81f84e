// Draining a node-local copy into a file of the shared target (engine/drain_job.hpp): bytes
// [0, length) of `from` (fewer when the node file ends first: the rest of its partition is
// holes) go to `to` at `offset`, in 8 MiB pieces: from the node file mapped, whole blocks by
// direct I/O (two writes in flight) where the target takes it, the rest through the page cache with its writeback
// started at once; then `to` is fsynced. What was copied is hashed (XXH3-64) from the mapping on
// a thread of its own while the writes go on (or each piece while in memory, when the node file
// cannot be mapped), cut so that no hashed range crosses a multiple of `hash_chunk` in `to` (the
// index's checksum grid). Runtime Error naming the file on failure. `after_piece` runs after each
// piece is written (a test's kill point). `ready`, when given, is called with the end of each
// piece before it is read and returns once `from` holds those bytes (a copy that follows the
// node-local write as it goes); it throws to abandon the copy.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace strata::engine {

struct DrainedRange {
  uint64_t offset = 0, length = 0, hash = 0;  // in `to`
};

std::vector<DrainedRange> drain_file(const std::string& from, const std::string& to, uint64_t offset, uint64_t length,
                                     uint64_t hash_chunk, const std::function<void()>& after_piece = {},
                                     const std::function<void(uint64_t)>& ready = {});

}  // namespace strata::engine
