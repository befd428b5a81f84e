// pnetcdf: a CDF-5 file with one netCDF variable per Strata variable. Every block (or, when a
// transfer size splits the data into steps, every box of each step's runs) is posted with a
// non-blocking iput_vara/iget_vara, then one collective ncmpi_wait_all moves them together.
// With --independent, in PnetCDF's independent data mode: ncmpi_wait and independent put/get.
#include <pnetcdf.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "backends/backend.hpp"
#include "backends/transfer_steps.hpp"
#include "common/error.hpp"
#include "fs/hints_in_effect.hpp"
#include "fs/mpiio_file.hpp"
#include "fs/open_check.hpp"

namespace strata {

namespace {

void check_nc(int rc, const std::string& what) {
  if (rc != NC_NOERR) throw_runtime(what + ": " + ncmpi_strerror(rc));
}

nc_type nc_type_of(ElemType t) {
  switch (t) {
    case ElemType::u8: return NC_UBYTE;
    case ElemType::i32: return NC_INT;
    case ElemType::i64: return NC_INT64;
    case ElemType::u64: return NC_UINT64;
    case ElemType::f32: return NC_FLOAT;
    case ElemType::f64: return NC_DOUBLE;
    case ElemType::u16: return NC_USHORT;  // CDF-5 (the backend's format) has unsigned types
  }
  return NC_UBYTE;
}

MPI_Datatype mpi_type_of(ElemType t) {
  switch (t) {
    case ElemType::u8: return MPI_UNSIGNED_CHAR;
    case ElemType::i32: return MPI_INT;
    case ElemType::i64: return MPI_LONG_LONG;
    case ElemType::u64: return MPI_UNSIGNED_LONG_LONG;
    case ElemType::f32: return MPI_FLOAT;
    case ElemType::f64: return MPI_DOUBLE;
    case ElemType::u16: return MPI_UNSIGNED_SHORT;
  }
  return MPI_BYTE;
}

// Above this many boxes in a step (over all ranks), a step's boxes are posted and waited for
// together instead of one blocking call each.
constexpr uint64_t kMostVaraCallsPerStep = 4;

class PnetcdfBackend final : public Backend {
 public:
  PnetcdfBackend(const BackendContext& ctx, const Decomposition& d, const Target&) : ctx_(ctx), d_(d) {
    // The decomposition in file order, worked out once (docs/backends.md): transfer steps move
    // the data so, and one step's requests list the runs so when memory order differs. Kept
    // only where used (a rank without a transfer size takes steps only past 1 GiB).
    order_.emplace(d_);
    if (d_.transfer_bytes == 0) {
      prepare_one_step();
      if (!order_->staged()) order_.reset();  // made again if a rank's 1 GiB calls for steps
    }
  }
  ~PnetcdfBackend() override {
    if (ncid_ >= 0) ncmpi_close(ncid_);
  }

  std::string name() const override { return "pnetcdf"; }

  // The transfer's error is kept for close, whose driver agreement reports it: every rank makes
  // every collective call of a transfer whatever fails, so an agreement of its own carries
  // nothing new (open and close keep the driver's: the library's open and close are collective).
  bool agrees_on(BackendStep step) const override { return step == BackendStep::transfer; }

  void transfer(Access access, std::byte* buffer) override {
    kept_.run([&] { move_data(access, buffer); });
  }

