// Draining a node-local copy into a file of the shared target (engine/drain_job.hpp): bytes
// [0, length) of `from` (fewer when the node file ends first: the rest of its partition is
// holes) go to `to` at `offset`, in 8 MiB pieces whose writeback starts at once; each piece is
// hashed (XXH3-64) while in memory, cut so that no hashed range crosses a multiple of
// `hash_chunk` in `to` (the index's checksum grid); then `to` is fsynced. Runtime Error naming
// the file on failure. `after_piece` runs after each piece is written (a test's kill point).
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
                                     uint64_t hash_chunk, const std::function<void()>& after_piece = {});

}  // namespace strata::engine
