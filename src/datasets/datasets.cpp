#include "datasets/datasets.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#ifdef STRATA_HAVE_HDF5
#include "datasets/hdf5_container.hpp"
#endif

namespace strata {

std::string container_name(Container c) { return c == Container::hdf5 ? "hdf5" : "raw"; }

Container container_from_name(const std::string& name) {
  if (name == "raw") return Container::raw;
  if (name == "hdf5") {
#ifdef STRATA_HAVE_HDF5
    return Container::hdf5;
#else
    throw_usage("container hdf5 needs HDF5, which this build of Strata does not include (use raw)");
#endif
  }
  throw_usage("unknown container \"" + name + "\" (available: raw, hdf5)");
}

std::vector<uint64_t> container_offsets(MPI_Comm comm, const std::string& path, PhaseMode mode, Container container,
                                        const std::vector<DatasetSpec>& datasets) {
  if (container == Container::hdf5) {
#ifdef STRATA_HAVE_HDF5
    return mode == PhaseMode::write ? create_hdf5_container(comm, path, datasets)
                                    : hdf5_container_offsets(comm, path, datasets);
#else
    container_from_name("hdf5");  // throws: not built in
#endif
  }
  std::vector<uint64_t> offsets;
  uint64_t at = 0;
  for (const DatasetSpec& d : datasets) {
    offsets.push_back(at);
    at += d.elements() * elem_size(d.type);
  }
  return offsets;
}

std::vector<Phase::Hint> container_phase_hints(Container container, PhaseMode mode, std::vector<Phase::Hint> hints) {
  const bool has_commit =
      std::any_of(hints.begin(), hints.end(), [](const Phase::Hint& h) { return h.first == "strata_commit"; });
  if (container != Container::raw && mode == PhaseMode::write && !has_commit)
    hints.emplace_back("strata_commit", "in-place");
  return hints;
}

uint64_t DatasetSpec::elements() const {
  uint64_t n = 1;
  for (uint64_t s : shape) n *= s;
  return n;
}

void append_block_runs(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& start,
                       const std::vector<uint64_t>& count, uint64_t mem_offset, size_t elem_size,
                       std::vector<ElementRun>& runs) {
  const size_t nd = shape.size();
  uint64_t elements = 1;
  for (uint64_t c : count) elements *= c;
  if (elements == 0) return;
  // Rows along the innermost dimension, merged over trailing dimensions the block covers whole.
  size_t run_dims = 1;
  uint64_t run = count[nd - 1];
  while (run_dims < nd && count[nd - run_dims] == shape[nd - run_dims]) {
    run *= count[nd - run_dims - 1];
    ++run_dims;
  }
  const size_t outer = nd - run_dims;
  if (run == elements) {  // one run (a row, or whole trailing dimensions)
    runs.push_back({linear_index(shape, start), run, mem_offset});
    return;
  }
  std::vector<uint64_t> idx(start);
  for (uint64_t done = 0; done < elements; done += run) {
    runs.push_back({linear_index(shape, idx), run, mem_offset});
    mem_offset += run * elem_size;
    for (size_t k = outer; k-- > 0;) {
      if (++idx[k] < start[k] + count[k]) break;
      idx[k] = start[k];
    }
  }
}

std::vector<ElementRun> block_runs(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& start,
                                   const std::vector<uint64_t>& count, uint64_t mem_offset, size_t elem_size) {
  std::vector<ElementRun> runs;
  append_block_runs(shape, start, count, mem_offset, elem_size, runs);
  return runs;
}

std::vector<ElementRun> coalesce_runs(std::vector<ElementRun> runs, size_t elem_size, const std::string& dataset) {
  auto by_element = [](const ElementRun& a, const ElementRun& b) { return a.elem_begin < b.elem_begin; };
  if (!std::is_sorted(runs.begin(), runs.end(), by_element)) std::sort(runs.begin(), runs.end(), by_element);
  std::vector<ElementRun> out;
  out.reserve(runs.size());
  for (const ElementRun& r : runs) {
    if (r.elems == 0) continue;
    if (!out.empty()) {
      ElementRun& last = out.back();
      if (last.elem_begin + last.elems > r.elem_begin) {
        throw_usage("dataset \"" + dataset + "\": two blocks of this rank overlap at element " +
                    std::to_string(r.elem_begin) + " (declare disjoint blocks)");
      }
      if (last.elem_begin + last.elems == r.elem_begin && last.mem_offset + last.elems * elem_size == r.mem_offset) {
        last.elems += r.elems;
        continue;
      }
    }
    out.push_back(r);
  }
  return out;
}

bool same_runs_shifted(const std::vector<ElementRun>& a, const std::vector<ElementRun>& b) {
  if (a.size() != b.size() || a.empty()) return false;
  const uint64_t shift = b.front().mem_offset - a.front().mem_offset;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].elem_begin != b[i].elem_begin || a[i].elems != b[i].elems || b[i].mem_offset - a[i].mem_offset != shift)
      return false;
  }
  return true;
}