  void open(Access access) override {
    access_ = access;
    MpiInfo info(ctx_.hints);
    varids_.clear();
    check_openable_everywhere(ctx_.comm, ctx_.file.path, access);
    RomioHintCapture capture(ctx_.io_component == "romio");
    if (access == Access::write) {
      check_nc(
          ncmpi_create(ctx_.comm, mpiio_path(ctx_.file.path).c_str(), NC_CLOBBER | NC_64BIT_DATA, info.get(), &ncid_),
          "cannot create netCDF file \"" + ctx_.file.path + "\"");
      // PnetCDF's rank 0 truncated the file the open check created: no writeback at close for it.
      if (ctx_.rank == 0) forget_truncation(ctx_.file.path);
      printed_ = capture.finish();
      int old_mode = 0;
      check_nc(ncmpi_set_fill(ncid_, NC_NOFILL, &old_mode), "ncmpi_set_fill");
      for (const Variable& v : d_.variables) {
        std::vector<int> dimids;
        for (size_t k = 0; k < v.shape.size(); ++k) {
          int id = -1;
          std::string dname = v.name + "_dim" + std::to_string(k);
          check_nc(ncmpi_def_dim(ncid_, dname.c_str(), static_cast<MPI_Offset>(v.shape[k]), &id),
                   "ncmpi_def_dim \"" + dname + "\"");
          dimids.push_back(id);
        }
        int varid = -1;
        check_nc(ncmpi_def_var(ncid_, v.name.c_str(), nc_type_of(v.type), static_cast<int>(dimids.size()),
                               dimids.data(), &varid),
                 "ncmpi_def_var \"" + v.name + "\"");
        varids_.push_back(varid);
      }
      check_nc(ncmpi_enddef(ncid_), "ncmpi_enddef of \"" + ctx_.file.path + "\"");
    } else {
      check_nc(ncmpi_open(ctx_.comm, mpiio_path(ctx_.file.path).c_str(), NC_NOWRITE, info.get(), &ncid_),
               "cannot open netCDF file \"" + ctx_.file.path + "\" for reading");
      printed_ = capture.finish();
      for (const Variable& v : d_.variables) {
        int varid = -1;
        check_nc(ncmpi_inq_varid(ncid_, v.name.c_str(), &varid),
                 "netCDF file \"" + ctx_.file.path + "\" has no variable \"" + v.name + "\"");
        check_shape(varid, v);
        varids_.push_back(varid);
      }
    }
    Hints from_info;
    MPI_Info got = MPI_INFO_NULL;
    if (ncmpi_inq_file_info(ncid_, &got) == NC_NOERR) from_info = MpiInfo(got).entries();
    // PnetCDF's own nc_* hints come from ncmpi_inq_file_info; ROMIO's from its report.
    Hints nc_hints, mpi_hints;
    for (const auto& kv : from_info) (kv.first.rfind("nc_", 0) == 0 ? nc_hints : mpi_hints).push_back(kv);
    in_effect_ = merge_hints(effective_hints(mpi_hints, printed_), nc_hints);
  }

