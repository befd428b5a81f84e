// mpiio-ind: MPI_File_write_at/read_at of each extent (split at the transfer size).
// mpiio-coll: a file view of the rank's extents built as an hindexed datatype, then
// MPI_File_write_at_all/read_at_all in transfer steps (IOR's collective pattern: in step s
// every rank moves its bytes [s·t, (s+1)·t) of the view; ranks with less data join with 0).
// mpiio-coll --per-variable: the same view, one MPI_File_write_at_all/read_at_all per variable
// (the multi-dataset paper's per-dataset MPI-IO baseline).
#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "backends/backend.hpp"
#include "backends/transfer_steps.hpp"
#include "common/error.hpp"
#include "common/mpi_handles.hpp"
#include "fs/mpiio_file.hpp"

namespace strata {

namespace {

class MpiioBackend final : public Backend {
 public:
  MpiioBackend(const BackendContext& ctx, const Decomposition& d, bool collective)
      : ctx_(ctx), d_(d), collective_(collective) {
    // In the raw layout file order is (variable, element); in per-process and per-node files it
    // is memory order, so only the raw layout may need staging. Worked out once (docs/backends.md).
    if (collective_) order_.emplace(d_, ctx_.file.raw_layout);
  }

  std::string name() const override { return collective_ ? "mpiio-coll" : "mpiio-ind"; }

  void open(Access access) override {
    access_ = access;
    file_.open(ctx_.file.comm, ctx_.file.path, access, hints_for_open(ctx_.hints, ctx_.io_component),
               ctx_.io_component);
    if (access == Access::read) {
      // Collective reads past the end do not always report short counts (OMPIO), so check first.
      MPI_Offset size = 0;
      check_mpi(MPI_File_get_size(file_.get(), &size), "MPI_File_get_size");
      const uint64_t need = ctx_.file.bytes_needed;
      if (static_cast<uint64_t>(size) < need) {
        throw_runtime("\"" + file_.path() + "\" holds " + std::to_string(size) + " bytes but the decomposition needs " +
                      std::to_string(need) + " (the file is shorter than the decomposition)");
      }
    }
  }

  void transfer(Access access, std::byte* buffer) override {
    requests_ = 0;
    stopped_at_.reset();
    spans_.clear();
    begin_collective_timing();
    if (collective_) {
      transfer_collective(access, buffer);
    } else {
      transfer_independent(access, buffer);
    }
  }

  void close() override {
    file_.close(ctx_.io.fsync);
    if (access_ == Access::write)
      extend_to_extent(ctx_.file);  // every rank's writes are done (the transfer was agreed)
  }

  Hints hints_in_effect() const override { return file_.hints_in_effect(); }
  uint64_t requests() const override { return requests_; }
  uint64_t moved_bytes(uint64_t asked) const override { return stopped_at_ ? *stopped_at_ : asked; }
  CollectiveStats collective_calls(double transfer_s) override {
    if (!collective_) return {};
    return mpiio_collective_stats(ctx_.file.comm, spans_, file_.hints_in_effect(), transfer_s);
  }

 private:
  uint64_t file_offset(const Extent& e) const {
    return strata::file_offset(ctx_.file, d_, e.var, e.elem_begin, e.mem_offset);
  }
  uint64_t extent_bytes(const Extent& e) const {
    return e.elems * elem_size(d_.variables[static_cast<size_t>(e.var)].type);
  }

  void check_status(int rc, Access access, const char* call, uint64_t offset) const {
    if (rc != MPI_SUCCESS) {
      throw_mpi(std::string(call) + (access == Access::write ? " to \"" : " from \"") + file_.path() + "\" at offset " +
                    std::to_string(offset) + " failed",
                rc);
    }
  }

  void check_count(const MPI_Status& st, uint64_t want, Access access, uint64_t offset) const {
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (static_cast<uint64_t>(got) != want) {
      throw_runtime(std::string(access == Access::write ? "short write to \"" : "short read from \"") + file_.path() +
                    "\" at offset " + std::to_string(offset) + ": " + std::to_string(got) + " of " +
                    std::to_string(want) + " bytes" +
                    (access == Access::read ? " (the file is shorter than the decomposition)" : ""));
    }
  }

