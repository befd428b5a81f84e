#include "kernels/pace3d/pace3d_kernel.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "common/error.hpp"
#include "common/units.hpp"
#include "decomp/values.hpp"
#include "fs/mpiio_file.hpp"
#include "kernels/pace3d/field_io.hpp"
#include "kernels/pace3d/pace3d_domain.hpp"
#include "kernels/pace3d/voxel_format.hpp"

namespace strata {

using pace3d::Domain;

void Pace3dKernel::add_options(OptionSet& o) const {
  o.section("pace3d options (output: the voxel file, or the prefix of a file per frame)");
  o.add("element", "4|12|64", "bytes per voxel: float, float vector, phase-field block", "4");
  o.add("block-size", "B", "bytes each rank writes per frame (the paper: 64K to 64M); its box is a near-cube", "64K");
  o.add("frames", "F", "frames written, a small compute step between them", "5");
  o.add("decomp", "1d|3d", "ranks stacked along z, or on a 3-D process grid", "1d");
  o.add("level", "0-3",
        "Thakur's I/O level: 0 independent rows, 1 collective rows, 2 file view + independent, "
        "3 file view + collective",
        "3");
}

namespace {
// The kernel's modes, each with its line of help; the first is the default.
const std::vector<std::pair<std::string, std::string>> kPace3dModes = {
    {"sf", "a single file, frames appended, kept open (open not timed)"},
    {"mf", "a file per frame PATH.fNNNNN, open and close not timed"},
    {"mf-wo", "a file per frame, open and close timed with the write"},
};
}  // namespace

Pace3dKernel::Pace3dKernel()
    : AppKernel({"pace3d",
                 "PACE3D / mpiiotester: voxel-file frames, Thakur's I/O levels 0-3, per-frame timing (styles)",
                 kPace3dModes, "style", "strata-pace3d.vox",
                 "mpirun -np 4 strata run pace3d --block-size 1M --frames 5 --level 3 --style sf --verify"}) {}

namespace {

struct FrameTimes {
  std::vector<std::vector<double>> per_frame;  // [frame][rank], seconds around the write (read) call
  double open_s = 0, close_s = 0;              // max over ranks, summed over files
  uint64_t calls = 0;                          // write (read) calls of the field, over ranks and frames
  double convert_s = 0, compute_s = 0;         // this rank's, untimed by the frames
};

class Pace3dRun final : public AppRun {
 public:
  Pace3dRun(Domain d, const AppContext& ctx, std::string style, int level, uint64_t frames)
      : d_(std::move(d)), ctx_(ctx), style_(std::move(style)), level_(level), frames_(frames) {
    header_.nz = d_.global[0];
    header_.ny = d_.global[1];
    header_.nx = d_.global[2];
    header_.element_bytes = d_.element_bytes;
    header_.components = d_.components;
    header_.frames = style_ == "sf" ? frames_ : 1;
    header_.seed = ctx_.values.seed;
  }

  void initialise() {
    // The simulation's state at frame 0: float values of the generator held as doubles.
    const Decomposition dec = d_.decomposition();
    base_.resize(d_.local_voxels() * d_.components);
    fill(dec, ctx_.values, reinterpret_cast<std::byte*>(base_.data()));
    out_.resize(base_.size());
    filetype_ = pace3d::field_filetype(d_);
    float mm[2] = {std::numeric_limits<float>::max(), std::numeric_limits<float>::max()};  // min, -max
    for (float v : base_) {
      mm[0] = std::min(mm[0], v);
      mm[1] = std::min(mm[1], -v);
    }
    float g[2];
    MPI_Allreduce(mm, g, 2, MPI_FLOAT, MPI_MIN, ctx_.comm);
    base_min_ = g[0];
    base_max_ = -g[1];
  }

  std::string mode() const override { return style_; }
  uint64_t files() const override { return style_ == "sf" ? 1 : frames_; }
  std::string layout() const override { return style_ == "sf" ? "shared" : "file per frame"; }
  uint64_t global_bytes() const override { return d_.global_bytes() * frames_; }
  uint64_t local_bytes() const override { return d_.local_bytes() * frames_; }
  Hints hints_in_effect() const override { return in_effect_; }

  nlohmann::json params() const override {
    return {{"style", style_},
            {"level", level_},
            {"decomp", d_.decomp},
            {"element", d_.element_bytes},
            {"frames", frames_},
            {"block_bytes", d_.local_bytes()},
            {"local_shape", {d_.local[0], d_.local[1], d_.local[2]}},
            {"process_grid", {d_.procs[0], d_.procs[1], d_.procs[2]}},
            {"global_shape", {d_.global[0], d_.global[1], d_.global[2]}},
            {"field_bytes", d_.global_bytes()},
            {"frame_bytes", header_.frame_bytes()},
            {"header_bytes", pace3d::kHeaderBytes}};
  }

