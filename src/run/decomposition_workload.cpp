// A decomposition kernel (kernels/kernel.hpp) through a backend of the backend table: build each
// rank's part, resolve the output's files (one output, or a kernel's checkpoints), apply strata
// advise's hints under the explicit ones, then per repetition write (and/or read) every output,
// each step of each access agreed collectively, and verify.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <vector>

#include "advise/run_advice.hpp"
#include "arch/node_local.hpp"
#include "backends/backend.hpp"
#include "common/error.hpp"
#include "common/mpi_env.hpp"
#include "common/watchdog.hpp"
#include "decomp/selection.hpp"
#include "decomp/values.hpp"
#include "fs/fs_info.hpp"
#include "fs/hints_in_effect.hpp"
#include "kernels/app_kernel.hpp"
#include "kernels/kernel.hpp"
#include "run/run_outputs.hpp"
#include "run/workload.hpp"
#include "strata/strata.hpp"

namespace strata {

namespace {

// Times one access of the target: open, transfer, close, each agreed collectively (by the
// driver, unless the backend's step agrees on its own outcome: Backend::agrees_on).
PhaseTiming timed_access(Backend& backend, MPI_Comm comm, Access access, std::byte* buffer, uint64_t local_bytes) {
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  const std::string what = backend.name() + (access == Access::write ? " write: " : " read: ");
  auto step = [&](BackendStep s, const char* name, auto&& fn) {
    if (backend.agrees_on(s)) {
      watchdog::Scope scope(what + name);  // the backend agrees later: still a step the watchdog sees
      fn();
    } else {
      collectively(comm, what + name, fn);
    }
  };
  step(BackendStep::open, "open", [&] { backend.open(access); });
  const double t1 = MPI_Wtime();
  step(BackendStep::transfer, "transfer", [&] { backend.transfer(access, buffer); });
  const double t2 = MPI_Wtime();
  end_collective_timing();
  step(BackendStep::close, "close", [&] { backend.close(); });
  const double t3 = MPI_Wtime();
  const CollectiveStats collective = backend.collective_calls(t2 - t1);
  double local[4] = {t1 - t0, t2 - t1, t3 - t2, t3 - t0}, worst[4];
  MPI_Allreduce(local, worst, 4, MPI_DOUBLE, MPI_MAX, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  const uint64_t counts[2] = {backend.moved_bytes(local_bytes), backend.requests()};
  std::vector<uint64_t> every(2 * static_cast<size_t>(size));
  MPI_Allgather(counts, 2, MPI_UINT64_T, every.data(), 2, MPI_UINT64_T, comm);
  PhaseTiming p;
  p.rank_xfer_s.resize(static_cast<size_t>(size));
  MPI_Allgather(&local[1], 1, MPI_DOUBLE, p.rank_xfer_s.data(), 1, MPI_DOUBLE, comm);
  for (int r = 0; r < size; ++r) {
    p.rank_bytes.push_back(every[2 * static_cast<size_t>(r)]);
    p.rank_requests.push_back(every[2 * static_cast<size_t>(r) + 1]);
    p.bytes += p.rank_bytes.back();
    p.requests += p.rank_requests.back();
  }
  p.open_s = worst[0];
  p.xfer_s = worst[1];
  p.close_s = worst[2];
  p.time_s = worst[3];
  p.engine = backend.details();
  if (collective.valid) p.collective = collective.to_json();
  return p;
}

// Agrees on the verification of `buffer`; returns the first mismatch's description (lowest
// failing rank) or nothing.
std::optional<std::string> verify_everywhere(MPI_Comm comm, const Decomposition& d, const ValueStream& vs,
                                             const std::byte* buffer) {
  const auto mismatch = verify(d, vs, buffer);
  return agree_mismatch(comm, mismatch ? std::optional<std::string>(mismatch->describe()) : std::nullopt);
}

// The byte ranges of a file that hold written data: its checksum ranges less the holes a
// whole-span write filled with zeros (both sorted).
std::vector<std::pair<uint64_t, uint64_t>> data_ranges(const IndexedFile& f) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  size_t h = 0;
  for (const IndexedFile::Range& r : f.ranges) {
    uint64_t at = r.offset;
    const uint64_t end = r.offset + r.length;
    while (h < f.holes.size() && f.holes[h].first + f.holes[h].second <= at) ++h;
    for (size_t k = h; k < f.holes.size() && f.holes[k].first < end; ++k) {
      if (f.holes[k].first > at) out.emplace_back(at, f.holes[k].first);
      at = std::max(at, f.holes[k].first + f.holes[k].second);
    }
    if (at < end) out.emplace_back(at, end);
  }
  return out;
}

// The elements the engine's writers wrote, from its index's checksum ranges (index version 3)
// less its holes: a byte range of the file maps to the variable that holds it. Nothing for
// older indexes.
std::optional<Coverage> written_elements(const OutputIndex& index) {
  Coverage c(index.variables.size());
  for (const IndexedFile& f : index.files) {
    if (f.ranges.empty()) return std::nullopt;
    for (const auto& [first, last] : data_ranges(f)) {
      const uint64_t lo = first + f.begin, hi = last + f.begin;  // global bytes
      for (size_t v = 0; v < index.variables.size(); ++v) {
        const IndexedVariable& iv = index.variables[v];
        uint64_t n = 1;
        for (uint64_t dim : iv.dims) n *= dim;
        const uint64_t vb = iv.file_offset, ve = vb + n * iv.element_size;
        const uint64_t b = std::max(lo, vb), e = std::min(hi, ve);
        if (b < e) add_coverage(c, v, (b - vb) / iv.element_size, (e - vb + iv.element_size - 1) / iv.element_size);
      }
    }
  }
  merge_coverage(c);
  return c;
}

// The kernel's decomposition of this rank; for a read alone, the layout of what was written: the
// output's index (the engine's raw container), or the writers' decomposition (--writer-ranks),
// each rank checking an even share of it. Collective.
KernelSetup build_setup(const RunOptions& o, const Target& target, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Kernel& kernel = find_kernel(o.kernel);
  KernelSetup setup;
  collectively(comm, [&] {
    setup = kernel.build(o.parsed, rank, size);
    std::optional<OutputIndex> index;
    if (!o.writes() && o.writer_ranks == 0 && target.layout == Layout::shared && !setup.own_read_layout)
      index = read_output_index(target.path);
    if (index) {
      // The output's index gives the global layout; the kernel gives each variable's type.
      std::vector<Variable> vars;
      for (const IndexedVariable& iv : index->variables) {
        auto it = std::find_if(setup.decomposition.variables.begin(), setup.decomposition.variables.end(),
                               [&](const Variable& v) { return v.name == iv.name; });
        if (it == setup.decomposition.variables.end() || elem_size(it->type) != iv.element_size) {
          throw_usage("the index of \"" + target.path + "\" holds variable \"" + iv.name + "\", which kernel " +
                      o.kernel + " does not define with that element size");
        }
        Variable v = *it;  // keeps a record variable's fields
        v.shape = iv.dims;
        vars.push_back(v);
      }
      const uint64_t t = setup.decomposition.transfer_bytes;
      const std::optional<Coverage> written = written_elements(*index);
      setup.decomposition = written ? even_share(vars, *written, rank, size) : even_share(vars, rank, size);
      setup.decomposition.transfer_bytes = t;
      setup.params["writer_ranks"] = index->writer_ranks;
      setup.params["layout_from"] = "index";
    } else if (o.writer_ranks > 0) {
      // The global layout is the writers'; this rank reads and checks an even share of it.
      // Only what some writer owned is checked (a PIO map's holes were never written).
      KernelSetup writers = kernel.build(o.parsed, 0, static_cast<int>(o.writer_ranks));
      Coverage written;
      add_coverage(writers.decomposition, written);
      for (int w = 1; w < static_cast<int>(o.writer_ranks); ++w) {
        add_coverage(kernel.build(o.parsed, w, static_cast<int>(o.writer_ranks)).decomposition, written);
      }
      const uint64_t t = writers.decomposition.transfer_bytes;
      setup.decomposition = even_share(writers.decomposition.variables, written, rank, size);
      setup.decomposition.transfer_bytes = t;
      setup.params = writers.params;
      setup.params["writer_ranks"] = o.writer_ranks;
    }
    setup.decomposition.validate();
  });
  return setup;
}

// How many ranks on each rank reads back (--reorder-tasks N, or IOR's -C: --reorder-nodes nodes'
// worth of ranks, one rank on a single node); 0: each rank reads what it wrote.
uint64_t read_shift(const RunOptions& o, const NodeMap& nodes, int size) {
  if (o.reorder_tasks > 0) return o.reorder_tasks % static_cast<uint64_t>(size);
  if (!o.reorder_by_node) return 0;
  const uint64_t per_node = static_cast<uint64_t>(size / std::max(1, nodes.node_count));
  const uint64_t shift = (o.reorder_nodes * per_node) % static_cast<uint64_t>(size);
  return shift == 0 ? 1 % static_cast<uint64_t>(size) : shift;
}

// --drop-caches: one rank per node syncs and drops the node's clean page cache, so the read that
// follows comes from the storage, not from memory. Collective; a runtime Error when refused.
void drop_page_cache(MPI_Comm comm, const NodeMap& nodes) {
  collectively(comm, "drop caches", [&] {
    if (nodes.local_rank != 0) return;
    ::sync();
    std::FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w");
    if (f == nullptr) throw_system("--drop-caches: cannot open /proc/sys/vm/drop_caches", errno);
    const bool ok = std::fputs("3\n", f) >= 0;
    if (std::fclose(f) != 0 || !ok) throw_system("--drop-caches: writing /proc/sys/vm/drop_caches failed", errno);
  });
}

class DecompositionWorkload final : public Workload {
 public:
  DecompositionWorkload(const RunOptions& o, MPI_Comm comm, const NodeMap& nodes)
      : o_(o),
        comm_(comm),
        nodes_(nodes),
        row_(backend_row(o.backend)),
        raw_file_(row_.can.raw_file && o.io.container == "raw") {
    target_.path = !o.io.drain.empty() ? o.io.drain
                   : o.output.empty()  ? default_output(o.kernel, o.backend, o.io)
                                       : o.output;
    target_.layout = o.layout();
    target_.node_local = o.node_local;
    setup_ = build_setup(o, target_, comm);
    const Decomposition& d = setup_.decomposition;
    // The default watchdog's limit covers one access of the whole output on a slow file system.
    watchdog::allow_for_bytes(static_cast<double>(d.global_bytes()));

    BackendContext ctx;
    ctx.comm = comm;
    MPI_Comm_rank(comm, &ctx.rank);
    MPI_Comm_size(comm, &ctx.size);
    ctx.hints = o.hints;
    ctx.io_component = io_component();
    ctx.io = o.io;
    values_.seed = o.seed;
    values_.step = o.step;
    outputs_ = plan_outputs(comm, nodes, target_, d, setup_.checkpoint_steps, values_, ctx);
    file_ = outputs_.front().ctx.file;
    collectively(comm, [&] { fs_ = fs_info(file_.path); });
    collectively(comm, [&] {  // strata advise's hints under the explicit ones (src/advise/run_advice.hpp)
      advise::RunFacts facts;
      facts.backend = o.backend;
      facts.mpi_io = row_.can.mpi_io;
      facts.call_per_variable = row_.can.call_per_variable;
      facts.sizes_own_buffers = row_.can.sizes_own_buffers;
      facts.io_component = ctx.io_component;
      facts.fs_type = fs_.type;
      facts.variables = static_cast<int64_t>(d.variables.size());
      facts.files = file_.files;
      // The largest variable of a shared file; derived from the blocks otherwise.
      for (const auto& v : d.variables)
        facts.dataset_bytes = file_.files == 1 ? std::max(facts.dataset_bytes, v.bytes()) : 0;
      advice_ = advise::advice_for_run(advise::run_facts(file_.comm, nodes, d.local_bytes(), d.transfer_bytes, facts),
                                       o.hints, !o.no_advice);
    });
    for (RunOutput& out : outputs_) {
      out.ctx.hints = advice_.hints;
      collectively(comm, [&] { out.backend = make_backend(o.backend, out.ctx, d, out.target); });
    }
    // Reading back another rank's part (IOR -C): a reader of each output with the blocks that rank
    // writes (after this run's write, or in an existing file written with the same options).
    shift_ = read_shift(o, nodes, ctx.size);
    if (shift_ > 0) {
      const int from = static_cast<int>((static_cast<uint64_t>(ctx.rank) + shift_) % static_cast<uint64_t>(ctx.size));
      collectively(comm, [&] {
        read_setup_ = find_kernel(o.kernel).build(o.parsed, from, ctx.size);
        read_setup_.decomposition.validate();
      });
      for (RunOutput& out : outputs_) {
        collectively(
            comm, [&] { readers_.push_back(make_backend(o.backend, out.ctx, read_setup_.decomposition, out.target)); });
      }
      setup_.params["read_back_from"] = "rank + " + std::to_string(shift_);
    }
    data_.resize(d.local_bytes());
    fill(d, outputs_.front().values, data_.data());  // a lone checkpoint's values are its step's
    if (o.read || o.verify) back_.resize(reading().local_bytes());
  }