  void transfer_independent(Access access, std::byte* buffer) {
    const auto pieces = split_extents(d_, flatten(d_), d_.transfer_bytes ? d_.transfer_bytes : kMaxRequestBytes);
    Stonewall wall(ctx_.io.deadline);  // IOR -D: each rank stops on its own clock
    uint64_t moved = 0;
    for (const Extent& e : pieces) {
      if (wall.reached()) {
        stopped_at_ = moved;
        return;
      }
      const uint64_t off = file_offset(e);
      const uint64_t n = extent_bytes(e);
      MPI_Status st;
      int rc = access == Access::write ? MPI_File_write_at(file_.get(), static_cast<MPI_Offset>(off),
                                                           buffer + e.mem_offset, static_cast<int>(n), MPI_BYTE, &st)
                                       : MPI_File_read_at(file_.get(), static_cast<MPI_Offset>(off),
                                                          buffer + e.mem_offset, static_cast<int>(n), MPI_BYTE, &st);
      ++requests_;
      check_status(rc, access, access == Access::write ? "MPI_File_write_at" : "MPI_File_read_at", off);
      check_count(st, n, access, off);
      moved += n;
    }
  }

  void transfer_collective(Access access, std::byte* buffer) {
    MPI_Comm comm = ctx_.file.comm;
    FileOrderBuffer stream(*order_, buffer, access);
    // The view: this rank's extents in file order, lengths kept within int.
    const auto pieces = split_extents(d_, stream.extents(), kMaxRequestBytes);
    std::vector<int> lengths;
    std::vector<MPI_Aint> displs;
    lengths.reserve(pieces.size());
    displs.reserve(pieces.size());
    for (const Extent& e : pieces) {
      lengths.push_back(static_cast<int>(extent_bytes(e)));
      displs.push_back(static_cast<MPI_Aint>(file_offset(e)));
    }
    Datatype filetype;
    if (!pieces.empty()) {
      check_mpi(MPI_Type_create_hindexed(static_cast<int>(pieces.size()), lengths.data(), displs.data(), MPI_BYTE,
                                         filetype.out()),
                "MPI_Type_create_hindexed");
      check_mpi(MPI_Type_commit(filetype.address()), "MPI_Type_commit");
    }
    MPI_Datatype ft = pieces.empty() ? MPI_BYTE : filetype.get();
    char native[] = "native";
    int rc = MPI_File_set_view(file_.get(), 0, MPI_BYTE, ft, native, MPI_INFO_NULL);
    check_status(rc, access, "MPI_File_set_view", 0);

    // The calls: [begin, begin + n) of the view each, in stream bytes.
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    const uint64_t local = d_.local_bytes();
    if (ctx_.io.per_variable) {
      std::vector<uint64_t> begin(d_.variables.size(), 0), end(d_.variables.size(), 0);
      uint64_t at = 0;
      for (const Extent& e : stream.extents()) {
        if (end[static_cast<size_t>(e.var)] == 0) begin[static_cast<size_t>(e.var)] = at;
        at += extent_bytes(e);
        end[static_cast<size_t>(e.var)] = at;
      }
      for (size_t v = 0; v < d_.variables.size(); ++v) calls.push_back({begin[v], end[v] - begin[v]});
    } else {
      const TransferSteps steps = transfer_steps(comm, d_);
      for (uint64_t s = 0; s < steps.count; ++s) {
        const uint64_t begin = std::min(local, s * steps.step_bytes);
        calls.push_back({begin, std::min(steps.step_bytes, local - begin)});
      }
    }
    // Every rank makes every collective call even after a local failure (or the others would
    // wait forever); the first failure is raised once all steps are done.
    std::optional<Error> failure;
    Stonewall wall(ctx_.io.deadline, comm);  // IOR -D with -c: rank 0 decides for every call
    uint64_t moved = 0;
    for (const auto& [begin, n] : calls) {
      if (wall.reached()) {
        stopped_at_ = moved;
        break;
      }
      moved += n;
      spans_.push_back(file_span(pieces, begin, n));
      MPI_Status st;
      rc = access == Access::write ? MPI_File_write_at_all(file_.get(), static_cast<MPI_Offset>(begin),
                                                           stream.data() + begin, static_cast<int>(n), MPI_BYTE, &st)
                                   : MPI_File_read_at_all(file_.get(), static_cast<MPI_Offset>(begin),
                                                          stream.data() + begin, static_cast<int>(n), MPI_BYTE, &st);
      ++requests_;
      if (failure) continue;
      try {
        check_status(rc, access, access == Access::write ? "MPI_File_write_at_all" : "MPI_File_read_at_all", begin);
        if (n > 0) check_count(st, n, access, begin);
      } catch (const Error& e) {
        failure = e;
      }
    }
    if (failure) throw *failure;
    if (access == Access::read) stream.finish_read();
  }