  void remove_output() override {
    collectively(ctx_.comm, [&] {
      if (ctx_.rank != 0) return;
      for (uint64_t f = 0; f < files(); ++f) {
        const std::string path = file_path(f);
        if (unlink(path.c_str()) != 0 && errno != ENOENT) throw_system("cannot remove \"" + path + "\"", errno);
      }
    });
  }

  AppPhase write() override {
    FrameTimes t;
    std::vector<double> state(base_.begin(), base_.end());
    MpiioFile file;
    if (style_ == "sf") {
      t.open_s += open(file, file_path(0), Access::write);
      write_by_root(file, 0, pace3d::encode_header(header_));
    }
    for (uint64_t f = 0; f < frames_; ++f) {
      if (f > 0) {
        // The small compute step between frames (not timed, as in the paper): one explicit
        // Euler step of du/dt = 1 over the whole block.
        const double c0 = MPI_Wtime();
        for (double& u : state) u += 1.0;
        t.compute_s += MPI_Wtime() - c0;
      }
      // Each rank converts its double data to float into the output buffer, finding the
      // field's extremes for the frame's closing metadata on the way.
      const double c1 = MPI_Wtime();
      float mm[2] = {std::numeric_limits<float>::max(), std::numeric_limits<float>::max()};
      for (size_t i = 0; i < state.size(); ++i) {
        out_[i] = static_cast<float>(state[i]);
        mm[0] = std::min(mm[0], out_[i]);
        mm[1] = std::min(mm[1], -out_[i]);
      }
      t.convert_s += MPI_Wtime() - c1;
      float g[2];
      MPI_Allreduce(mm, g, 2, MPI_FLOAT, MPI_MIN, ctx_.comm);
      double open_s = 0, close_s = 0;
      if (style_ != "sf") {
        open_s = open(file, file_path(f), Access::write);
        write_by_root(file, 0, pace3d::encode_header(header_));
      }
      const uint64_t at = pace3d::frame_offset(header_, style_ == "sf" ? f : 0);
      write_by_root(file, at, pace3d::encode_frame_begin(f, static_cast<double>(f), d_.global_bytes()));
      MPI_Barrier(ctx_.comm);
      pace3d::FieldTransfer tr;
      collectively(ctx_.comm, [&] {
        tr = pace3d::transfer_field(file.get(), Access::write, at + pace3d::kFrameMetaBytes, d_, level_,
                                    filetype_.get(), reinterpret_cast<std::byte*>(out_.data()));
      });
      write_by_root(file, at + pace3d::kFrameMetaBytes + d_.global_bytes(),
                    pace3d::encode_frame_end({f, g[0], -g[1], d_.global_bytes()}));
      if (style_ != "sf") close_s = close(file, ctx_.io.fsync);
      t.open_s += open_s;
      t.close_s += close_s;
      t.calls += tr.calls;
      record(t, tr.call_s + (style_ == "mf-wo" ? open_s + close_s : 0.0));
    }
    if (style_ == "sf") t.close_s += close(file, ctx_.io.fsync);
    return summarise(t, "write");
  }

  AppPhase read(bool compare, std::optional<std::string>& mismatch) override {
    FrameTimes t;
    std::optional<std::string> local;
    MpiioFile file;
    if (style_ == "sf") {
      t.open_s += open(file, file_path(0), Access::read);
      check_header(file, file_path(0));
    }
    for (uint64_t f = 0; f < frames_; ++f) {
      double open_s = 0, close_s = 0;
      const std::string path = file_path(style_ == "sf" ? 0 : f);
      if (style_ != "sf") {
        open_s = open(file, path, Access::read);
        check_header(file, path);
      }
      const uint64_t at = pace3d::frame_offset(header_, style_ == "sf" ? f : 0);
      std::fill(out_.begin(), out_.end(), -1.0e30f);
      std::vector<std::byte> begin(pace3d::kFrameMetaBytes), end(pace3d::kFrameMetaBytes);
      read_by_root(file, at, begin);
      MPI_Barrier(ctx_.comm);
      pace3d::FieldTransfer tr;
      collectively(ctx_.comm, [&] {
        tr = pace3d::transfer_field(file.get(), Access::read, at + pace3d::kFrameMetaBytes, d_, level_, filetype_.get(),
                                    reinterpret_cast<std::byte*>(out_.data()));
      });
      read_by_root(file, at + pace3d::kFrameMetaBytes + d_.global_bytes(), end);
      if (style_ != "sf") close_s = close(file, false);
      t.open_s += open_s;
      t.close_s += close_s;
      t.calls += tr.calls;
      record(t, tr.call_s + (style_ == "mf-wo" ? open_s + close_s : 0.0));
      if (compare && !local) local = check_frame(f, path, begin, end);
    }
    if (style_ == "sf") t.close_s += close(file, false);
    mismatch = agree_mismatch(ctx_.comm, local);
    return summarise(t, "read");
  }