void reorder_to_file(const std::vector<std::vector<ElementRun>>& runs, const std::vector<size_t>& elem_sizes,
                     const std::byte* src, std::byte* dst) {
  uint64_t pos = 0;
  for (size_t d = 0; d < runs.size(); ++d) {
    for (const ElementRun& r : runs[d]) {
      const uint64_t n = r.elems * elem_sizes[d];
      std::memcpy(dst + pos, src + r.mem_offset, n);
      pos += n;
    }
  }
}

void reorder_from_file(const std::vector<std::vector<ElementRun>>& runs, const std::vector<size_t>& elem_sizes,
                       const std::byte* src, std::byte* dst) {
  uint64_t pos = 0;
  for (size_t d = 0; d < runs.size(); ++d) {
    for (const ElementRun& r : runs[d]) {
      const uint64_t n = r.elems * elem_sizes[d];
      std::memcpy(dst + r.mem_offset, src + pos, n);
      pos += n;
    }
  }
}

DatasetSet::DatasetSet(Engine& engine, std::string path, PhaseMode mode, Container container,
                       std::vector<Phase::Hint> hints)
    : engine_(engine), path_(std::move(path)), mode_(mode), container_(container), hints_(std::move(hints)) {
  if (container_ == Container::hdf5) {
    for (const auto& [k, v] : hints_) {
      if (k == "strata_subfiling") {
        throw_usage("the HDF5 container is one file: hint strata_subfiling does not apply (use container raw)");
      }
    }
  }
}

DatasetSet::~DatasetSet() = default;

const DatasetSpec& DatasetSet::dataset(int ds, const char* what) const {
  if (ds < 0 || static_cast<size_t>(ds) >= specs_.size()) {
    throw_usage(std::string(what) + ": dataset id " + std::to_string(ds) + " is not defined");
  }
  return specs_[static_cast<size_t>(ds)];
}

int DatasetSet::define(DatasetSpec spec) {
  int id = -1;
  deferring([&] { id = define_now(std::move(spec)); });
  return id;
}

void DatasetSet::add_block(int ds, const std::vector<uint64_t>& start, const std::vector<uint64_t>& count) {
  deferring([&] { add_block_now(ds, start, count); });
}

void DatasetSet::add_flat(int ds, uint64_t elem_offset, uint64_t elems) {
  deferring([&] { add_flat_now(ds, elem_offset, elems); });
}

// A declaration is local: its error is kept (the first one) and raised on every rank by the
// write's or read's first agreement, so a rank with a bad declaration never leaves the others
// waiting in a collective, and the caller needs no agreement of its own after declaring.
template <typename F>
void DatasetSet::deferring(F&& fn) {
  if (deferred_) return;
  deferred_ = caught(std::forward<F>(fn));
}

int DatasetSet::define_now(DatasetSpec spec) {
  if (spec.name.empty()) throw_usage("a dataset needs a name");
  if (spec.shape.empty()) throw_usage("dataset \"" + spec.name + "\" has no dimensions");
  for (uint64_t s : spec.shape) {
    if (s == 0) throw_usage("dataset \"" + spec.name + "\" has a zero dimension");
  }
  if (!names_.insert(spec.name).second) throw_usage("dataset \"" + spec.name + "\" is defined twice");
  specs_.push_back(std::move(spec));
  runs_.emplace_back();
  declared_.emplace_back();
  sorted_valid_ = false;
  last_.reset();
  return static_cast<int>(specs_.size()) - 1;
}