  Repetition repeat(bool first, std::optional<std::string>& failure) override {
    const Decomposition& d = setup_.decomposition;
    const uint64_t local = data_.size();  // d.local_bytes(), a walk over every block: not once a repetition
    Repetition r;
    for (size_t k = 0; k < outputs_.size(); ++k) {
      RunOutput& out = outputs_[k];
      if (failure) break;
      Backend& backend = *out.backend;
      Backend& reader = readers_.empty() ? backend : *readers_[k];
      const Decomposition& rd = reading();
      std::optional<PhaseTiming> written, read;
      if (outputs_.size() > 1 && o_.writes()) fill(d, out.values, data_.data());  // this checkpoint's values
      if (o_.writes()) {
        // The engine replaces its own output only when the new one commits (after its plan has
        // agreed on the hints, the declarations and the machine file): removing it here first
        // would lose the previous output to a bad hint or a crash (docs/reliability.md).
        if (!backend.commits_output()) collectively(comm_, [&] { remove_output(out.ctx); });
        try {
          written = timed_access(backend, comm_, Access::write, data_.data(), local);
        } catch (const Error& e) {
          // MPI-IO, HDF5 and PnetCDF often say only "input/output error": name a full disk.
          const std::string text = e.what();
          if (text.find("No space left") != std::string::npos) throw;
          const std::string note = no_space_note(out.ctx.file.path);
          if (note.empty()) throw;
          throw Error(e.kind(), text + note);
        }
        // Never a false success: the file is there, and a raw one spans the decomposition (a
        // container holds its data: not after --deadline stopped the write, which moved only part).
        const bool stonewalled = !o_.io.deadline.empty() && !raw_file_;
        collectively(comm_, backend.name() + " write: check", [&] {
          if (!stonewalled) check_written(out.ctx.file, raw_file_, backend.commits_output());
        });
        if (first) in_effect_ = backend.hints_in_effect();
        if (o_.verify && !o_.read) {  // untimed read-back
          std::fill(back_.begin(), back_.end(), std::byte{0xA5});
          collectively(comm_, [&] { reader.open(Access::read); });
          collectively(comm_, [&] { reader.transfer(Access::read, back_.data()); });
          collectively(comm_, [&] { reader.close(); });
          failure = verify_everywhere(comm_, rd, out.values, back_.data());
        }
      }
      if (o_.read && !failure) {
        std::fill(back_.begin(), back_.end(), std::byte{0xA5});
        if (o_.drop_caches) drop_page_cache(comm_, nodes_);
        read = timed_access(reader, comm_, Access::read, back_.data(), back_.size());
        if (first && !o_.writes()) in_effect_ = backend.hints_in_effect();
        if (o_.verify) failure = verify_everywhere(comm_, rd, out.values, back_.data());
        // Wrong values read alone from a file too short to hold the data: the file is truncated
        // (PnetCDF reads a missing end as zeros). The backends' own checks come first: they name
        // a well-formed file of another layout more precisely.
        if (failure && !o_.writes()) {
          collectively(comm_, backend.name() + " read: check",
                       [&] { check_readable(out.ctx.file, raw_file_, backend.commits_output()); });
        }
      }
      if (failure && out.checkpoint) *failure = "checkpoint " + out.target.path + ": " + *failure;
      add_output_timing(r, out, written, read);
    }
    return r;
  }