 private:
  std::string file_path(uint64_t frame) const {
    if (style_ == "sf") return ctx_.output;
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".f%05llu", static_cast<unsigned long long>(frame));
    return ctx_.output + suffix;
  }

  // Collective open and close; return the time, max over ranks.
  double open(MpiioFile& file, const std::string& path, Access access) {
    const double t0 = MPI_Wtime();
    collectively(ctx_.comm, [&] {
      file.open(ctx_.comm, path, access, hints_for_open(ctx_.hints, ctx_.io_component), ctx_.io_component);
    });
    if (access == Access::write) in_effect_ = file.hints_in_effect();
    return max_over_ranks(MPI_Wtime() - t0);
  }
  double close(MpiioFile& file, bool sync) {
    const double t0 = MPI_Wtime();
    collectively(ctx_.comm, [&] { file.close(sync); });
    return max_over_ranks(MPI_Wtime() - t0);
  }
  double max_over_ranks(double v) const {
    double m = 0;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, ctx_.comm);
    return m;
  }

  // The header and frame metadata are written (and read) by one rank.
  void write_by_root(MpiioFile& file, uint64_t offset, std::vector<std::byte> bytes) {
    collectively(ctx_.comm, [&] {
      if (ctx_.rank != 0) return;
      check_mpi(MPI_File_write_at(file.get(), static_cast<MPI_Offset>(offset), bytes.data(),
                                  static_cast<int>(bytes.size()), MPI_BYTE, MPI_STATUS_IGNORE),
                "writing the voxel file's metadata");
    });
  }
  void read_by_root(MpiioFile& file, uint64_t offset, std::vector<std::byte>& bytes) {
    collectively(ctx_.comm, [&] {
      if (ctx_.rank != 0) return;
      MPI_Status status;
      check_mpi(MPI_File_read_at(file.get(), static_cast<MPI_Offset>(offset), bytes.data(),
                                 static_cast<int>(bytes.size()), MPI_BYTE, &status),
                "reading the voxel file's metadata");
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      if (static_cast<size_t>(got) != bytes.size()) throw_runtime("\"" + file.path() + "\" ends inside metadata");
    });
  }

  void check_header(MpiioFile& file, const std::string& path) {
    std::vector<std::byte> bytes(pace3d::kHeaderBytes);
    read_by_root(file, 0, bytes);
    collectively(ctx_.comm, [&] {
      if (ctx_.rank != 0) return;
      const pace3d::VoxelHeader h = pace3d::decode_header(bytes.data(), path);
      if (h.nz != header_.nz || h.ny != header_.ny || h.nx != header_.nx || h.element_bytes != header_.element_bytes ||
          h.frames < header_.frames) {
        throw_usage("\"" + path + "\" holds " + std::to_string(h.frames) + " frame(s) of " + std::to_string(h.nz) +
                    "x" + std::to_string(h.ny) + "x" + std::to_string(h.nx) + " voxels of " +
                    std::to_string(h.element_bytes) + " bytes; these options expect " + std::to_string(header_.frames) +
                    " of " + std::to_string(header_.nz) + "x" + std::to_string(header_.ny) + "x" +
                    std::to_string(header_.nx) + " of " + std::to_string(header_.element_bytes) +
                    " (read with the writer's --block-size, --element, --decomp and rank count)");
      }
    });
  }

