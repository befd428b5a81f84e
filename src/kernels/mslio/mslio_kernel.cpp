#include "kernels/mslio/mslio_kernel.hpp"

#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/error.hpp"
#include "common/units.hpp"
#include "decomp/decomposition.hpp"
#include "kernels/mslio/mslio_io.hpp"
#include "kernels/mslio/mslio_volume.hpp"

namespace strata {

using mslio::Setup;

void MslioKernel::add_options(OptionSet& o) const {
  o.section("mslio options (output: a folder holding a folder per local problem, or the shared file)");
  o.add("ccross", "C", "4^C local problems, hence solution files", "3");
  o.add("subelements", "S", "sub-elements of each local mesh: 0.443*S^2+1.32*S+1 values per 2-D file", "64");
  o.add("dims", "D", "dimensions of each solution point (the file holds them one after another)", "2");
  o.add("buffer-size", "B",
        "buffered: buffer per file (default 128K); shared: bytes per MPI-IO write "
        "(default: one write per value)");
  o.add("threads", "T", "OpenMP threads per rank", "OMP_NUM_THREADS, else the cores");
  o.add("align", "B", "strata mode: chunk alignment, the stripe size", "the striping_unit hint, else 1M");
}

namespace {
// The kernel's modes, each with its line of help; the first is the default.
const std::vector<std::pair<std::string, std::string>> kMslioModes = {
    {"original", "a text file per local problem, one fprintf per value (the MHM library)"},
    {"buffered", "the same, values gathered in a --buffer-size buffer per file, one write when full"},
    {"shared", "one shared file, each local problem a contiguous chunk, MPI-IO independent writes"},
    {"strata", "the shared file through Strata's engine, each chunk aligned to --align (the stripe size)"},
    {"hdf5", "one HDF5 file, a float64 dataset per dimension, collective writes"},
};
}  // namespace

MslioKernel::MslioKernel()
    : AppKernel({"mslio", "MSLIO: a text solution file per local problem, one formatted write per value (modes)",
                 kMslioModes, "mode", "strata-mslio",
                 "mpirun -np 4 strata run mslio --ccross 3 --subelements 64 --mode original --verify"}) {}

namespace {

class MslioRun final : public AppRun {
 public:
  MslioRun(Setup s, const AppContext& ctx) : s_(std::move(s)), ctx_(ctx) {}

  void initialise(bool will_write) {
    // The rank's solution values, point by point: variable "solution" of shape
    // (local problems, points, dims), from the common generator.
    Decomposition d;
    d.variables.push_back({"solution", ElemType::f64, {s_.problems, s_.points, s_.dims}});
    if (s_.count > 0) d.blocks.push_back({0, {s_.first, 0, 0}, {s_.count, s_.points, s_.dims}});
    memory_.resize(s_.count * s_.values());
    fill(d, ctx_.values, reinterpret_cast<std::byte*>(memory_.data()));
    if (s_.mode == "strata") engine_ = std::make_unique<Engine>(ctx_.comm);
    if (!will_write) return;
    // As in the MHM library's initialisation: the output folder and one folder per local
    // problem exist before the timed output phase.
    collectively(ctx_.comm, [&] {
      if (ctx_.rank == 0 && mkdir(s_.folder.c_str(), 0755) != 0 && errno != EEXIST) {
        throw_system("cannot create the output folder \"" + s_.folder + "\"", errno);
      }
    });
    if (s_.mode == "original" || s_.mode == "buffered") collectively(ctx_.comm, [&] { mslio::create_folders(s_); });
  }

  std::string mode() const override { return s_.mode; }
  uint64_t files() const override { return per_problem() ? s_.problems : 1; }
  std::string layout() const override { return per_problem() ? "file per local problem" : "shared"; }
  uint64_t global_bytes() const override {
    return s_.mode == "hdf5" ? s_.problems * s_.values() * sizeof(double) : s_.problems * s_.file_bytes();
  }
  uint64_t local_bytes() const override {
    return s_.mode == "hdf5" ? s_.count * s_.values() * sizeof(double) : s_.count * s_.file_bytes();
  }
  Hints hints_in_effect() const override { return in_effect_; }

  nlohmann::json params() const override {
    const mslio::Volume v = mslio::volume(s_.ccross, s_.subelements, s_.dims);
    nlohmann::json p = {{"ccross", s_.ccross},
                        {"subelements", s_.subelements},
                        {"dims", s_.dims},
                        {"mode", s_.mode},
                        {"threads", s_.threads},
                        {"local_problems", s_.problems},
                        {"points_per_file", s_.points},
                        {"values_per_file", s_.values()},
                        {"file_bytes", s_.file_bytes()},
                        {"text_bytes", v.bytes},
                        {"text_mb", static_cast<double>(v.bytes) / 1e6}};
    if (s_.mode == "buffered" || s_.mode == "shared") p["buffer_size"] = s_.buffer_bytes;
    if (s_.mode == "strata") p["align"] = s_.align;
    return p;
  }

