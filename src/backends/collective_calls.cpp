#include "backends/collective_calls.hpp"

#include <algorithm>

#include "backends/mpiio_timing.h"
#include "common/units.hpp"

namespace strata {

nlohmann::json CollectiveStats::to_json() const {
  return {{"calls", calls},
          {"rounds", rounds},
          {"rounds_kind", rounds_kind},
          {"aggregators", aggregators},
          {"round_bytes", round_bytes},
          {"split_s", {{"io", io_s}, {"comm", comm_s}, {"collective_overhead", overhead_s}, {"library", library_s}}}};
}

void set_split(CollectiveStats& c, MPI_Comm comm, const double (&parts)[4], double transfer_s) {
  double sum = 0;
  for (double p : parts) sum += std::max(0.0, p);
  const double scale = sum > transfer_s && sum > 0 ? transfer_s / sum : 1.0;
  double mine[4];
  for (int i = 0; i < 4; ++i) mine[i] = std::max(0.0, parts[i]) * scale;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  struct {
    double seconds;
    int rank;
  } me{transfer_s, rank}, slowest{0, 0};
  MPI_Allreduce(&me, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  MPI_Bcast(mine, 4, MPI_DOUBLE, slowest.rank, comm);
  c.io_s = mine[0];
  c.comm_s = mine[1];
  c.overhead_s = mine[2];
  c.library_s = mine[3];
}

TwoPhaseGeometry two_phase_geometry(const Hints& in_effect) {
  TwoPhaseGeometry g;
  auto find = [&](const char* key) -> const std::string* {
    for (const auto& [k, v] : in_effect) {
      if (k == key) return &v;
    }
    return nullptr;
  };
  auto number = [](const std::string& text, uint64_t fallback) {
    try {
      const uint64_t v = parse_size(text, "hint");
      return v == 0 ? fallback : v;
    } catch (...) {
      return fallback;
    }
  };
  if (const auto* v = find("cb_nodes")) {
    g.aggregators = number(*v, g.aggregators);
  } else if (const auto* w = find("io_ompio_num_aggregators")) {
    g.aggregators = number(*w, g.aggregators);
  }
  if (const auto* v = find("cb_buffer_size")) {
    g.buffer_bytes = number(*v, g.buffer_bytes);
  } else if (const auto* w = find("io_ompio_bytes_per_agg")) {
    g.buffer_bytes = number(*w, g.buffer_bytes);
  }
  return g;
}

uint64_t two_phase_rounds(MPI_Comm comm, const std::vector<CallSpan>& spans, const TwoPhaseGeometry& g) {
  const size_t n = spans.size();
  // Every value below 2^63: MPICH 4.0.2's MPI_MIN orders 64-bit unsigned types as signed.
  constexpr unsigned long long none = 0x7fffffffffffffffULL;
  std::vector<unsigned long long> lo(n), neg_hi(n), glo(n), gneg_hi(n);
  for (size_t i = 0; i < n; ++i) {
    const bool empty = spans[i].hi <= spans[i].lo;
    lo[i] = empty ? none : spans[i].lo;
    neg_hi[i] = empty ? none : none - spans[i].hi;  // MIN of this is MAX of hi
  }
  if (n > 0) {
    MPI_Allreduce(lo.data(), glo.data(), static_cast<int>(n), MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
    MPI_Allreduce(neg_hi.data(), gneg_hi.data(), static_cast<int>(n), MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
  }
  const uint64_t per_round = std::max<uint64_t>(1, g.aggregators) * std::max<uint64_t>(1, g.buffer_bytes);
  uint64_t rounds = 0;
  for (size_t i = 0; i < n; ++i) {
    if (glo[i] == none) continue;  // nobody moved anything in this call
    const uint64_t span = (none - gneg_hi[i]) - glo[i];
    rounds += std::max<uint64_t>(1, (span + per_round - 1) / per_round);
  }
  return rounds;
}

namespace {
strata_mpiio_timing kept;  // what end_collective_timing() saw (the hooks' state is process-wide too)
bool hooked = false;       // the program links the timing hooks (the strata program does)
}  // namespace

void begin_collective_timing() { strata_mpiio_timing_reset(); }
void end_collective_timing() {
  const strata_mpiio_timing* t = strata_mpiio_timing_get();
  hooked = t != nullptr;
  if (hooked) kept = *t;
}

CollectiveStats mpiio_collective_stats(MPI_Comm comm, const std::vector<CallSpan>& spans, const Hints& in_effect,
                                       double transfer_s) {
  const strata_mpiio_timing* t = &kept;
  CollectiveStats s;
  if (!hooked) return s;  // not measured (valid stays false): the same on every rank of one program
  s.valid = true;
  // Straggler wait: for each call, the last rank's entry time minus this rank's.
  unsigned long long calls = t->calls, max_calls = 0, min_calls = 0;
  MPI_Allreduce(&calls, &max_calls, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
  MPI_Allreduce(&calls, &min_calls, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
  const size_t tracked = std::min<size_t>(min_calls, sizeof t->entries / sizeof t->entries[0]);
  std::vector<double> last(tracked);
  if (tracked > 0) MPI_Allreduce(t->entries, last.data(), static_cast<int>(tracked), MPI_DOUBLE, MPI_MAX, comm);
  double wait = 0;
  for (size_t i = 0; i < tracked; ++i) wait += last[i] - t->entries[i];
  const double parts[4] = {t->io_s, std::max(0.0, t->inside_s - t->io_s - wait), wait,
                           std::max(0.0, transfer_s - t->inside_s)};
  set_split(s, comm, parts, transfer_s);
  s.calls = max_calls;
  const TwoPhaseGeometry g = two_phase_geometry(in_effect);
  s.aggregators = g.aggregators;
  s.round_bytes = g.buffer_bytes;
  s.rounds = two_phase_rounds(comm, spans, g);
  s.rounds_kind = "two-phase estimate";
  return s;
}

}  // namespace strata