  // Rank 0 checks the frame's metadata, every rank its block: value + frame, bit for bit.
  std::optional<std::string> check_frame(uint64_t f, const std::string& path, const std::vector<std::byte>& begin,
                                         const std::vector<std::byte>& end) const {
    const auto expected = [&](float base) {
      return static_cast<float>(static_cast<double>(base) + static_cast<double>(f));
    };
    if (ctx_.rank == 0) {
      try {
        pace3d::check_frame_begin(begin.data(), f, d_.global_bytes(), path);
        const pace3d::FrameEnd e = pace3d::decode_frame_end(end.data(), path);
        if (e.frame != f || e.field_bytes != d_.global_bytes() || e.min != expected(base_min_) ||
            e.max != expected(base_max_)) {
          return "\"" + path + "\": frame " + std::to_string(f) + "'s FRAMEEND metadata holds frame " +
                 std::to_string(e.frame) + ", min " + std::to_string(e.min) + ", max " + std::to_string(e.max) +
                 "; expected min " + std::to_string(expected(base_min_)) + ", max " +
                 std::to_string(expected(base_max_));
        }
      } catch (const Error& err) {
        return std::string(err.what());
      }
    }
    for (size_t i = 0; i < out_.size(); ++i) {
      const float want = expected(base_[i]);
      if (std::memcmp(&out_[i], &want, sizeof want) != 0) {
        const uint64_t c = i % d_.components, v = i / d_.components;
        const uint64_t x = v % d_.local[2], y = (v / d_.local[2]) % d_.local[1], z = v / (d_.local[2] * d_.local[1]);
        char msg[256];
        std::snprintf(
            msg, sizeof msg,
            "\"%s\": frame %llu, voxel (z %llu, y %llu, x %llu) component %llu: found %g, "
            "expected %g",
            path.c_str(), static_cast<unsigned long long>(f), static_cast<unsigned long long>(d_.start(0) + z),
            static_cast<unsigned long long>(d_.start(1) + y), static_cast<unsigned long long>(d_.start(2) + x),
            static_cast<unsigned long long>(c), static_cast<double>(out_[i]), static_cast<double>(want));
        return std::string(msg);
      }
    }
    return std::nullopt;
  }

  void record(FrameTimes& t, double seconds) const {
    std::vector<double> all(static_cast<size_t>(ctx_.size));
    MPI_Allgather(&seconds, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, ctx_.comm);
    t.per_frame.push_back(std::move(all));
  }

  AppPhase summarise(const FrameTimes& t, const char* what) const {
    unsigned long long calls = t.calls, all_calls = 0;
    MPI_Allreduce(&calls, &all_calls, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, ctx_.comm);
    const double mib = static_cast<double>(d_.global_bytes()) / 1048576.0;
    // The first frame apart; the summary over the others (or over the only one).
    const uint64_t first_timed = frames_ > 1 ? 1 : 0;
    AppPhase p;
    p.rank_time_s.assign(static_cast<size_t>(ctx_.size), 0.0);
    nlohmann::json frames = nlohmann::json::array();
    std::vector<double> rates;
    char line[256];
    std::string text;
    std::snprintf(line, sizeof line,
                  "pace3d %s, style %s, level %d, %s decomposition %dx%dx%d, boxes of %llux%llux%llu voxels of %u "
                  "bytes (%s per rank), field %s\n",
                  what, style_.c_str(), level_, d_.decomp.c_str(), d_.procs[0], d_.procs[1], d_.procs[2],
                  static_cast<unsigned long long>(d_.local[0]), static_cast<unsigned long long>(d_.local[1]),
                  static_cast<unsigned long long>(d_.local[2]), d_.element_bytes, format_size(d_.local_bytes()).c_str(),
                  format_size(d_.global_bytes()).c_str());
    text += line;
    std::snprintf(line, sizeof line, "  %5s %12s %12s %12s %14s\n", "frame", "median(s)", "min(s)", "max(s)",
                  "rate(MiB/s)");
    text += line;
    for (uint64_t f = 0; f < t.per_frame.size(); ++f) {
      const auto& r = t.per_frame[f];
      const double med = median_of(r);
      const double rate = med > 0 ? mib / med : 0.0;
      frames.push_back({{"frame", f}, {"median_s", med}, {"rate_mib_s", rate}, {"rank_time_s", r}});
      std::snprintf(line, sizeof line, "  %5llu %12.6f %12.6f %12.6f %14.2f%s\n", static_cast<unsigned long long>(f),
                    med, *std::min_element(r.begin(), r.end()), *std::max_element(r.begin(), r.end()), rate,
                    f == 0 && first_timed == 1 ? "   first frame: not in the summary" : "");
      text += line;
      if (f < first_timed) continue;
      rates.push_back(rate);
      p.time_s += med;
      p.bytes += d_.global_bytes();
      for (size_t k = 0; k < r.size(); ++k) p.rank_time_s[k] += r[k];
    }
    double convert[2] = {t.convert_s, t.compute_s}, convert_max[2];
    MPI_Allreduce(convert, convert_max, 2, MPI_DOUBLE, MPI_MAX, ctx_.comm);
    p.xfer_s = p.time_s;
    p.open_s = t.open_s;
    p.close_s = t.close_s;
    p.requests = all_calls;
    const double med_rate = median_of(rates);
    p.details = {{"timing", std::string("per rank and frame around the ") + what +
                                " call(s) (mf-wo: with open and close); a frame's rate divides the field by the median "
                                "over ranks; time_s sums those medians over the summarised frames"},
                 {"frames", frames},
                 {"first_frame_excluded", first_timed == 1},
                 {"summary",
                  {{"frames", rates.size()},
                   {"median_rate_mib_s", med_rate},
                   {"min_rate_mib_s", rates.empty() ? 0 : *std::min_element(rates.begin(), rates.end())},
                   {"max_rate_mib_s", rates.empty() ? 0 : *std::max_element(rates.begin(), rates.end())}}},
                 {"calls", all_calls},
                 {"convert_s_max", convert_max[0]},
                 {"compute_s_max", convert_max[1]}};
    std::snprintf(line, sizeof line,
                  "  summary over %zu frame(s)%s: median rate %.2f MiB/s (min %.2f, max %.2f); %llu %s call(s) in all "
                  "%zu frames\n",
                  rates.size(), first_timed == 1 ? " after the first" : "", med_rate,
                  rates.empty() ? 0.0 : *std::min_element(rates.begin(), rates.end()),
                  rates.empty() ? 0.0 : *std::max_element(rates.begin(), rates.end()), all_calls, what,
                  t.per_frame.size());
    text += line;
    p.text = text;
    return p;
  }

