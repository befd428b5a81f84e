// hdf5: parallel HDF5 through the MPI-IO driver. One dataset per variable (contiguous layout,
// early allocation, no fill), collective H5Dwrite/H5Dread of a hyperslab selection: the OR of
// the rank's blocks, or, when a transfer size splits the data into steps, the boxes of each
// step's runs. Memory is the rank's data in file order, as HDF5 iterates a selection.
// With --per-block: one collective H5Dwrite/H5Dread per block instead (for each dataset, as
// many calls as the rank with the most blocks of it has; the others select nothing), the
// multi-dataset paper's "collective I/O" baseline. With --independent, the same calls are
// independent (H5FD_MPIO_INDEPENDENT).
// hdf5-multi (built where HDF5 >= 1.14 has H5Dwrite_multi: make build-hdf5-114): the same file,
// the same selections, but all of a step's datasets in one H5Dwrite_multi / H5Dread_multi, the
// multi-dataset paper's MDIO inside HDF5 (one collective call per transfer step, not per dataset).
#include <hdf5.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "backends/backend.hpp"
#include "backends/transfer_steps.hpp"
#include "common/error.hpp"
#include "datasets/hdf5_types.hpp"
#include "fs/hints_in_effect.hpp"
#include "fs/mpiio_file.hpp"
#include "fs/open_check.hpp"

namespace strata {

namespace {

class Hdf5Backend final : public Backend {
 public:
  // multi: one H5Dwrite_multi / H5Dread_multi per step for every dataset (hdf5-multi).
  Hdf5Backend(const BackendContext& ctx, const Decomposition& d, const Target&, bool multi = false)
      : ctx_(ctx), d_(d), multi_(multi) {
    quiet_hdf5_errors();
    if (!ctx_.io.per_block) {  // the decomposition's file order, once (docs/backends.md)
      order_.emplace(d_);
      order_blocks();
      // A variable's selection is the OR of its blocks or of its runs in file order (merged
      // where they meet), whichever is fewer: a real PIO map has twice as many blocks as runs.
      std::vector<size_t> runs(d_.variables.size());
      for (const Extent& e : order_->extents()) ++runs[static_cast<size_t>(e.var)];
      by_runs_.resize(d_.variables.size());
      for (size_t v = 0; v < runs.size(); ++v) by_runs_[v] = runs[v] < blocks_of_[v].size();
    }
  }
  ~Hdf5Backend() override {
    datasets_.clear();
    if (file_.get() >= 0) H5Fclose(file_.release());
  }

  std::string name() const override { return multi_ ? "hdf5-multi" : "hdf5"; }

  // The transfer's error is kept for close, whose driver agreement reports it: every rank makes
  // every collective call of a transfer whatever fails, so an agreement of its own carries
  // nothing new (open and close keep the driver's: the library's open and close are collective).
  bool agrees_on(BackendStep step) const override { return step == BackendStep::transfer; }

  void transfer(Access access, std::byte* buffer) override {
    kept_.run([&] { move_data(access, buffer); });
  }