void DatasetSet::add_block_now(int ds, const std::vector<uint64_t>& start, const std::vector<uint64_t>& count) {
  const DatasetSpec& d = dataset(ds, "add_block");
  const size_t nd = d.shape.size();
  if (start.size() != nd || count.size() != nd) {
    throw_usage("dataset \"" + d.name + "\": block has " + std::to_string(count.size()) + " dimensions, the dataset " +
                std::to_string(nd));
  }
  uint64_t elements = 1;
  for (size_t k = 0; k < nd; ++k) {
    if (start[k] > d.shape[k] || count[k] > d.shape[k] - start[k]) {
      throw_usage("dataset \"" + d.name + "\": block reaches past dimension " + std::to_string(k) + " (start " +
                  std::to_string(start[k]) + " + count " + std::to_string(count[k]) + " > " +
                  std::to_string(d.shape[k]) + ")");
    }
    elements *= count[k];
  }
  if (elements == 0) return;
  sorted_valid_ = false;
  last_.reset();
  appending(ds, elements * elem_size(d.type));
  append_block_runs(d.shape, start, count, local_bytes_, elem_size(d.type), runs_[static_cast<size_t>(ds)]);
  local_bytes_ += elements * elem_size(d.type);
}

void DatasetSet::add_flat_now(int ds, uint64_t elem_offset, uint64_t elems) {
  const DatasetSpec& d = dataset(ds, "add_flat");
  if (elem_offset > d.elements() || elems > d.elements() - elem_offset) {
    throw_usage("dataset \"" + d.name + "\": flat block [" + std::to_string(elem_offset) + ", " +
                std::to_string(elem_offset + elems) + ") reaches past its " + std::to_string(d.elements()) +
                " elements");
  }
  if (elems == 0) return;
  sorted_valid_ = false;
  last_.reset();
  appending(ds, elems * elem_size(d.type));
  runs_[static_cast<size_t>(ds)].push_back({elem_offset, elems, local_bytes_});
  local_bytes_ += elems * elem_size(d.type);
}

void DatasetSet::appending(int ds, uint64_t bytes) {
  Declared& d = declared_[static_cast<size_t>(ds)];
  if (d.liked) {
    throw_usage("dataset \"" + specs_[static_cast<size_t>(ds)].name +
                "\" takes a block after another dataset was declared like it (declare its blocks first)");
  }
  if (d.like >= 0) {  // a block more: the runs it was declared like become its own
    for (ElementRun r : runs_[static_cast<size_t>(d.like)]) {
      r.mem_offset += d.shift;
      runs_[static_cast<size_t>(ds)].push_back(r);
    }
    d.like = -1;
    d.shift = 0;
  }
  if (d.bytes == 0) {
    d.begin = local_bytes_;
  } else if (last_declared_ != ds) {
    d.apart = true;
  }
  d.bytes += bytes;
  last_declared_ = ds;
}

void DatasetSet::add_blocks_like(int ds, int like) {
  deferring([&] { add_blocks_like_now(ds, like); });
}

void DatasetSet::add_blocks_like_now(int ds, int like) {
  const DatasetSpec& d = dataset(ds, "add_blocks_like");
  const DatasetSpec& l = dataset(like, "add_blocks_like");
  if (like >= ds) throw_usage("dataset \"" + d.name + "\" can only be declared like a dataset defined before it");
  if (d.shape != l.shape || d.type != l.type) {
    throw_usage("dataset \"" + d.name + "\" is declared like \"" + l.name + "\", of another shape or type");
  }
  Declared& mine = declared_[static_cast<size_t>(ds)];
  Declared& theirs = declared_[static_cast<size_t>(like)];
  if (mine.bytes > 0 || !runs_[static_cast<size_t>(ds)].empty()) {
    throw_usage("dataset \"" + d.name + "\" has blocks already: declare it like \"" + l.name + "\" first");
  }
  if (theirs.apart) {
    throw_usage("dataset \"" + d.name + "\" is declared like \"" + l.name +
                "\", whose blocks lie apart in the buffer (declare them one after another)");
  }
  if (theirs.bytes == 0) return;  // nothing declared: neither has blocks
  sorted_valid_ = false;
  last_.reset();
  theirs.liked = true;
  const int root = theirs.like >= 0 ? theirs.like : like;
  mine.like = root;
  mine.shift = theirs.shift + (local_bytes_ - theirs.begin);
  mine.begin = local_bytes_;
  mine.bytes = theirs.bytes;
  local_bytes_ += theirs.bytes;
  last_declared_ = ds;
}