  Hints hints_in_effect() const override {
    const bool ompio = outputs_.front().ctx.io_component == "ompio";
    return ompio && row_.can.hints != HintFamily::none ? merge_hints(in_effect_, ompio_settings()) : in_effect_;
  }

  std::string output_path() const override { return file_.path; }

  nlohmann::json header() const override {
    const Decomposition& d = setup_.decomposition;
    nlohmann::json h = {
        {"params", setup_.params},
        {"advice", advise::to_json(advice_)},
        {"fs_type", fs_.type},
        {"fs_block_size", fs_.block_size},
        {"output", target_.path},
        {"layout", layout_name(target_.layout)},
        {"file_per_process", target_.layout == Layout::file_per_process},
        {"files", file_.files},
        {"node_local", target_.node_local},
        {"bytes_per_rank", {{"local", d.local_bytes()}}},
        {"global_bytes", d.global_bytes()},
    };
    if (target_.node_local) h["node_local_root"] = node_local_root();
    return h;
  }

 private:
  // What this rank reads: its own blocks, or another rank's with --reorder-tasks / -C.
  const Decomposition& reading() const { return shift_ > 0 ? read_setup_.decomposition : setup_.decomposition; }

  const RunOptions& o_;
  MPI_Comm comm_;
  const NodeMap& nodes_;
  const BackendRow& row_;
  bool raw_file_;  // the output holds raw bytes (check_written measures it), not a container
  Target target_;
  KernelSetup setup_;
  uint64_t shift_ = 0;
  KernelSetup read_setup_;
  std::vector<std::unique_ptr<Backend>> readers_;
  ValueStream values_;
  std::vector<RunOutput> outputs_;
  FileGroup file_;
  FsInfo fs_;
  advise::RunAdvice advice_;
  std::vector<std::byte> data_, back_;
  Hints in_effect_;
};

}  // namespace

std::unique_ptr<Workload> decomposition_workload(const RunOptions& options, MPI_Comm comm, const NodeMap& nodes) {
  return std::make_unique<DecompositionWorkload>(options, comm, nodes);
}

}  // namespace strata
