// The Decomposition: variables (name, element type, global shape) and, for one rank, the
// blocks of those variables it holds. Kernels build one; every backend writes and reads one.
//
// Memory: a rank's buffer holds its blocks one after another in declaration order, each
// block's elements in row-major order of the block.
// Raw file layout (posix, mpiio-*): variables one after another in declaration order, each a
// row-major global array with no header; file per process: the rank's buffer as it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata {

enum class ElemType { u8, i32, i64, u64, f32, f64, u16 };

size_t elem_size(ElemType t);
std::string elem_name(ElemType t);
// "int32", "float64", ...; throws a usage Error for other names.
ElemType elem_type_from_name(const std::string& name);

// A field of a record (an array-of-structures element): packed, in declaration order.
struct RecordField {
  std::string name;
  ElemType type = ElemType::u8;
};

struct Variable {
  Variable() = default;
  // Constructors rather than aggregate initialisation, so {name, type, shape} stays complete.
  Variable(std::string name_, ElemType type_, std::vector<uint64_t> shape_, std::vector<RecordField> record_ = {})
      : name(std::move(name_)), type(type_), shape(std::move(shape_)), record(std::move(record_)) {}
  std::string name;
  ElemType type = ElemType::u8;
  std::vector<uint64_t> shape;  // global dimensions, slowest first
  // Empty, or the record every row of this variable holds: then type is u8, the last dimension
  // is the record's size in bytes, and field f of row i holds the value a variable named after
  // the field would hold at element i (so an array of structures and a structure of arrays of
  // the same fields carry the same values).
  std::vector<RecordField> record;
  uint64_t elements() const;
  uint64_t bytes() const { return elements() * elem_size(type); }
};

// Bytes of one record of `fields` (their sizes summed: packed, no padding).
uint64_t record_bytes(const std::vector<RecordField>& fields);

struct Block {
  int var = 0;                  // index into Decomposition::variables
  std::vector<uint64_t> start;  // per dimension
  std::vector<uint64_t> count;  // per dimension
  uint64_t elements() const;
};

struct Decomposition {
  std::vector<Variable> variables;
  std::vector<Block> blocks;    // this rank's blocks, in memory order
  uint64_t transfer_bytes = 0;  // largest request per I/O call (IOR's -t); 0 = one call
  // True: each block is a request of its own; neighbouring blocks contiguous in file and memory
  // are not merged into one extent, so a backend issuing a request per extent (posix, mpiio-ind)
  // issues one per block (a replayed trace keeps the job's requests: kernels/trace).
  bool blocks_apart = false;
  // Variables on one decomposition (PIO's ioid: hundreds of a model's variables share a few):
  // blocks_like[v] >= 0 says that variable v's blocks are those of the earlier variable
  // blocks_like[v] (of the same shape and type), in the same order, right after the blocks before
  // them in `blocks` (and so in memory). Empty, or -1 for a variable: no such promise. Backends
  // may declare such a variable as "like" the other (DatasetSet::add_blocks_like) without reading
  // its blocks; `blocks` still lists them all.
  std::vector<int> blocks_like;

  // Bytes this rank holds.
  uint64_t local_bytes() const;
  // Byte offset of variable `v` in the raw shared-file layout.
  uint64_t variable_offset(int v) const;
  // Bytes of all variables in the raw layout.
  uint64_t global_bytes() const;
  // Checks the declaration: at least one variable, known types, blocks inside their variable
  // with matching rank and non-zero counts, no two of this rank's blocks overlapping, transfer
  // size a multiple of every element size. Throws a usage Error naming the block.
  void validate() const;

 private:
  void check_blocks_like() const;  // validate(): blocks_like keeps its promise
};

// Row-major linear index of `index` in `shape`, and back.
uint64_t linear_index(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& index);
std::vector<uint64_t> unravel_index(const std::vector<uint64_t>& shape, uint64_t linear);

}  // namespace strata