  void move_data(Access access, std::byte* buffer) {
    requests_ = 0;
    stopped_at_.reset();
    begin_collective_timing();
    wait_calls_ = 0;
    span_ = whole_span();
    // One variable moved a transfer at a time (IOR's pattern): each box of a step becomes one
    // blocking collective put/get_vara_all, as IOR's put_vara_all per transfer. A nonblocking
    // post and wait_all, or put_varn_all (PnetCDF builds it on them), cost more a step: at -t 4k
    // on 8 ranks, 98 against 78 MiB/s. Every rank makes as many calls a step as the rank with the
    // most boxes in one step (zero-sized ones when it has fewer): agreed with the step count.
    TransferSteps steps = local_transfer_steps(d_);
    std::optional<FileOrderBuffer> stream;
    std::vector<std::vector<Box>> boxes;  // one_variable: each step's boxes, in memory order
    unsigned long long agreed[2] = {steps.count, 0};
    if (one_variable()) {
      stream.emplace(*order_, buffer, access);
      boxes = boxes_by_step(stream->extents(), steps);
      for (const auto& b : boxes) agreed[1] = std::max<unsigned long long>(agreed[1], b.size());
    }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, agreed, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, ctx_.comm), "MPI_Allreduce");
    steps.count = agreed[0];
    const uint64_t calls_per_step = agreed[1];
    std::optional<Error> failure;  // every rank makes every collective call, then reports
    // IOR -D: between steps, rank 0 decides for every rank (the calls are collective; in
    // independent mode too every rank goes through each step, so all stop at one step).
    Stonewall wall(ctx_.io.deadline, ctx_.comm);
    auto stonewalled = [&](uint64_t s) {
      if (!wall.reached()) return false;
      stopped_at_ = std::min(d_.local_bytes(), s * steps.step_bytes);
      return true;
    };
    if (ctx_.io.independent) check_nc(ncmpi_begin_indep_data(ncid_), "ncmpi_begin_indep_data");
    struct EndIndependent {  // collective too: every rank leaves the mode, whatever failed
      int ncid;
      bool on;
      ~EndIndependent() {
        if (on) ncmpi_end_indep_data(ncid);
      }
    } end_independent{ncid_, ctx_.io.independent};
    if (steps.count == 1) {
      // One request per run of consecutive blocks of one variable (contiguous in the user's
      // buffer: blocks are in memory order), as an iput_varn/iget_varn, straight from the buffer:
      // a real decomposition has hundreds of thousands of blocks a rank, and one request each
      // costs PnetCDF's posting and wait_all dearly. E3SM-IO posts so too.
      if (!one_step_ready_) prepare_one_step();  // a transfer size that all ranks' data fits in
      std::optional<FileOrderBuffer> staged;     // with requests in file order
      if (order_ && order_->staged()) staged.emplace(*order_, buffer, access);
      std::byte* base = staged ? staged->data() : buffer;
      for (const VarnRequest& r : varn_) post_varn(access, r, base + r.mem_offset, failure);
      wait_all(failure);
      if (failure) throw *failure;
      if (staged && access == Access::read) staged->finish_read();
      return;
    }
    if (!order_) order_.emplace(d_);
    if (!stream) stream.emplace(*order_, buffer, access);
    if (one_variable() && calls_per_step <= kMostVaraCallsPerStep) {
      boxes.resize(steps.count);
      const Variable& v = d_.variables[0];
      const std::vector<MPI_Offset> none(v.shape.size(), 0);
      std::byte* ptr = stream->data();
      for (uint64_t s = 0; s < steps.count && !stonewalled(s); ++s) {
        for (uint64_t k = 0; k < calls_per_step; ++k) {
          if (k >= boxes[s].size()) {
            if (!ctx_.io.independent) move_vara_all(access, none, none, ptr, 0, failure);
            continue;
          }
          const Box& box = boxes[s][k];
          std::vector<MPI_Offset> start(box.start.begin(), box.start.end()), count(box.count.begin(), box.count.end());
          uint64_t n = 1;
          for (auto c : box.count) n *= c;
          move_vara_all(access, start, count, ptr, n, failure);
          ptr += n * elem_size(v.type);
        }
      }
    } else {
      for (uint64_t s = 0; s < steps.count && !stonewalled(s); ++s) {
        for (const Extent& e :
             clip_to_memory(d_, stream->extents(), s * steps.step_bytes, (s + 1) * steps.step_bytes)) {
          const Variable& v = d_.variables[static_cast<size_t>(e.var)];
          uint64_t done = 0;
          for (const Box& box : linear_range_to_boxes(v.shape, e.elem_begin, e.elems)) {
            std::vector<MPI_Offset> start(box.start.begin(), box.start.end()),
                count(box.count.begin(), box.count.end());
            uint64_t n = 1;
            for (auto c : box.count) n *= c;
            post(access, e.var, start, count, stream->data() + e.mem_offset + done * elem_size(v.type), n, failure);
            done += n;
          }
        }
        wait_all(failure);
      }
    }
    if (!failure && access == Access::read) stream->finish_read();
    if (failure) throw *failure;
  }

  // The boxes of each of this rank's `steps` (one variable), in memory order.
  std::vector<std::vector<Box>> boxes_by_step(const std::vector<Extent>& extents, const TransferSteps& steps) const {
    std::vector<std::vector<Box>> out(steps.count);
    const Variable& v = d_.variables[0];
    for (uint64_t s = 0; s < steps.count; ++s) {
      for (const Extent& e : clip_to_memory(d_, extents, s * steps.step_bytes, (s + 1) * steps.step_bytes)) {
        for (Box& box : linear_range_to_boxes(v.shape, e.elem_begin, e.elems)) out[s].push_back(std::move(box));
      }
    }
    return out;
  }

  void close() override {
    std::optional<Error> failure = kept_.take();  // the transfer's, reported first
    if (ncid_ < 0) {
      if (failure) throw *failure;
      return;
    }
    if (ctx_.io.fsync && access_ == Access::write) {
      int rc = ncmpi_sync(ncid_);
      if (rc != NC_NOERR && !failure)
        failure = Error(ErrorKind::runtime, "ncmpi_sync of \"" + ctx_.file.path + "\": " + ncmpi_strerror(rc));
    }
    int rc = ncmpi_close(ncid_);
    ncid_ = -1;
    if (failure) throw *failure;
    check_nc(rc, "ncmpi_close of \"" + ctx_.file.path + "\"");
  }