  void remove_output() override {
    collectively(ctx_.comm, [&] {
      if (per_problem()) {
        mslio::remove_files(s_);
      } else if (ctx_.rank == 0) {
        const std::string path = s_.mode == "hdf5" ? s_.hdf5_path() : s_.shared_path();
        if (unlink(path.c_str()) != 0 && errno != ENOENT) throw_system("cannot remove \"" + path + "\"", errno);
      }
    });
  }

  AppPhase write() override {
    return timed("write", [&](CallTotals& t, nlohmann::json& engine) {
      if (per_problem()) {
        t = mslio::write_files(s_, memory_.data(), ctx_.io.fsync);
      } else if (s_.mode == "shared") {
        t = mslio::write_shared(s_, memory_.data(), ctx_.comm, ctx_.hints, ctx_.io_component, ctx_.io.fsync,
                                in_effect_);
      } else if (s_.mode == "strata") {
        t = mslio::write_engine(s_, memory_.data(), *engine_, ctx_.hints, ctx_.io.fsync, engine);
      } else {
        t = mslio::write_hdf5(s_, memory_.data(), ctx_.comm, ctx_.hints, ctx_.io.fsync);
      }
    });
  }

  AppPhase read(bool compare, std::optional<std::string>& mismatch) override {
    std::optional<std::string> local;
    AppPhase phase = timed("read", [&](CallTotals& t, nlohmann::json& engine) {
      if (per_problem()) {
        t = mslio::read_files(s_, memory_.data(), compare, local);
      } else if (s_.mode == "shared") {
        t = mslio::read_shared(s_, memory_.data(), ctx_.comm, ctx_.hints, ctx_.io_component, compare, local);
      } else if (s_.mode == "strata") {
        t = mslio::read_engine(s_, memory_.data(), *engine_, ctx_.hints, compare, local, engine);
      } else {
        t = mslio::read_hdf5(s_, memory_.data(), ctx_.comm, ctx_.hints, compare, local);
      }
    });
    mismatch = agree_mismatch(ctx_.comm, local);
    return phase;
  }

 private:
  bool per_problem() const { return s_.mode == "original" || s_.mode == "buffered"; }

  template <class Body>
  AppPhase timed(const char* what, Body body) {
    CallTotals local;
    nlohmann::json engine;
    MPI_Barrier(ctx_.comm);
    const double t0 = MPI_Wtime();
    collectively(ctx_.comm, [&] { body(local, engine); });
    const double mine = MPI_Wtime() - t0;
    std::vector<double> ranks(static_cast<size_t>(ctx_.size));
    MPI_Allgather(&mine, 1, MPI_DOUBLE, ranks.data(), 1, MPI_DOUBLE, ctx_.comm);
    const CallTotals sum = local.summed(ctx_.comm);
    AppPhase p;
    p.bytes = sum.bytes;
    p.time_s = *std::max_element(ranks.begin(), ranks.end());
    p.open_s = sum.open_s;
    p.xfer_s = sum.write_s;
    p.close_s = sum.close_s;
    p.requests = sum.writes;
    p.rank_time_s = ranks;
    const double io = sum.open_s + sum.write_s + sum.close_s;
    auto share = [&](double x) { return io > 0 ? x / io : 0.0; };
    p.details = {{"timing",
                  "time_s: output phase, max over ranks; open_s/xfer_s/close_s: cumulative, summed over "
                  "threads and ranks"},
                 {"threads_per_rank", s_.threads},
                 {"cumulative_s",
                  {{"open", sum.open_s}, {"write", sum.write_s}, {"close", sum.close_s}, {"format", sum.format_s}}},
                 {"share", {{"open", share(sum.open_s)}, {"write", share(sum.write_s)}, {"close", share(sum.close_s)}}},
                 {"calls", {{"open", sum.opens}, {"write", sum.writes}, {"close", sum.closes}}}};
    if (!engine.is_null()) p.details["engine"] = engine;
    const bool w = std::string(what) == "write";
    char line[512];
    std::snprintf(
        line, sizeof line,
        "mslio %s, mode %s: phase %.4f s; cumulative over %d rank(s) x %d thread(s): open %.4f s (%.1f %%), "
        "%s %.4f s (%.1f %%), close %.4f s (%.1f %%)\n"
        "  calls: %llu open, %llu %s, %llu close%s\n",
        what, s_.mode.c_str(), p.time_s, ctx_.size, s_.threads, sum.open_s, 100 * share(sum.open_s),
        w ? "write" : "read", sum.write_s, 100 * share(sum.write_s), sum.close_s, 100 * share(sum.close_s),
        static_cast<unsigned long long>(sum.opens), static_cast<unsigned long long>(sum.writes), w ? "write" : "read",
        static_cast<unsigned long long>(sum.closes),
        sum.format_s > 0 ? (" (formatting or parsing apart: " + std::to_string(sum.format_s) + " s)").c_str() : "");
    p.text = line;
    return p;
  }

