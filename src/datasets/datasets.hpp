// Multi-dataset I/O on the engine: many datasets (name, element type, global shape, text
// attributes), each rank's blocks of them, all moved in ONE engine phase.
//
// Blocks are subarrays (start, count) or flat runs (element offset, length) of a dataset's
// row-major array. Per dataset they are sorted and coalesced: neighbouring runs become one
// extent for the engine. The rank's buffer is in one of two orders:
//   MemoryOrder::blocks  the blocks one after another in declaration order, each row-major;
//   MemoryOrder::file    each dataset's elements in file order, datasets in definition order.
// When the buffer is not in file order its runs are declared where they lie: the engine puts the
// rows of different blocks together in file order (the multi-dataset paper's Figure 1) as it packs
// what it aggregates, and writes or reads the rest straight from the buffer, vectored: no staging
// copy. Runs that touch both in the file and in memory become one extent.
//
// Containers: raw (datasets one after another from offset 0, the layout every raw backend
// writes, with the engine's index beside it) or hdf5 (see hdf5_container.hpp).
//
//   strata::Engine engine(MPI_COMM_WORLD);
//   strata::DatasetSet set(engine, "out.h5", strata::PhaseMode::write, strata::Container::hdf5);
//   int t = set.define({"T", strata::ElemType::f32, {72, 866}, {{"units", "K"}}});
//   set.add_block(t, {0, 10}, {72, 4});
//   set.write(buffer);                  // collective: create, plan, one phase
//   strata::PhaseStats stats = set.close();
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "decomp/decomposition.hpp"
#include "strata/error.hpp"
#include "strata/strata.hpp"

namespace strata {

enum class Container { raw, hdf5 };
enum class MemoryOrder { blocks, file };

std::string container_name(Container c);
// "raw" or "hdf5"; a usage Error otherwise (and for hdf5 when HDF5 is not built in).
Container container_from_name(const std::string& name);

struct DatasetAttribute {
  std::string name;
  std::string value;
};

struct DatasetSpec {
  std::string name;
  ElemType type = ElemType::u8;
  std::vector<uint64_t> shape;
  std::vector<DatasetAttribute> attributes;
  uint64_t elements() const;
};

// A run of elements of one dataset: linear elements [elem_begin, elem_begin + elems) held at
// byte `mem_offset` of a buffer.
struct ElementRun {
  uint64_t elem_begin = 0;
  uint64_t elems = 0;
  uint64_t mem_offset = 0;
};

// The rows of a subarray block of an array of `shape` (row-major; rows merged over trailing
// dimensions the block covers whole), in the block's row-major order, the first at byte
// `mem_offset` of a buffer and each following the previous. Arguments are checked by the caller.
std::vector<ElementRun> block_runs(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& start,
                                   const std::vector<uint64_t>& count, uint64_t mem_offset, size_t elem_size);
// The same rows appended to `runs`.
void append_block_runs(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& start,
                       const std::vector<uint64_t>& count, uint64_t mem_offset, size_t elem_size,
                       std::vector<ElementRun>& runs);

// Sorts runs by element and merges neighbours that touch in the file and in memory. Throws a
// usage Error naming `dataset` when two runs overlap.
std::vector<ElementRun> coalesce_runs(std::vector<ElementRun> runs, size_t elem_size, const std::string& dataset);

// Whether `b` holds the runs of `a` (same elements, same order) with memory shifted by one constant.
bool same_runs_shifted(const std::vector<ElementRun>& a, const std::vector<ElementRun>& b);

// Where the runs of a MemoryOrder::blocks buffer go in a file-order buffer: copies `src`
// (block order) into `dst` (file order) or back. `runs` are sorted runs with block-order
// memory offsets; file-order offsets follow from their order.
void reorder_to_file(const std::vector<std::vector<ElementRun>>& runs, const std::vector<size_t>& elem_sizes,
                     const std::byte* src, std::byte* dst);
void reorder_from_file(const std::vector<std::vector<ElementRun>>& runs, const std::vector<size_t>& elem_sizes,
                       const std::byte* src, std::byte* dst);

// The file offset of every dataset of a phase that writes or reads `container` at `path`:
// one after another from 0 (raw: the layout every raw backend writes), or where HDF5 placed
// them (hdf5: collective; writing creates the container, reading checks its datasets' shapes
// and types).
std::vector<uint64_t> container_offsets(MPI_Comm comm, const std::string& path, PhaseMode mode, Container container,
                                        const std::vector<DatasetSpec>& datasets);
// The hints of the engine phase that fills `container`: HDF5 wrote the container's metadata
// before the phase, so the phase writes into that file in place (no partial file to commit,
// engine/commit.hpp) unless the hints name a strata_commit.
std::vector<Phase::Hint> container_phase_hints(Container container, PhaseMode mode, std::vector<Phase::Hint> hints);

class DatasetSet {
 public:
  DatasetSet(Engine& engine, std::string path, PhaseMode mode, Container container,
             std::vector<Phase::Hint> hints = {});
  ~DatasetSet();
  DatasetSet(const DatasetSet&) = delete;
  DatasetSet& operator=(const DatasetSet&) = delete;