  Hints hints_in_effect() const override { return in_effect_; }
  uint64_t requests() const override { return requests_; }
  uint64_t moved_bytes(uint64_t asked) const override { return stopped_at_ ? *stopped_at_ : asked; }
  CollectiveStats collective_calls(double transfer_s) override {
    if (ctx_.io.independent) return {};  // no collective data calls to account for (the same on every rank)
    // PnetCDF may split a wait_all into several MPI-IO calls; each is given the whole span.
    const std::vector<CallSpan> spans(wait_calls_, span_);
    return mpiio_collective_stats(ctx_.comm, spans, in_effect_, transfer_s);
  }

 private:
  // One variable moved a transfer at a time (IOR's pattern).
  bool one_variable() const { return d_.variables.size() == 1 && d_.transfer_bytes != 0; }

  // The file bytes this rank's blocks span (variable offsets from ncmpi_inq_varoffset).
  CallSpan whole_span() const {
    CallSpan span{~0ULL, 0};
    for (const Block& b : d_.blocks) {
      const Variable& v = d_.variables[static_cast<size_t>(b.var)];
      MPI_Offset off = 0;
      if (ncmpi_inq_varoffset(ncid_, varids_[static_cast<size_t>(b.var)], &off) != NC_NOERR) continue;
      std::vector<uint64_t> last(b.start);
      for (size_t i = 0; i < last.size(); ++i) last[i] += b.count[i] - 1;
      const uint64_t es = elem_size(v.type);
      span.lo = std::min<uint64_t>(span.lo, static_cast<uint64_t>(off) + linear_index(v.shape, b.start) * es);
      span.hi = std::max<uint64_t>(span.hi, static_cast<uint64_t>(off) + (linear_index(v.shape, last) + 1) * es);
    }
    if (span.hi <= span.lo) span = {};
    return span;
  }

  void post(Access access, int var, const std::vector<MPI_Offset>& start, const std::vector<MPI_Offset>& count,
            std::byte* ptr, uint64_t n, std::optional<Error>& failure) {
    const Variable& v = d_.variables[static_cast<size_t>(var)];
    int req = NC_REQ_NULL;
    int rc = access == Access::write
                 ? ncmpi_iput_vara(ncid_, varids_[static_cast<size_t>(var)], start.data(), count.data(), ptr,
                                   static_cast<MPI_Offset>(n), mpi_type_of(v.type), &req)
                 : ncmpi_iget_vara(ncid_, varids_[static_cast<size_t>(var)], start.data(), count.data(), ptr,
                                   static_cast<MPI_Offset>(n), mpi_type_of(v.type), &req);
    ++requests_;
    if (rc != NC_NOERR && !failure) {
      failure = Error(ErrorKind::runtime, std::string(access == Access::write ? "ncmpi_iput_vara" : "ncmpi_iget_vara") +
                                              " of variable \"" + v.name + "\": " + ncmpi_strerror(rc));
    }
  }

  // One iput_varn/iget_varn: a run of consecutive blocks of one variable, contiguous in the
  // user's buffer (blocks are in memory order). Worked out once per backend, as E3SM-IO builds its
  // starts and counts when it reads its map: a real decomposition has hundreds of thousands of
  // blocks a rank, two small vectors each.
  struct VarnRequest {
    int var = 0;
    uint64_t elems = 0;                      // elements of the request
    uint64_t mem_offset = 0;                 // its first byte in the user's buffer
    std::vector<MPI_Offset> starts, counts;  // block k's start and count at k * ndims
    std::vector<MPI_Offset*> start_ptrs, count_ptrs;

    // Appends one block or box.
    template <typename Range>
    void add(const Range& start, const Range& count) {
      starts.insert(starts.end(), start.begin(), start.end());
      counts.insert(counts.end(), count.begin(), count.end());
      ++boxes;
    }
    // Points PnetCDF's arrays at the boxes, once they are all added (`nd`: the variable's dimensions).
    void seal(size_t nd) {
      for (size_t k = 0; k < boxes; ++k) {
        start_ptrs.push_back(starts.data() + k * nd);
        count_ptrs.push_back(counts.data() + k * nd);
      }
    }
    size_t boxes = 0;
  };