  Setup s_;
  AppContext ctx_;
  std::vector<double> memory_;
  std::unique_ptr<Engine> engine_;
  Hints in_effect_;
};

uint64_t bounded(const OptionSet& o, const std::string& name, uint64_t lo, uint64_t hi) {
  const uint64_t v = parse_count(o.get(name), "--" + name);
  if (v < lo || v > hi) {
    throw_usage("--" + name + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                std::to_string(v));
  }
  return v;
}

}  // namespace

std::unique_ptr<AppRun> MslioKernel::prepare(const OptionSet& o, const AppContext& ctx, bool will_write) const {
  Setup s;
  std::unique_ptr<MslioRun> run;
  collectively(ctx.comm, [&] {
    s.mode = o.get("mode");
    s.ccross = static_cast<unsigned>(bounded(o, "ccross", 0, 12));
    s.subelements = bounded(o, "subelements", 1, 8192);
    s.dims = static_cast<unsigned>(bounded(o, "dims", 1, 16));
    s.threads = o.given("threads") ? static_cast<int>(bounded(o, "threads", 1, 1024)) : omp_get_max_threads();
    if (o.given("buffer-size") && s.mode != "buffered" && s.mode != "shared") {
      throw_usage("--buffer-size applies to --mode buffered or shared, not " + s.mode);
    }
    if (o.given("align") && s.mode != "strata") throw_usage("--align applies to --mode strata, not " + s.mode);
    if (s.mode == "buffered")
      s.buffer_bytes = parse_size(o.given("buffer-size") ? o.get("buffer-size") : "128K", "--buffer-size");
    if (s.mode == "shared" && o.given("buffer-size"))
      s.buffer_bytes = parse_size(o.get("buffer-size"), "--buffer-size");
    if ((s.mode == "buffered" || o.given("buffer-size")) &&
        (s.buffer_bytes < mslio::kValueBytes || s.buffer_bytes > (uint64_t{1} << 30))) {
      throw_usage("--buffer-size must hold at least one value (14 bytes) and at most 1G, got " +
                  std::to_string(s.buffer_bytes));
    }
    if (s.mode == "strata") {
      std::string unit = o.given("align") ? o.get("align") : "1M";
      for (const auto& [k, v] : ctx.hints) {
        if (k == "striping_unit" && !o.given("align")) unit = v;
      }
      s.align = parse_size(unit, "--align");
      if (s.align == 0) throw_usage("--align must be greater than zero");
    }
    if (s.mode == "hdf5" && !mslio::have_hdf5()) throw_usage("--mode hdf5 needs a strata built with HDF5");
    s.problems = mslio::local_problems(s.ccross);
    s.points = mslio::points_per_file(s.subelements);
    s.file_bytes();
    if (s.file_bytes() > (uint64_t{1} << 31) - 1)
      throw_usage("a solution file would exceed 2 GiB: lower --subelements");
    const uint64_t P = static_cast<uint64_t>(ctx.size), r = static_cast<uint64_t>(ctx.rank);
    s.first = s.problems * r / P;
    s.count = s.problems * (r + 1) / P - s.first;
    s.folder = ctx.output;
    if (s.folder.empty()) throw_usage("--output must not be empty");
    run = std::make_unique<MslioRun>(s, ctx);
  });
  run->initialise(will_write);
  return run;
}

std::vector<KernelTest> MslioKernel::tests() const {
  // Each mode, written, read back (timed) and verified.
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"original", {"--mode", "original"}},
      {"buffered", {"--mode", "buffered", "--buffer-size", "1K"}},
      {"shared", {"--mode", "shared"}},
      {"shared_buffered", {"--mode", "shared", "--buffer-size", "100"}},
      {"strata", {"--mode", "strata", "--align", "4K"}},
      {"strata_default_align", {"--mode", "strata"}},
#ifdef STRATA_HAVE_HDF5
      {"hdf5", {"--mode", "hdf5"}},
#endif
  };
  std::vector<KernelTest> t;
  for (const auto& [what, mode] : cases) {
    KernelTest c{.name = "app.mslio." + what,
                 .args = {"--ccross", "2", "--subelements", "16", "--threads", "2", "--seed", "5"},
                 .ranks = {1, 3, 4},
                 .backends = {.backend = false},
                 .output_suffix = ""};
    c.args.insert(c.args.end(), mode.begin(), mode.end());
    t.push_back(c);
  }
  return t;
}

}  // namespace strata