  Domain d_;
  AppContext ctx_;
  std::string style_;
  int level_ = 3;
  uint64_t frames_ = 1;
  pace3d::VoxelHeader header_;
  std::vector<float> base_, out_;
  float base_min_ = 0, base_max_ = 0;
  Datatype filetype_;
  Hints in_effect_;
};

}  // namespace

std::unique_ptr<AppRun> Pace3dKernel::prepare(const OptionSet& o, const AppContext& ctx, bool) const {
  std::unique_ptr<Pace3dRun> run;
  collectively(ctx.comm, [&] {
    const uint64_t element = parse_count(o.get("element"), "--element");
    if (element != 4 && element != 12 && element != 64) {
      throw_usage("--element must be 4 (float), 12 (float vector) or 64 (phase-field block), got " + o.get("element"));
    }
    const uint64_t block = parse_size(o.get("block-size"), "--block-size");
    if (block < element || block > (uint64_t{1} << 30)) {
      throw_usage("--block-size must hold at least one voxel and at most 1G, got " + o.get("block-size"));
    }
    const uint64_t frames = parse_count(o.get("frames"), "--frames");
    if (frames < 1 || frames > 8192) throw_usage("--frames must be between 1 and 8192, got " + o.get("frames"));
    const std::string decomp = o.get("decomp");
    if (decomp != "1d" && decomp != "3d") throw_usage("--decomp must be 1d or 3d, got \"" + decomp + "\"");
    const uint64_t level = parse_count(o.get("level"), "--level");
    if (level > 3) throw_usage("--level must be 0, 1, 2 or 3 (Thakur's levels), got " + o.get("level"));
    if (ctx.output.empty()) throw_usage("--output must not be empty");
    Domain d = pace3d::make_domain(block, static_cast<uint32_t>(element), decomp, ctx.rank, ctx.size);
    run = std::make_unique<Pace3dRun>(std::move(d), ctx, o.get("style"), static_cast<int>(level), frames);
  });
  run->initialise();
  return run;
}

std::vector<KernelTest> Pace3dKernel::tests() const {
  // Each style and I/O level (odd levels on a 3-D decomposition), written, read back and verified.
  const char* element[] = {"4", "12", "64", "4"};
  std::vector<KernelTest> t;
  for (const std::string style : {"sf", "mf", "mf-wo"}) {
    for (int level = 0; level < 4; ++level) {
      const std::string decomp = level % 2 == 1 ? "3d" : "1d";
      t.push_back({.name = "app.pace3d." + style + ".level" + std::to_string(level) + "." + decomp,
                   .args = {"--style", style, "--level", std::to_string(level), "--decomp", decomp, "--element",
                            element[level], "--block-size", "16K", "--frames", "3", "--seed", "{NP}"},
                   .ranks = {1, 3, 4},
                   .backends = {.backend = false},
                   .output_suffix = ".vox"});
    }
  }
  return t;
}

}  // namespace strata