  std::vector<VarnRequest> varn_requests() const {
    std::vector<VarnRequest> out;
    uint64_t mem = 0;
    for (size_t i = 0; i < d_.blocks.size();) {
      VarnRequest r;
      r.var = d_.blocks[i].var;
      r.mem_offset = mem;
      const size_t nd = d_.variables[static_cast<size_t>(r.var)].shape.size();
      size_t j = i;
      for (; j < d_.blocks.size() && d_.blocks[j].var == r.var; ++j) {
        r.add(d_.blocks[j].start, d_.blocks[j].count);
        r.elems += d_.blocks[j].elements();
      }
      r.seal(nd);
      mem += r.elems * elem_size(d_.variables[static_cast<size_t>(r.var)].type);
      out.push_back(std::move(r));  // moving keeps the vectors' storage: the pointers stay valid
      i = j;
    }
    return out;
  }

  // One step: a varn request per variable. When the blocks are out of file order in memory (a
  // real PIO map), a request lists the runs in file order and the data is staged so: PnetCDF
  // would otherwise sort hundreds of thousands of pieces and hand MPI-IO a scattered memory type
  // in every write (E3SM-IO's own map is sorted, its buffers filled in that order).
  void prepare_one_step() {
    if (!order_) order_.emplace(d_);
    varn_ = order_->staged() ? varn_requests(order_->extents()) : varn_requests();
    one_step_ready_ = true;
  }

  // The same from extents in file order (FileOrder's, offsets into the staged copy): each
  // variable's runs, as row-major boxes.
  std::vector<VarnRequest> varn_requests(const std::vector<Extent>& extents) const {
    std::vector<VarnRequest> out;
    for (size_t i = 0; i < extents.size();) {
      VarnRequest r;
      r.var = extents[i].var;
      r.mem_offset = extents[i].mem_offset;
      const Variable& v = d_.variables[static_cast<size_t>(r.var)];
      size_t j = i;
      for (; j < extents.size() && extents[j].var == r.var; ++j) {
        for (const Box& box : linear_range_to_boxes(v.shape, extents[j].elem_begin, extents[j].elems)) {
          r.add(box.start, box.count);
        }
        r.elems += extents[j].elems;
      }
      r.seal(v.shape.size());
      out.push_back(std::move(r));
      i = j;
    }
    return out;
  }

  void post_varn(Access access, const VarnRequest& r, std::byte* ptr, std::optional<Error>& failure) {
    const Variable& v = d_.variables[static_cast<size_t>(r.var)];
    const uint64_t n = r.elems;
    int req = NC_REQ_NULL;
    const int num = static_cast<int>(r.start_ptrs.size());
    const int varid = varids_[static_cast<size_t>(r.var)];
    int rc = access == Access::write ? ncmpi_iput_varn(ncid_, varid, num, r.start_ptrs.data(), r.count_ptrs.data(), ptr,
                                                       static_cast<MPI_Offset>(n), mpi_type_of(v.type), &req)
                                     : ncmpi_iget_varn(ncid_, varid, num, r.start_ptrs.data(), r.count_ptrs.data(), ptr,
                                                       static_cast<MPI_Offset>(n), mpi_type_of(v.type), &req);
    ++requests_;
    if (rc != NC_NOERR && !failure) {
      failure = Error(ErrorKind::runtime, std::string(access == Access::write ? "ncmpi_iput_varn" : "ncmpi_iget_varn") +
                                              " of variable \"" + v.name + "\": " + ncmpi_strerror(rc));
    }
  }