uint64_t DatasetSet::local_bytes() const { return local_bytes_; }

void DatasetSet::prepare(std::byte* user) {
  if (phase_) throw_usage("this DatasetSet is moving its data; close() it before the next write or read");
  std::vector<size_t> sizes;
  for (const auto& d : specs_) sizes.push_back(elem_size(d.type));
  // Sorted (and, where memory allows, merged) runs of each dataset.
  if (!sorted_valid_) {
    sorted_.assign(specs_.size(), {});
    sorted_like_.assign(specs_.size(), {0, 0});
  }
  auto coalesce = [&] {
    if (deferred_) throw *deferred_;
    if (specs_.empty()) throw_usage("no dataset is defined");
    if (sorted_valid_) return;  // moved before: the same declarations, sorted then
    for (size_t d = 0; d < specs_.size(); ++d) {
      // Datasets on one decomposition (hundreds of variables on a few maps) declare the same runs
      // at memory shifted by a constant: the last such dataset's sorted runs, shifted, are theirs.
      if (const Declared& like = declared_[d]; like.like >= 0) {  // declared like an earlier one
        const auto [root, shift] = sorted_like_[static_cast<size_t>(like.like)];
        sorted_like_[d] = {root, shift + like.shift};
        continue;
      }
      if (d > 0 && sizes[d] == sizes[d - 1] && same_runs_shifted(runs_[d - 1], runs_[d])) {
        const uint64_t shift = runs_[d].front().mem_offset - runs_[d - 1].front().mem_offset;
        sorted_like_[d] = {sorted_like_[d - 1].first, sorted_like_[d - 1].second + shift};
        continue;
      }
      sorted_like_[d] = {d, 0};
      sorted_[d] = coalesce_runs(runs_[d], sizes[d], specs_[d].name);
    }
  };
  if (container_ != Container::raw) {
    collectively(engine_.comm(), coalesce);  // before HDF5 creates the container, collectively
  } else {
    // A raw phase agrees on it with its own plan: one collective less per phase.
    try {
      coalesce();
    } catch (const Error& e) {
      phase_ = std::make_unique<Phase>(engine_, path_, mode_, hints_);
      phase_->fail(e.what());
      phase_->plan();  // throws on every rank
    }
  }
  // Is the buffer in file order already?
  bool file_order = true;
  if (order_ == MemoryOrder::blocks) {
    // Each run list once: whether its runs follow each other in memory, and its bytes; a dataset
    // on it is then in file order when its first run starts where the one before it ended.
    struct Follows {
      bool known = false, on = true;
      uint64_t bytes = 0;
    };
    std::vector<Follows> follows(specs_.size());
    uint64_t pos = 0;
    for (size_t d = 0; d < specs_.size() && file_order; ++d) {
      const auto [like, shift] = sorted_like_[d];
      const std::vector<ElementRun>& runs = sorted_[like];
      if (runs.empty()) continue;
      Follows& f = follows[like];
      if (!f.known) {
        f.known = true;
        uint64_t at = runs.front().mem_offset;
        for (const ElementRun& r : runs) {
          f.on = f.on && r.mem_offset == at;
          at += r.elems * sizes[d];
        }
        f.bytes = at - runs.front().mem_offset;
      }
      file_order = f.on && runs.front().mem_offset + shift == pos;
      pos += f.bytes;
    }
  }
  reordered_ = !file_order;
  user_ = user;
  const double t0 = MPI_Wtime();
  const std::vector<uint64_t> offsets = container_offsets(engine_.comm(), path_, mode_, container_, specs_);
  container_s_ = MPI_Wtime() - t0;
  offsets_ = offsets;
  if (last_ && user == last_user_ && offsets == last_offsets_) {
    // The same runs at the same memory as the last move: its phase repeated, nothing declared.
    phase_ = std::make_unique<Phase>(Phase::repeat(std::move(*last_)));
    last_.reset();
    phase_->plan();
    return;
  }
  last_.reset();
  // One phase: every dataset a variable at its offset, every coalesced run one extent at its own
  // memory (a buffer out of file order is not copied here: the engine moves each run from where it
  // lies, packing what it aggregates and writing the rest straight from the buffer).
  phase_ = std::make_unique<Phase>(engine_, path_, mode_, container_phase_hints(container_, mode_, hints_));
  size_t runs = 0;  // at most: merged runs are fewer (those declared like a root's are not copied)
  for (size_t d = 0; d < sorted_like_.size(); ++d) {
    if (sorted_like_[d].first == d) runs += sorted_[d].size();
  }
  phase_->reserve(runs);
  extents_ = 0;
  uint64_t pos = 0;
  std::vector<uint64_t> file_at, lengths, memory;
  std::vector<void*> at_memory;
  // A dataset on the same runs as one declared before it (its root, same shape) is declared
  // like it: the phase plans it as a view of the root's extents, moved in the file and in memory.
  struct Root {
    int id = -1;             // the root's phase variable, once declared
    uint64_t first_mem = 0;  // its first run's memory offset, where it started in file order
    uint64_t bytes = 0;      // its bytes
    size_t extents = 0;
  };
  std::vector<Root> roots(specs_.size());
  for (size_t d = 0; d < specs_.size(); ++d) {
    const int id = phase_->define_variable(specs_[d].name, sizes[d], specs_[d].shape, offsets[d]);
    const auto [like, shift] = sorted_like_[d];
    const Root& root = roots[like];
    if (like != d && root.id >= 0 && specs_[like].shape == specs_[d].shape && !sorted_[like].empty()) {
      const uint64_t first = order_ == MemoryOrder::file ? pos : sorted_[like].front().mem_offset + shift;
      phase_->add_extents_like(id, root.id, static_cast<std::ptrdiff_t>(first - root.first_mem));
      pos += root.bytes;
      extents_ += root.extents;
      continue;
    }
    file_at.clear();
    lengths.clear();
    memory.clear();
    bool follow = true;  // each extent's memory follows the previous one's
    const uint64_t start = pos;
    for (const ElementRun& r : sorted_[like]) {
      const uint64_t at = offsets[d] + r.elem_begin * sizes[d], n = r.elems * sizes[d];
      const uint64_t mem = order_ == MemoryOrder::file ? pos : r.mem_offset + shift;
      pos += n;
      if (!file_at.empty() && memory.back() + lengths.back() == mem) {
        if (file_at.back() + lengths.back() == at) {
          lengths.back() += n;
          continue;
        }
      } else if (!file_at.empty()) {
        follow = false;
      }
      file_at.push_back(at);
      lengths.push_back(n);
      memory.push_back(mem);
    }
    if (follow && !file_at.empty()) {
      phase_->add_extents(id, file_at.size(), file_at.data(), lengths.data(), user + memory.front());
    } else {
      at_memory.resize(file_at.size());
      for (size_t k = 0; k < file_at.size(); ++k) at_memory[k] = user + memory[k];
      phase_->add_extents_at(id, file_at.size(), file_at.data(), lengths.data(), at_memory.data());
    }
    extents_ += file_at.size();
    if (like == d && !memory.empty()) roots[d] = {id, memory.front(), pos - start, file_at.size()};
  }
  phase_->plan();
  sorted_valid_ = true;  // every rank's declarations were good: kept for the next move
}

void DatasetSet::write(const std::byte* buffer) {
  if (mode_ != PhaseMode::write) throw_usage("write() on a DatasetSet made for reading");
  prepare(const_cast<std::byte*>(buffer));  // the engine only reads the buffer in a write phase
  phase_->write();
}

void DatasetSet::read(std::byte* buffer) {
  if (mode_ != PhaseMode::read) throw_usage("read() on a DatasetSet made for writing");
  prepare(buffer);
  phase_->read();
}

PhaseStats DatasetSet::close(PhaseStats* max) {
  if (!phase_) return {};
  auto phase = std::move(phase_);
  const PhaseStats stats = phase->close(max);  // a failed close leaves nothing to repeat
  last_ = std::move(phase);
  last_user_ = user_;
  last_offsets_ = offsets_;
  return stats;
}

}  // namespace strata