  // The file bytes that view bytes [begin, begin + n) cover (pieces in file and view order).
  CallSpan file_span(const std::vector<Extent>& pieces, uint64_t begin, uint64_t n) const {
    CallSpan span;
    if (n == 0) return span;
    uint64_t at = 0;
    bool found = false;
    for (const Extent& e : pieces) {
      const uint64_t len = extent_bytes(e), off = file_offset(e);
      if (!found && begin < at + len) {
        span.lo = off + (begin - at);
        found = true;
      }
      if (begin + n <= at + len) {
        span.hi = off + (begin + n - at);
        break;
      }
      at += len;
    }
    return span;
  }

  BackendContext ctx_;
  const Decomposition& d_;
  bool collective_;
  std::optional<FileOrder> order_;  // collective only: the decomposition in file order
  std::vector<CallSpan> spans_;
  MpiioFile file_;
  Access access_ = Access::read;
  uint64_t requests_ = 0;
  std::optional<uint64_t> stopped_at_;  // bytes moved when the deadline stopped the last transfer
};

}  // namespace

namespace {

BackendRow mpiio_row() {
  BackendRow row;
  row.can.layouts = {Layout::shared, Layout::file_per_process, Layout::file_per_node};
  row.can.mpi_io = true;
  row.can.hints = HintFamily::mpi_io;
  row.can.options = {"deadline"};  // run options of these backends only (src/run/run_options.cpp)
  return row;
}

}  // namespace

BackendRow mpiio_ind_backend_row() {
  BackendRow row = mpiio_row();
  row.name = "mpiio-ind";
  row.summary = "MPI-IO independent MPI_File_write_at/read_at at explicit offsets";
  row.make = [](const BackendContext& ctx, const Decomposition& d, const Target&) -> std::unique_ptr<Backend> {
    return std::make_unique<MpiioBackend>(ctx, d, false);
  };
  return row;
}

BackendRow mpiio_coll_backend_row() {
  BackendRow row = mpiio_row();
  row.name = "mpiio-coll";
  row.summary = "MPI-IO collective MPI_File_write_at_all/read_at_all through a derived-datatype file view";
  row.make = [](const BackendContext& ctx, const Decomposition& d, const Target&) -> std::unique_ptr<Backend> {
    if (ctx.io.per_variable && (!ctx.file.raw_layout || d.transfer_bytes != 0)) {
      throw_usage("--per-variable applies to backend mpiio-coll writing one shared file without a transfer size");
    }
    return std::make_unique<MpiioBackend>(ctx, d, true);
  };
  row.can.options = {"per-variable", "deadline"};
  row.can.collective = true;
  row.test_variants = {{.name = "mpiio-coll"},
                       {.name = "mpiio-coll-romio", .romio = true},
                       {.name = "mpiio-coll-fpn", .layout = Layout::file_per_node},
                       {.name = "mpiio-per-variable", .options = {"--per-variable"}}};
  return row;
}

}  // namespace strata
