// Draining a node-local copy to the shared file: bytes [0, length) of `from` go to `to` at
// `offset` (pread/pwrite in 8 MiB pieces). Runtime Error naming the file on failure.
#pragma once

#include <cstdint>
#include <string>

namespace strata::engine {

void drain_file(const std::string& from, const std::string& to, uint64_t offset, uint64_t length);

}  // namespace strata::engine