  // One blocking collective put/get_vara_all of a box of variable 0 (n = 0: this rank takes part
  // without data).
  void move_vara_all(Access access, const std::vector<MPI_Offset>& start, const std::vector<MPI_Offset>& count,
                     std::byte* ptr, uint64_t n, std::optional<Error>& failure) {
    const Variable& v = d_.variables[0];
    ++wait_calls_;
    requests_ += n == 0 ? 0 : 1;
    const MPI_Offset elems = static_cast<MPI_Offset>(n);
    const int varid = varids_[0];
    int rc = 0;
    if (ctx_.io.independent) {
      rc = access == Access::write
               ? ncmpi_put_vara(ncid_, varid, start.data(), count.data(), ptr, elems, mpi_type_of(v.type))
               : ncmpi_get_vara(ncid_, varid, start.data(), count.data(), ptr, elems, mpi_type_of(v.type));
    } else {
      rc = access == Access::write
               ? ncmpi_put_vara_all(ncid_, varid, start.data(), count.data(), ptr, elems, mpi_type_of(v.type))
               : ncmpi_get_vara_all(ncid_, varid, start.data(), count.data(), ptr, elems, mpi_type_of(v.type));
    }
    if (rc != NC_NOERR && !failure) {
      failure =
          Error(ErrorKind::runtime, std::string(access == Access::write ? "ncmpi_put_vara_all" : "ncmpi_get_vara_all") +
                                        " of variable \"" + v.name + "\": " + ncmpi_strerror(rc));
    }
  }

  void wait_all(std::optional<Error>& failure) {
    ++wait_calls_;
    int rc = ctx_.io.independent ? ncmpi_wait(ncid_, NC_REQ_ALL, nullptr, nullptr)
                                 : ncmpi_wait_all(ncid_, NC_REQ_ALL, nullptr, nullptr);
    if (rc != NC_NOERR && !failure) {
      failure = Error(ErrorKind::runtime, std::string(ctx_.io.independent ? "ncmpi_wait" : "ncmpi_wait_all") +
                                              " on \"" + ctx_.file.path + "\": " + ncmpi_strerror(rc));
    }
  }

  void check_shape(int varid, const Variable& v) const {
    int nd = 0;
    check_nc(ncmpi_inq_varndims(ncid_, varid, &nd), "ncmpi_inq_varndims");
    std::vector<int> dimids(static_cast<size_t>(nd));
    check_nc(ncmpi_inq_vardimid(ncid_, varid, dimids.data()), "ncmpi_inq_vardimid");
    std::vector<uint64_t> got;
    for (int id : dimids) {
      MPI_Offset len = 0;
      check_nc(ncmpi_inq_dimlen(ncid_, id, &len), "ncmpi_inq_dimlen");
      got.push_back(static_cast<uint64_t>(len));
    }
    nc_type type{};
    check_nc(ncmpi_inq_vartype(ncid_, varid, &type), "ncmpi_inq_vartype");
    if (got != v.shape || type != nc_type_of(v.type)) {
      throw_runtime("variable \"" + v.name + "\" in \"" + ctx_.file.path +
                    "\" does not have the shape and type the kernel expects (" + elem_name(v.type) + ")");
    }
  }

  BackendContext ctx_;
  const Decomposition& d_;
  std::optional<FileOrder> order_;  // for transfer steps: the decomposition in file order
  std::vector<VarnRequest> varn_;   // for one step: the requests (in file order when order_ stages)
  bool one_step_ready_ = false;     // varn_ made
  Access access_ = Access::read;
  int ncid_ = -1;
  std::vector<int> varids_;
  Hints in_effect_;
  Hints printed_;
  uint64_t requests_ = 0;
  std::optional<uint64_t> stopped_at_;  // bytes moved when the deadline stopped the last transfer
  uint64_t wait_calls_ = 0;
  CallSpan span_;
  KeptError kept_;  // the transfer's error, raised by close()
};

}  // namespace

BackendRow pnetcdf_backend_row() {
  BackendRow row;
  row.name = "pnetcdf";
  row.summary =
      "PnetCDF (CDF-5): a variable per variable, iput/iget_varn of each variable's blocks then one wait_all "
      "(--independent: wait)";
  row.make = [](const BackendContext& ctx, const Decomposition& d, const Target& t) -> std::unique_ptr<Backend> {
    return std::make_unique<PnetcdfBackend>(ctx, d, t);
  };
  row.can.file_extension = ".nc";
  row.can.mpi_io = true;
  row.can.raw_file = false;  // a container: its library sizes it
  row.can.hints = HintFamily::mpi_io;
  row.can.options = {"independent", "deadline"};  // run options of this backend only (src/run/run_options.cpp)
  row.can.collective = true;                      // unless --independent
  return row;
}

}  // namespace strata
