// An MPI datatype as the list of byte runs it describes (its type map without the basic types):
// what the drop-in layer needs to place a file view's bytes and to pack a memory buffer. Built
// from MPI_Type_get_envelope / MPI_Type_get_contents, so it works for every type MPI builds
// (contiguous, vector, hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
// subarray, darray, resized, dup, predefined); lower bound and extent are MPI's own.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata::preload {

struct Run {
  int64_t offset = 0;   // bytes from the type's origin (may be negative in a memory type)
  uint64_t length = 0;  // bytes
};

struct TypeMap {
  std::vector<Run> runs;         // in type-map order, adjacent runs merged
  std::vector<uint64_t> prefix;  // prefix[i]: data bytes before runs[i]
  int64_t lb = 0, extent = 0;    // MPI_Type_get_extent
  uint64_t size = 0;             // MPI_Type_size: data bytes of one instance
  bool ok = false;               // false: a combiner this code cannot decode (`problem` says which)
  std::string problem;
  // A file type MPI-IO accepts: runs in increasing order, none overlapping, none before 0.
  bool monotonic() const;
  // One instance is one contiguous run from offset 0 filling the extent (MPI_BYTE, MPI_INT,
  // contiguous types): tiling it is a single run.
  bool contiguous() const;
};

// The type map of `type` (not cached).
TypeMap flatten(MPI_Datatype type);

// The type map of `type`, cached by handle until the program frees the type (forget()).
std::shared_ptr<const TypeMap> type_map(MPI_Datatype type);
void forget(MPI_Datatype type);

// Copies `count` instances of `type` at `buf` into `out` (packed, in type-map order) — the same
// bytes MPI_Pack would produce for the native representation.
void pack(const TypeMap& map, const void* buf, uint64_t count, char* out);
// The reverse: scatters packed bytes into `count` instances at `buf`.
void unpack(const TypeMap& map, const char* in, uint64_t count, void* buf);

}  // namespace strata::preload
