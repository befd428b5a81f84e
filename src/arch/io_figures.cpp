#include "arch/io_figures.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <unistd.h>

namespace strata {

namespace {

// Log-log interpolation between the measured points; the largest one's time per byte above it,
// the smallest one's time below it.
double interpolated(const std::vector<WriteFigure>& write, uint64_t bytes) {
  if (bytes <= write.front().request_bytes) return write.front().seconds;
  for (size_t i = 1; i < write.size(); ++i) {
    if (bytes <= write[i].request_bytes) {
      const double x0 = std::log(static_cast<double>(write[i - 1].request_bytes));
      const double x1 = std::log(static_cast<double>(write[i].request_bytes));
      const double y0 = std::log(write[i - 1].seconds), y1 = std::log(write[i].seconds);
      const double t = (std::log(static_cast<double>(bytes)) - x0) / (x1 - x0);
      return std::exp(y0 + t * (y1 - y0));
    }
  }
  const WriteFigure& last = write.back();
  return last.seconds * static_cast<double>(bytes) / static_cast<double>(last.request_bytes);
}

}  // namespace

double IoFigures::write_s(uint64_t bytes) const {
  if (write.empty()) return 5e-6 + static_cast<double>(bytes) / 2e9;
  // A large request never costs more than the smaller requests it could be cut into: a noisy
  // point (a probe that met a page-cache flush) must not make large requests look dearer per
  // byte than small ones.
  double best = interpolated(write, bytes);
  for (const WriteFigure& w : write) {
    if (w.request_bytes >= bytes) break;
    const uint64_t pieces = (bytes + w.request_bytes - 1) / w.request_bytes;
    best = std::min(best, static_cast<double>(pieces) * w.seconds);
  }
  return best;
}

double IoFigures::writes_s(uint64_t n, uint64_t bytes) const {
  if (n == 0) return 0;
  return static_cast<double>(n) * write_s(std::max<uint64_t>(bytes / n, 1));
}

IoFigures IoFigures::rewriting() const {
  IoFigures f = *this;
  if (!rewrite.empty()) f.write = rewrite;
  return f;
}

namespace {
double scaled(double measured, int probe_ranks, int ranks) {
  if (ranks <= 1) return measured / 10;
  const double base = std::log2(std::max(probe_ranks, 2));
  return measured * std::max(1.0, std::log2(ranks) / base);
}
}  // namespace

int IoFigures::cores_per_node() const {
  if (cores > 0) return cores;
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

bool IoFigures::doubtful() const { return measured && scatter > kDoubtfulScatter; }

bool IoFigures::older_than_build() const {
  if (!measured || probed_at <= 0) return false;
  // The object that holds this code (the shared library, or the program it is linked into).
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&load_average_now), &info) == 0 || info.dli_fname == nullptr) return false;
  struct stat st {};
  if (::stat(info.dli_fname, &st) != 0) return false;
  return st.st_mtime > probed_at;
}

double load_average_now() {
  double load[1] = {0};
  return ::getloadavg(load, 1) == 1 ? load[0] : -1;
}

double IoFigures::fence_at(int ranks) const {
  return ranks == job_ranks && job_collective_s > 0 ? job_collective_s : scaled(fence_s, probe_ranks, ranks);
}
double IoFigures::collective_at(int ranks) const {
  return ranks == job_ranks && job_collective_s > 0 ? job_collective_s : scaled(collective_s, probe_ranks, ranks);
}

}  // namespace strata