  void open(Access access) override {
    access_ = access;
    H5Id fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
    MpiInfo info(ctx_.hints);
    check_status(H5Pset_fapl_mpio(fapl.get(), ctx_.comm, info.get()), "H5Pset_fapl_mpio");
    // As E3SM-IO's HDF5 path: the newest file format (compact object headers and link storage:
    // hundreds of datasets cost less to create) and metadata written collectively at close.
    // Metadata reads stay independent, as in IOR and E3SM-IO.
    check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "H5Pset_libver_bounds");
    check_status(H5Pset_coll_metadata_write(fapl.get(), true), "H5Pset_coll_metadata_write");
    Hints printed, from_info;
    const uint64_t free_bytes = check_openable_everywhere(ctx_.comm, ctx_.file.path, access);
    RomioHintCapture capture(ctx_.io_component == "romio");
    if (access == Access::write) {
      file_ = H5Id(check_id(H5Fcreate(mpiio_path(ctx_.file.path).c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                            "cannot create HDF5 file \"" + ctx_.file.path + "\""));
      H5Id dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
      check_status(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
      check_status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
      check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
      for (const Variable& v : d_.variables) {
        std::vector<hsize_t> dims(v.shape.begin(), v.shape.end());
        H5Id space(check_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple"));
        if (printed.empty()) printed = capture.finish();
        datasets_.emplace_back(check_id(H5Dcreate2(file_.get(), v.name.c_str(), hdf5_file_type(v.type), space.get(),
                                                   H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                                        "cannot create dataset \"" + v.name + "\" in \"" + ctx_.file.path + "\""));
      }
      // Where the disk may fill up, the metadata goes to the file now, while it is small and
      // before the data: a data write that fails then leaves nothing dirty, so the file still
      // closes. With dirty metadata its close fails too, the file stays open, and HDF5 closes it
      // again inside MPI_Finalize, where it has crashed (ROMIO) or hung (OMPIO). The flush is an
      // MPI_File_sync (an fsync per rank) in HDF5 1.10, so it is made only when the data could
      // fill the file system (its free space, agreed by the open check, below twice the data
      // plus 64 MiB); a quota, which statvfs does not show, is not foreseen.
      const uint64_t data = d_.global_bytes();
      if (free_bytes / 2 < data + (uint64_t{32} << 20)) {
        check_status(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), "H5Fflush of \"" + ctx_.file.path + "\"");
      }
    } else {
      file_ = H5Id(check_id(H5Fopen(mpiio_path(ctx_.file.path).c_str(), H5F_ACC_RDONLY, fapl.get()),
                            "cannot open HDF5 file \"" + ctx_.file.path + "\" for reading"));
      printed = capture.finish();
      for (const Variable& v : d_.variables) {
        if (H5Lexists(file_.get(), v.name.c_str(), H5P_DEFAULT) <= 0) {
          throw_runtime("HDF5 file \"" + ctx_.file.path + "\" has no dataset \"" + v.name + "\"");
        }
        H5Id ds(check_id(H5Dopen2(file_.get(), v.name.c_str(), H5P_DEFAULT), "cannot open dataset \"" + v.name + "\""));
        check_shape(ds.get(), v);
        datasets_.push_back(std::move(ds));
      }
    }
    printed = printed.empty() ? capture.finish() : printed;
    offsets_.clear();
    for (const H5Id& ds : datasets_) {
      const haddr_t off = H5Dget_offset(ds.get());
      offsets_.push_back(off == HADDR_UNDEF ? 0 : static_cast<uint64_t>(off));
    }
    hid_t driver_fapl = H5Fget_access_plist(file_.get());
    void* handle = nullptr;
    if (driver_fapl >= 0 && H5Fget_vfd_handle(file_.get(), driver_fapl, &handle) >= 0 && handle != nullptr) {
      mpi_file_ = *static_cast<MPI_File*>(handle);
      MPI_Info got = MPI_INFO_NULL;
      if (MPI_File_get_info(mpi_file_, &got) == MPI_SUCCESS) from_info = MpiInfo(got).entries();
    }
    in_effect_ = effective_hints(from_info, printed);
    if (driver_fapl >= 0) H5Pclose(driver_fapl);
  }

  void move_data(Access access, std::byte* buffer) {
    requests_ = 0;
    stopped_at_.reset();
    spans_.clear();
    begin_collective_timing();
    if (ctx_.io.per_block) {
      transfer_per_block(access, buffer);
      return;
    }
    FileOrderBuffer stream(*order_, buffer, access);
    const TransferSteps steps = transfer_steps(ctx_.comm, d_);
    H5Id dxpl(check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"));
    check_status(H5Pset_dxpl_mpio(dxpl.get(), transfer_mode()), "H5Pset_dxpl_mpio");
    std::optional<Error> failure;  // every rank makes every collective call, then reports
    std::byte dummy[8] = {};
    // Each dataset's file space and one memory space, made once and selected again each step
    // (as IOR does): a space made and closed per step and variable cost HDF5 a registration each.
    // hdf5-multi: a memory space per dataset, all of them in the step's one call.
    std::vector<H5Id> filespaces(d_.variables.size());
    std::vector<H5Id> memspaces(multi_ ? d_.variables.size() : 1);
    hsize_t one = 1;
    for (H5Id& m : memspaces) m = H5Id(check_id(H5Screate_simple(1, &one, nullptr), "H5Screate_simple"));
    MultiCall call;
    std::vector<Extent> clipped;
    // IOR -D: between steps, rank 0 decides for every rank (the calls are collective; with
    // --independent every rank still makes each step's selections, so all stop at one step).
    Stonewall wall(ctx_.io.deadline, ctx_.comm);
    for (uint64_t s = 0; s < steps.count; ++s) {
      if (wall.reached()) {
        stopped_at_ = std::min(d_.local_bytes(), s * steps.step_bytes);
        break;
      }
      if (steps.count > 1)
        clipped = clip_to_memory(d_, stream.extents(), s * steps.step_bytes, (s + 1) * steps.step_bytes);
      // The step's extents are in file order (variable, then element), so each variable's are one
      // range of them: no copy per variable (a real decomposition has hundreds of thousands).
      const std::vector<Extent>& step = steps.count > 1 ? clipped : stream.extents();
      size_t next = 0;
      for (size_t v = 0; v < d_.variables.size(); ++v) {
        const Variable& var = d_.variables[v];
        const size_t begin = next;
        while (next < step.size() && static_cast<size_t>(step[next].var) == v) ++next;
        const Extent* const lo = step.data() + begin;
        const Extent* const hi = step.data() + next;
        uint64_t n = 0;
        std::byte* first = nullptr;
        CallSpan span;
        const uint64_t es = elem_size(var.type);
        for (const Extent* e = lo; e != hi; ++e) {
          if (first == nullptr) {
            first = stream.data() + e->mem_offset;
            span.lo = offsets_[v] + e->elem_begin * es;
          }
          span.hi = offsets_[v] + (e->elem_begin + e->elems) * es;
          n += e->elems;
        }
        if (multi_) {
          if (n > 0)
            call.span = call.n == 0 ? span : CallSpan{std::min(call.span.lo, span.lo), std::max(call.span.hi, span.hi)};
          call.n += n;
        } else {
          spans_.push_back(span);
        }
        try {
          if (filespaces[v].get() < 0) filespaces[v] = H5Id(check_id(H5Dget_space(datasets_[v].get()), "H5Dget_space"));
          const hid_t filespace = filespaces[v].get();
          if (n == 0) {
            check_status(H5Sselect_none(filespace), "H5Sselect_none");
          } else if (steps.count == 1 && !by_runs_[v]) {
            select_blocks(filespace, v);
          } else {
            select_boxes(filespace, var, lo, hi);
          }
          const hid_t memspace = memspaces[multi_ ? v : 0].get();
          hsize_t mem_n = n == 0 ? 1 : n;
          check_status(H5Sset_extent_simple(memspace, 1, &mem_n, nullptr), "H5Sset_extent_simple");
          check_status(n == 0 ? H5Sselect_none(memspace) : H5Sselect_all(memspace), "H5Sselect");
          void* ptr = first != nullptr ? static_cast<void*>(first) : static_cast<void*>(dummy);
          if (multi_) {
            call.add(datasets_[v].get(), hdf5_memory_type(var.type), memspace, filespace, ptr);
          } else {
            move_selection(access, v, memspace, filespace, dxpl.get(), ptr, "dataset");
          }
        } catch (const Error& e) {
          if (!failure) failure = e;
          // hdf5-multi: the dataset still goes in the step's call, selecting nothing here.
          if (multi_ && call.datasets.size() == v) add_nothing(call, v, memspaces[v].get(), filespaces[v].get(), dummy);
        }
      }
      if (multi_) {  // every rank makes the step's call, with every dataset, whatever failed before
        spans_.push_back(call.n > 0 ? call.span : CallSpan{});
        try {
          move_multi(access, call, dxpl.get());
        } catch (const Error& e) {
          if (!failure) failure = e;
        }
        call = MultiCall{};
      }
    }
    if (failure) throw *failure;
    if (access == Access::read) stream.finish_read();
  }

  void close() override {
    datasets_.clear();
    std::optional<Error> failure = kept_.take();  // the transfer's, reported first
    if (file_.get() < 0) {
      if (failure) throw *failure;
      return;
    }
    if (ctx_.io.fsync && access_ == Access::write) {
      if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0 && !failure) {
        try {
          throw_hdf5("H5Fflush of \"" + ctx_.file.path + "\" failed");
        } catch (const Error& e) {
          failure = e;
        }
      }
      if (mpi_file_ != MPI_FILE_NULL) {
        int rc = MPI_File_sync(mpi_file_);
        if (rc != MPI_SUCCESS && !failure)
          failure = Error(ErrorKind::runtime, "MPI_File_sync of \"" + ctx_.file.path + "\" failed");
      }
    }
    mpi_file_ = MPI_FILE_NULL;
    herr_t rc = H5Fclose(file_.release());
    if (failure) throw *failure;
    if (rc < 0) throw_hdf5("H5Fclose of \"" + ctx_.file.path + "\" failed");
  }

  Hints hints_in_effect() const override { return in_effect_; }
  uint64_t requests() const override { return requests_; }
  uint64_t moved_bytes(uint64_t asked) const override { return stopped_at_ ? *stopped_at_ : asked; }
  CollectiveStats collective_calls(double transfer_s) override {
    if (ctx_.io.independent) return {};  // no collective data calls to account for (the same on every rank)
    return mpiio_collective_stats(ctx_.comm, spans_, in_effect_, transfer_s);
  }

 private:
  // The datasets of one H5Dwrite_multi / H5Dread_multi, and this rank's file bytes in it.
  struct MultiCall {
    std::vector<hid_t> datasets, types, memspaces, filespaces;
    std::vector<void*> buffers;
    uint64_t n = 0;  // elements this rank moves
    CallSpan span;
    void add(hid_t ds, hid_t type, hid_t mem, hid_t file, void* buf) {
      datasets.push_back(ds);
      types.push_back(type);
      memspaces.push_back(mem);
      filespaces.push_back(file);
      buffers.push_back(buf);
    }
  };

  // Dataset v in `call` with nothing selected (after its selection failed on this rank).
  void add_nothing(MultiCall& call, size_t v, hid_t memspace, hid_t filespace, std::byte* dummy) const {
    if (filespace < 0 || H5Sselect_none(filespace) < 0 || H5Sselect_none(memspace) < 0) return;
    call.add(datasets_[v].get(), hdf5_memory_type(d_.variables[v].type), memspace, filespace, dummy);
  }

  // One H5Dwrite_multi or H5Dread_multi of every dataset of `call`; counts the request. A rank
  // whose selections failed to build passes what it has: the call must still be made collectively.
  void move_multi(Access access, MultiCall& call, hid_t dxpl) {
#ifdef STRATA_HAVE_HDF5_MULTI
    if (call.datasets.size() != d_.variables.size()) {
      // A dataset this rank could not even select nothing in: it cannot join the call.
      throw_runtime("hdf5-multi: a selection failed on this rank before H5D" +
                    std::string(access == Access::write ? "write" : "read") + "_multi");
    }
    std::vector<const void*> cbufs(call.buffers.begin(), call.buffers.end());
    const herr_t rc = access == Access::write
                          ? H5Dwrite_multi(call.datasets.size(), call.datasets.data(), call.types.data(),
                                           call.memspaces.data(), call.filespaces.data(), dxpl, cbufs.data())
                          : H5Dread_multi(call.datasets.size(), call.datasets.data(), call.types.data(),
                                          call.memspaces.data(), call.filespaces.data(), dxpl, call.buffers.data());
    ++requests_;
    check_status(rc, std::string(access == Access::write ? "H5Dwrite_multi" : "H5Dread_multi") + " of " +
                         std::to_string(call.datasets.size()) + " datasets in \"" + ctx_.file.path + "\" failed");
#else
    (void)access, (void)call, (void)dxpl;
    throw_usage("hdf5-multi needs HDF5 >= 1.14 (make build-hdf5-114)");
#endif
  }

  // Collective unless --independent (IOR's -c, and its default). HDF5 1.10 itself falls back to
  // independent I/O when a write converts types (E3SM-IO's float path from double data).
  H5FD_mpio_xfer_t transfer_mode() const { return ctx_.io.independent ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE; }

  // One H5Dwrite or H5Dread of dataset v's selection (collective unless --independent); counts the request.
  void move_selection(Access access, size_t v, hid_t memspace, hid_t filespace, hid_t dxpl, void* ptr,
                      const char* what) {
    const Variable& var = d_.variables[v];
    const herr_t rc = access == Access::write
                          ? H5Dwrite(datasets_[v].get(), hdf5_memory_type(var.type), memspace, filespace, dxpl, ptr)
                          : H5Dread(datasets_[v].get(), hdf5_memory_type(var.type), memspace, filespace, dxpl, ptr);
    ++requests_;
    if (rc >= 0) return;
    check_status(rc, std::string(access == Access::write ? "H5Dwrite" : "H5Dread") + " of " + what + " \"" + var.name +
                         "\" in \"" + ctx_.file.path + "\" failed");
  }

  // One collective call per block: for dataset v, calls k = 0 .. max over ranks of its blocks.
  void transfer_per_block(Access access, std::byte* buffer) {
    const size_t nv = d_.variables.size();
    std::vector<std::vector<std::pair<const Block*, uint64_t>>> mine(nv);  // block, memory offset
    uint64_t mem = 0;
    for (const Block& b : d_.blocks) {
      mine[static_cast<size_t>(b.var)].push_back({&b, mem});
      mem += b.elements() * elem_size(d_.variables[static_cast<size_t>(b.var)].type);
    }
    std::vector<unsigned long long> counts(nv), most(nv);
    for (size_t v = 0; v < nv; ++v) counts[v] = mine[v].size();
    MPI_Allreduce(counts.data(), most.data(), static_cast<int>(nv), MPI_UNSIGNED_LONG_LONG, MPI_MAX, ctx_.comm);
    H5Id dxpl(check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"));
    check_status(H5Pset_dxpl_mpio(dxpl.get(), transfer_mode()), "H5Pset_dxpl_mpio");
    std::optional<Error> failure;
    std::byte dummy[8] = {};
    for (size_t v = 0; v < nv; ++v) {
      const Variable& var = d_.variables[v];
      const uint64_t es = elem_size(var.type);
      for (unsigned long long k = 0; k < most[v]; ++k) {
        const Block* b = k < mine[v].size() ? mine[v][k].first : nullptr;
        CallSpan span;
        try {
          H5Id filespace(check_id(H5Dget_space(datasets_[v].get()), "H5Dget_space"));
          hsize_t n = 1;
          if (b == nullptr) {
            check_status(H5Sselect_none(filespace.get()), "H5Sselect_none");
          } else {
            std::vector<hsize_t> start(b->start.begin(), b->start.end()), count(b->count.begin(), b->count.end());
            check_status(
                H5Sselect_hyperslab(filespace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
                "H5Sselect_hyperslab");
            n = b->elements();
            std::vector<uint64_t> last(b->start);
            for (size_t i = 0; i < last.size(); ++i) last[i] += b->count[i] - 1;
            span = {offsets_[v] + linear_index(var.shape, b->start) * es,
                    offsets_[v] + (linear_index(var.shape, last) + 1) * es};
          }
          H5Id memspace(check_id(H5Screate_simple(1, &n, nullptr), "H5Screate_simple"));
          if (b == nullptr) check_status(H5Sselect_none(memspace.get()), "H5Sselect_none");
          void* ptr = b != nullptr ? static_cast<void*>(buffer + mine[v][k].second) : static_cast<void*>(dummy);
          move_selection(access, v, memspace.get(), filespace.get(), dxpl.get(), ptr, "a block of dataset");
        } catch (const Error& e) {
          if (!failure) failure = e;
        }
        spans_.push_back(span);
      }
    }
    if (failure) throw *failure;
  }

  void check_shape(hid_t ds, const Variable& v) const {
    H5Id space(check_id(H5Dget_space(ds), "H5Dget_space"));
    int nd = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> dims(static_cast<size_t>(nd > 0 ? nd : 0));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    std::vector<uint64_t> got(dims.begin(), dims.end());
    if (got != v.shape) {
      std::string want_s, got_s;
      for (auto x : v.shape) want_s += (want_s.empty() ? "" : "x") + std::to_string(x);
      for (auto x : got) got_s += (got_s.empty() ? "" : "x") + std::to_string(x);
      throw_runtime("dataset \"" + v.name + "\" in \"" + ctx_.file.path + "\" has shape " + got_s +
                    ", the kernel expects " + want_s);
    }
    H5Id type(check_id(H5Dget_type(ds), "H5Dget_type"));
    if (H5Tget_size(type.get()) != elem_size(v.type)) {
      throw_runtime("dataset \"" + v.name + "\" in \"" + ctx_.file.path + "\" holds " +
                    std::to_string(H5Tget_size(type.get())) + "-byte elements, the kernel expects " +
                    elem_name(v.type));
    }
  }

  // Each variable's blocks in file order of their first element (blocks_of_).
  void order_blocks() {
    blocks_of_.resize(d_.variables.size());
    std::vector<std::vector<std::pair<uint64_t, const Block*>>> ordered(d_.variables.size());
    for (const Block& b : d_.blocks) {
      const size_t v = static_cast<size_t>(b.var);
      ordered[v].push_back({linear_index(d_.variables[v].shape, b.start), &b});
    }
    for (size_t v = 0; v < ordered.size(); ++v) {
      std::sort(ordered[v].begin(), ordered[v].end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (const auto& [at, bp] : ordered[v]) blocks_of_[v].push_back(bp);
    }
  }

  // Selects variable `var`'s blocks (blocks_of_).
  void select_blocks(hid_t space, size_t var) {
    if (d_.variables[var].shape.size() > H5S_MAX_RANK) throw_usage("HDF5 datasets have at most 32 dimensions");
    bool first = true;
    hsize_t start[H5S_MAX_RANK], count[H5S_MAX_RANK];  // no allocation per block: there can be 10^5
    for (const Block* bp : blocks_of_[var]) {
      const Block& b = *bp;
      std::copy(b.start.begin(), b.start.end(), start);
      std::copy(b.count.begin(), b.count.end(), count);
      check_status(H5Sselect_hyperslab(space, first ? H5S_SELECT_SET : H5S_SELECT_OR, start, nullptr, count, nullptr),
                   "H5Sselect_hyperslab");
      first = false;
    }
  }

  // The OR of extents [lo, hi) (all of one variable) as row-major boxes.
  void select_boxes(hid_t space, const Variable& v, const Extent* lo, const Extent* hi) const {
    bool first = true;
    for (const Extent* e = lo; e != hi; ++e) {
      for (const Box& box : linear_range_to_boxes(v.shape, e->elem_begin, e->elems)) {
        std::vector<hsize_t> start(box.start.begin(), box.start.end()), count(box.count.begin(), box.count.end());
        check_status(H5Sselect_hyperslab(space, first ? H5S_SELECT_SET : H5S_SELECT_OR, start.data(), nullptr,
                                         count.data(), nullptr),
                     "H5Sselect_hyperslab");
        first = false;
      }
    }
  }

  BackendContext ctx_;
  const Decomposition& d_;
  Access access_ = Access::read;
  H5Id file_;
  std::vector<H5Id> datasets_;
  KeptError kept_;  // the transfer's error, raised by close()
  MPI_File mpi_file_ = MPI_FILE_NULL;
  Hints in_effect_;
  uint64_t requests_ = 0;
  std::optional<uint64_t> stopped_at_;  // bytes moved when the deadline stopped the last transfer
  std::vector<uint64_t> offsets_;       // each dataset's file offset (H5Dget_offset)
  std::vector<CallSpan> spans_;         // this rank's file bytes in each collective call
  // The OR of each variable's blocks, added in file order of their first element: HDF5 1.10.8
  // misplaces elements when single-element hyperslabs are OR-ed out of order (seen on the e3sm
  // F case at 16 ranks: two elements written 70 and 160 places away), and appending in order
  // is also the cheap case for its span trees. Built with the backend.
  std::vector<std::vector<const Block*>> blocks_of_;
  std::optional<FileOrder> order_;  // the decomposition in file order (not with --per-block)
  std::vector<bool> by_runs_;       // per variable: select its runs (fewer than its blocks)
  bool multi_ = false;              // hdf5-multi: one H5Dwrite_multi / H5Dread_multi per step
};

}  // namespace

BackendRow hdf5_backend_row() {
  BackendRow row;
  row.name = "hdf5";
  row.summary =
      "parallel HDF5: a dataset per variable, collective (--independent: independent) H5Dwrite of hyperslab selections";
  row.make = [](const BackendContext& ctx, const Decomposition& d, const Target& t) -> std::unique_ptr<Backend> {
    if (ctx.io.per_block && d.transfer_bytes != 0) {
      throw_usage("--per-block makes one call per block; it cannot be combined with a transfer size");
    }
    if (ctx.io.per_block && !ctx.io.deadline.empty()) {
      throw_usage("--deadline stops a transfer between its steps; --per-block moves every block in one step");
    }
    return std::make_unique<Hdf5Backend>(ctx, d, t);
  };
  row.can.file_extension = ".h5";
  row.can.mpi_io = true;
  row.can.raw_file = false;  // a container: its library sizes it
  row.can.call_per_variable = true;
  row.can.options = {"per-block", "independent", "deadline"};
  row.can.collective = true;  // unless --independent
  row.test_variants = {{.name = "hdf5"}, {.name = "hdf5-per-block", .options = {"--per-block"}}};
  row.can.hints = HintFamily::mpi_io;
  return row;
}

#ifdef STRATA_HAVE_HDF5_MULTI
BackendRow hdf5_multi_backend_row() {
  BackendRow row = hdf5_backend_row();
  row.name = "hdf5-multi";
  row.summary =
      "parallel HDF5 >= 1.14: the hdf5 backend's file, every dataset of a step in one collective "
      "H5Dwrite_multi / H5Dread_multi";
  row.make = [](const BackendContext& ctx, const Decomposition& d, const Target& t) -> std::unique_ptr<Backend> {
    return std::make_unique<Hdf5Backend>(ctx, d, t, true);
  };
  row.can.call_per_variable = false;
  row.can.options = {"independent", "deadline"};
  row.test_variants = {};
  return row;
}
#endif

}  // namespace strata