  // Declarations are local and never throw: the first bad one is raised, on every rank, by
  // write() or read() (their first agreement), as the engine's Phase does.
  // Every rank defines the same datasets in the same order. Returns the dataset's id (-1
  // after a bad declaration).
  int define(DatasetSpec spec);
  // A subarray block of dataset `ds`.
  void add_block(int ds, const std::vector<uint64_t>& start, const std::vector<uint64_t>& count);
  // A flat run: linear elements [elem_offset, elem_offset + elems) of dataset `ds`.
  void add_flat(int ds, uint64_t elem_offset, uint64_t elems);
  // Dataset `ds` (no blocks yet) has the blocks of the earlier dataset `like` (same shape and
  // type, its blocks declared one after another), its bytes next in the buffer in the same order:
  // what add_block with each of like's blocks would declare, without a call a block — hundreds of
  // a model's variables share one decomposition (PIO's ioid). `like` takes no block afterwards.
  void add_blocks_like(int ds, int like);
  void set_memory_order(MemoryOrder order) {
    sorted_valid_ = sorted_valid_ && order == order_;
    if (!sorted_valid_) last_.reset();
    order_ = order;
  }
  // Bytes of this rank's buffer.
  uint64_t local_bytes() const;

  // Collective: every dataset in one engine phase. `buffer` holds local_bytes() in the memory order.
  // After close(), write() (or read()) moves the same datasets again: the declarations, sorted
  // and coalesced once, are kept (and the engine reuses the phase's plan), so an output that
  // repeats is declared once.
  void write(const std::byte* buffer);
  void read(std::byte* buffer);
  // Collective. Statistics of the phase (max over ranks in `max`).
  PhaseStats close(PhaseStats* max = nullptr);
  // Whether a write or read has not been closed yet.
  bool moving() const { return phase_ != nullptr; }

  // What the last write/read did: extents handed to the engine (after coalescing), whether the
  // buffer was out of file order, and the seconds rank 0 spent in HDF5 (creating or opening the container).
  uint64_t extents() const { return extents_; }
  bool reordered() const { return reordered_; }
  double container_s() const { return container_s_; }

 private:
  void prepare(std::byte* user);
  const DatasetSpec& dataset(int ds, const char* what) const;
  template <typename F>
  void deferring(F&& fn);
  int define_now(DatasetSpec spec);
  void add_block_now(int ds, const std::vector<uint64_t>& start, const std::vector<uint64_t>& count);
  void add_flat_now(int ds, uint64_t elem_offset, uint64_t elems);
  void add_blocks_like_now(int ds, int like);
  // Before `bytes` more of dataset `ds` are appended at local_bytes_: its memory range, and a
  // dataset declared like another gets that one's runs of its own.
  void appending(int ds, uint64_t bytes);

  Engine& engine_;
  std::string path_;
  PhaseMode mode_;
  Container container_;
  std::vector<Phase::Hint> hints_;
  MemoryOrder order_ = MemoryOrder::blocks;
  std::vector<DatasetSpec> specs_;
  std::unordered_set<std::string> names_;      // of specs_
  std::vector<std::vector<ElementRun>> runs_;  // per dataset, in declaration order, block-order memory
  // Per dataset: declared like another (add_blocks_like): the first dataset with those runs and
  // the memory shift from its runs (-1: its own runs_); where its bytes begin in the buffer, how
  // many, whether another dataset's lie between them, whether others are declared like it.
  struct Declared {
    int like = -1;
    uint64_t shift = 0;
    uint64_t begin = 0, bytes = 0;
    bool apart = false, liked = false;
  };
  std::vector<Declared> declared_;
  int last_declared_ = -1;  // the dataset of the last block
  uint64_t local_bytes_ = 0;
  // Per dataset, sorted (block-order memory offsets): a dataset that declared the runs of the one
  // before it at memory shifted by a constant has none of its own but that one's (sorted_like_)
  // and the shift, so hundreds of variables on one decomposition keep one sorted copy.
  std::vector<std::vector<ElementRun>> sorted_;
  std::vector<std::pair<size_t, uint64_t>> sorted_like_;  // (the dataset whose runs, memory shift)
  bool sorted_valid_ = false;                             // sorted_ is of the declarations as they are
  std::byte* user_ = nullptr;
  std::unique_ptr<Phase> phase_;
  std::vector<uint64_t> offsets_;  // the datasets' file offsets in phase_
  // The last closed phase, its buffer and offsets: the next move of the same declarations from
  // the same buffer repeats it (Phase::repeat) instead of declaring every run again.
  std::unique_ptr<Phase> last_;
  std::byte* last_user_ = nullptr;
  std::vector<uint64_t> last_offsets_;
  uint64_t extents_ = 0;
  bool reordered_ = false;
  double container_s_ = 0;
  std::optional<Error> deferred_;  // this rank's first bad declaration
};

}  // namespace strata
