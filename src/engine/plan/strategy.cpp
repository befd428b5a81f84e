#include "engine/plan/strategy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace strata::engine {

namespace {

std::string mib(uint64_t b) {
  char s[32];
  if (b % (uint64_t{1} << 20) == 0) {
    std::snprintf(s, sizeof s, "%llu MiB", static_cast<unsigned long long>(b >> 20));
  } else {
    std::snprintf(s, sizeof s, "%llu KiB", static_cast<unsigned long long>(b >> 10));
  }
  return s;
}

struct Totals {
  uint64_t lo = UINT64_MAX, hi = 0, bytes = 0, runs = 0;
  int active = 0;
};

Totals totals(const StrategyInput& in) {
  Totals t;
  for (const RankShape& r : in.ranks) {
    if (r.bytes == 0) continue;
    t.lo = std::min(t.lo, r.lo);
    t.hi = std::max(t.hi, r.hi);
    t.bytes += r.bytes;
    t.runs += r.runs;
    ++t.active;
  }
  if (t.bytes == 0) t.lo = t.hi = 0;
  return t;
}

// An aggregator's work per range it receives (merged by offset, checked, cut into rounds, and
// for a staged write placed), x put_run_s: measured (2026-11-27, 16 ranks on 2 cores, E3SM F maps,
// two aggregators of about a million ranges each) 0.26 s of ranges and 0.12 s of round planning
// beyond the same plan without the exchange, about 0.38 us a range: 6 x put_run_s.
constexpr double kRangeRun = 6;

// Work that runs in parallel over `streams` at most: the slowest one, or the total shared out.
double parallel(double slowest, double total, double streams) {
  return std::max(slowest, total / std::max(streams, 1.0));
}

// Whether the ranks' intervals interleave (then direct runs' overlaps need the runs themselves).
bool interleaved(const StrategyInput& in) {
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const RankShape& r : in.ranks) {
    if (r.bytes > 0) spans.emplace_back(r.lo, r.hi);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].first < spans[i - 1].second) return true;
  }
  return false;
}

// Where ranks outnumber a node's cores, a fence or a collective also waits for every rank to be
// scheduled: kCrowded_s more per extra rank per core. Measured on this project's 2-core VM (16
// ranks, E3SM F maps, 17 rounds): about 1.5 ms a fence, against microseconds uncrowded.
// A collective measured at this job's ranks (IoFigures::job_collective_s) holds that already.
constexpr double kCrowded_s = 2e-4;
double crowded(const IoFigures& f, int ranks, double streams) {
  if (ranks == f.job_ranks && f.job_collective_s > 0) return 0;
  return kCrowded_s * std::max(0.0, static_cast<double>(ranks) / std::max(streams, 1.0) - 1.0);
}

// The file I/O of several writers, `writes` and `hashes` their totals (the checksums are computed
// on the writers' own cores), `slowest` the longest one's: one file's lock makes one node's writes
// take turns (StrategyInput::one_file_lock), else they share the cores. Measured on this project's
// 2-core VM (ext4, 2026-11-28): IOR's -b 4M -t 1M -s 2 at 4 ranks writes its 32 MiB in 6.5 ms, the
// time of eight 4 MiB pwrites one after another (0.76 ms each), not of two at once (3.2 ms).
double file_io(const StrategyInput& in, double slowest, double writes, double hashes) {
  const double streams = static_cast<double>(in.nodes) * in.cores_per_node;
  if (!in.one_file_lock) return parallel(slowest, writes + hashes, streams);
  return std::max(slowest, writes / std::max(in.nodes, 1) + hashes / std::max(streams, 1.0));
}

Alternative direct(const StrategyInput& in, const IoFigures& f, const Totals& t) {
  Alternative a;
  a.name = "direct";
  a.direct = true;
  const int ranks = static_cast<int>(in.ranks.size());
  double slowest = 0, writes = 0, hashes = 0;
  for (const RankShape& r : in.ranks) {
    const double write = f.writes_s(r.runs, r.bytes), hash = static_cast<double>(r.bytes) / f.hash_Bps;
    slowest = std::max(slowest, write + hash);
    writes += write;
    hashes += hash;
  }
  a.io_s = file_io(in, slowest, writes, hashes);
  // Interleaved ranks: every rank gets every run to check overlaps (one allgatherv).
  if (interleaved(in)) a.sync_s = f.collective_at(ranks) + static_cast<double>(t.runs) * 16.0 / f.memcpy_Bps;
  a.predicted_s = a.io_s + a.sync_s;
  return a;
}

// A copied write (or read) through a window larger than the one kept (StrategyInput::window_kept):
// the rank maps every page of the aggregators' round buffers its runs land on, once, at the cost
// of a first touch (fresh_Bps). The F maps' runs spread over the whole domain, so a rank touches all
// k x N x S bytes (one round's buffers when there is one round): 16 MiB a rank, about 4 100 page
// faults a rank and 50 ms of a 2-core VM at 16 ranks where the rounds are 1 MiB, measured
// 2026-11-28; 512 with 1 MiB rounds.
double touch(const StrategyInput& in, const IoFigures& f, const RankShape& r, int k, uint64_t s, int n,
             const Totals& t) {
  if (!in.shared_copy || r.bytes == 0) return 0;
  const uint64_t domain = t.hi - t.lo;
  const uint64_t part = std::max<uint64_t>((domain + static_cast<uint64_t>(k) - 1) / static_cast<uint64_t>(k), 1);
  const uint64_t rounds = (part + s - 1) / s;
  const uint64_t buffers = std::min<uint64_t>(static_cast<uint64_t>(n), std::max<uint64_t>(rounds, 1));
  if (std::min(s, part) * buffers <= in.window_kept) return 0;
  const uint64_t parts = std::min<uint64_t>(static_cast<uint64_t>(k), (r.hi - r.lo) / part + 2);
  const uint64_t touched = std::min(r.hi - r.lo, parts * buffers * std::min(s, part));
  return static_cast<double>(touched) / f.fresh_Bps;
}

Alternative aggregate(const StrategyInput& in, const IoFigures& f, const Totals& t, int k, uint64_t s, int n,
                      bool hybrid, bool staged) {
  Alternative a;
  a.aggregators = k;
  a.buffer_bytes = s;
  a.buffers = n;
  a.hybrid = hybrid;
  a.staged = staged;
  a.copied = in.shared_copy;
  a.name = "aggregate k=" + std::to_string(k) + " S=" + mib(s) + " N=" + std::to_string(n) +
           (hybrid ? " +direct" : "") + (staged ? " staged" : "") + (a.copied ? " copied" : "");
  const int ranks = static_cast<int>(in.ranks.size());
  const double streams = static_cast<double>(in.nodes) * in.cores_per_node;
  // Aggregated bytes and runs of each rank; the hybrid's large runs go direct beside them.
  uint64_t agg_bytes = 0, agg_runs = 0;
  double put_slowest = 0, put_total = 0, dir_slowest = 0, dir_writes = 0, dir_hashes = 0;
  double bare_slowest = 0, bare_total = 0;  // the same without a new window's first touches
  for (const RankShape& r : in.ranks) {
    const uint64_t b = hybrid ? r.bytes - r.big_bytes : r.bytes;
    const uint64_t m = hybrid ? r.runs + r.big_runs : r.runs;  // heads and tails of direct runs stay
    agg_bytes += b;
    agg_runs += b > 0 ? m : 0;
    if (b > 0) {
      // One put per (aggregator, round) the rank's span touches, or one per run unpacked;
      // staged: one (the bytes as they lie), and no datatype.
      const uint64_t span = r.hi - r.lo;
      const uint64_t groups = std::min<uint64_t>(m, span / s + 2);
      const double per_run = in.pack ? f.put_run_s : f.put_latency_s;
      // Copied: one copy a piece from the rank's memory into shared memory — a run's first one
      // spread among the other ranks' runs (a line of its own), the run's further pieces
      // following it; or staged, one after another where they land.
      const double more_pieces = static_cast<double>(r.pieces > r.runs ? r.pieces - r.runs : 0);
      const double put =
          a.copied && staged
              ? (static_cast<double>(m) + more_pieces) * f.copy_run_s + static_cast<double>(b) / f.memcpy_Bps
          : a.copied ? static_cast<double>(m) * f.spread_run_s + more_pieces * f.copy_run_s +
                           static_cast<double>(b) / f.memcpy_Bps
          : staged
              ? static_cast<double>(groups) * f.put_latency_s + static_cast<double>(b) / f.put_bandwidth_Bps +
                    static_cast<double>(b) / f.memcpy_Bps
              : static_cast<double>(groups) * f.put_latency_s + static_cast<double>(m - std::min(m, groups)) * per_run +
                    static_cast<double>(b) / f.put_bandwidth_Bps + static_cast<double>(b) / f.memcpy_Bps;
      const double pages = touch(in, f, r, k, s, n, t);
      put_slowest = std::max(put_slowest, put + pages);
      put_total += put + pages;
      bare_slowest = std::max(bare_slowest, put);
      bare_total += put;
    }
    if (hybrid && r.big_bytes > 0) {
      const double write = f.writes_s(r.big_runs, r.big_bytes), hash = static_cast<double>(r.big_bytes) / f.hash_Bps;
      dir_slowest = std::max(dir_slowest, write + hash);
      dir_writes += write;
      dir_hashes += hash;
    }
  }
  const uint64_t domain = t.hi - t.lo;
  const uint64_t part = (domain + static_cast<uint64_t>(k) - 1) / static_cast<uint64_t>(k);
  a.rounds = agg_bytes == 0 ? 0 : (part + s - 1) / s;
  const double rounds = static_cast<double>(a.rounds);
  const double part_bytes = static_cast<double>(agg_bytes) / k;
  // An aggregator's file I/O: whole spans (about one request per round), or per run, or
  // read-modify-write of each round's span, whichever is cheaper.
  double io = 0, io_hash = 0;
  if (a.rounds > 0) {
    const uint64_t per_round = std::max<uint64_t>(static_cast<uint64_t>(part_bytes / rounds), 1);
    const double spans = rounds * f.write_s(per_round);
    // Runs of different ranks that touch on the file are one request at their aggregator.
    uint64_t requests = agg_runs;
    if (in.intervals && t.bytes > 0) {
      const double share = static_cast<double>(agg_bytes) / static_cast<double>(t.bytes);
      requests = std::min(agg_runs, static_cast<uint64_t>(std::ceil(static_cast<double>(*in.intervals) * share)));
    }
    const double runs =
        f.writes_s(std::max<uint64_t>(requests / static_cast<uint64_t>(k), 1), static_cast<uint64_t>(part_bytes));
    const double rmw =
        2 * rounds * f.write_s(std::min<uint64_t>(s, std::max<uint64_t>(part / std::max<uint64_t>(a.rounds, 1), 1)));
    io = in.whole_spans ? spans : in.sieve_allowed ? std::min(runs, rmw) : runs;
    io_hash = part_bytes / f.hash_Bps;
    io += io_hash;
  }
  const double io_total = file_io(in, io, (io - io_hash) * k, io_hash * k);

  double moves = parallel(put_slowest, put_total, streams);
  a.touch_s = moves - parallel(bare_slowest, bare_total, streams);
  if (staged && agg_bytes > 0) {
    // Each aggregator places its runs between the fences, on its own thread of the node's cores.
    const double place = static_cast<double>(agg_runs) / k * f.copy_run_s + part_bytes / f.memcpy_Bps;
    moves += parallel(place, place * k, streams);
  }
  // Fences: one to open, one per round, and with one buffer one more between rounds; the range
  // exchange unless the ranks tile the domain.
  a.sync_s = (1 + rounds + (n == 1 ? std::max(rounds - 1, 0.0) : 0)) * (f.fence_at(ranks) + crowded(f, ranks, streams));
  // (Staged: always, the aggregators place every rank's runs themselves.) Each aggregator merges
  // the ranges it receives by offset, checks them for overlaps and cuts them into rounds:
  // kRangeRun x put_run_s a run, the aggregators at once on the node's cores.
  if ((!in.dense || staged) && agg_bytes > 0) {
    const double merge = static_cast<double>(agg_runs) / k * f.put_run_s * kRangeRun;
    a.sync_s += 2 * f.collective_at(ranks) + static_cast<double>(agg_runs) * 16.0 / f.memcpy_Bps * 2 +
                parallel(merge, merge * k, streams);
  }
  // Staged: where each rank's bytes land (a scan).
  if (staged && agg_bytes > 0) a.sync_s += f.collective_at(ranks);
  // Rounds pipeline: puts of round g+1 overlap the write of round g once N_buff >= 2.
  const double last = rounds > 0 ? io_total / rounds : 0;
  double pipeline =
      n >= 2 ? std::max(moves, io_total) + std::min(moves, io_total) / std::max(rounds, 1.0) : moves + io_total;
  // The ranks' copies into the window and the aggregators' writes share the node's cores: the
  // overlap cannot beat their total work spread over them.
  pipeline = std::max(pipeline, (put_total + io * k) / streams);
  a.move_s = moves;
  a.io_s = io_total;
  const double agg = a.sync_s + pipeline + (n >= 2 ? 0 : last);
  const double dir = file_io(in, dir_slowest, dir_writes, dir_hashes);
  // The hybrid's direct writes run on their own threads, sharing the node's cores (and, into
  // one file's lock, taking turns with the aggregators' writes).
  const double beside = in.one_file_lock ? 1.0 : std::max(streams, 1.0);
  a.predicted_s = hybrid ? std::max(agg, dir) + std::min(io_total, dir) / beside : agg;
  if (hybrid) a.io_s += dir;
  return a;
}

// ---- MPI-IO's own collective write (strata_compare_mpiio) ----------------------------------
// From the same figures as the engine's alternatives (MPI-IO-NOTES.md describes both paths):
//  - ROMIO with romio_cb_write=automatic writes independently when no two ranks' ranges
//    interleave: a contiguous request is one write; a noncontiguous one is data-sieved in
//    512 KiB pieces (read, modify, write). Otherwise two-phase: every rank flattens its request
//    into (offset, length) pairs and sends them to the cb_nodes aggregators (one per host by
//    default), which merge them; then ceil(partition / cb_buffer_size) rounds (16 MiB default,
//    holes included), each with an Alltoall of sizes over the communicator, the data moved
//    point to point into one buffer, and the buffer written — read first when the round has
//    holes. Nothing overlaps.
//  - OMPIO (vulcan): with at most 2 ranks each rank writes its own runs (individual). Otherwise
//    the same two phases with io_ompio_bytes_per_agg (32 MiB) rounds, but the aggregators'
//    handling of the runs grows with runs x ranks (measured: 1.33 s at 4 ranks, 5.6 s at 16 for
//    the same ~300 000 runs), and a call makes about seven collectives.
// Writes into one shared file are serialised by the file's lock (ext4's inode lock): they add
// up rather than share the cores. Per run, flattening, merging and exchanging cost what one
// hindexed datatype entry costs (put_run_s) times the factors below; a collective at more ranks
// than cores costs kOversubscribed_s more per extra rank per core (ranks wait to be scheduled).
// All calibrated on this project's 2-core VM against measured ROMIO and OMPIO writes
// (docs/engine.md, "MPI-IO's own write, predicted").
constexpr double kFlattenRuns = 1.0;         // flattening a run, per rank, x put_run_s
constexpr double kRomioMerge = 1.5;          // ROMIO's heap merge, per run and log2(ranks), x put_run_s
constexpr double kOmpioWalk = 7.0;           // OMPIO, per run and rank, x put_run_s
constexpr double kExchangeRun = 3.0;         // a run moved in the data exchange (both sides), x put_run_s
constexpr double kOversubscribed_s = 1e-3;   // per collective and extra rank per core
constexpr double kOmpioCollectives = 7;      // collectives of one OMPIO collective write (plus one a round)
constexpr uint64_t kSieveBytes = 512 << 10;  // ROMIO's ind_wr_buffer_size
// The engine's own plan, per declared run, x put_run_s: measured 0.33-0.70 s for 461 617 runs a
// rank (E3SM F maps, 4 ranks, loaded VM), about 6 x 0.16 us, before the plan lost its per-run
// copies and sorts; since (2026-11-27, quiet VM, 16 ranks on 2 cores) 0.11-0.15 s for the three
// real F maps and about 0.14 s for E3SM-IO's F map through the drop-in, where 6 predicted 0.35 s:
// about 2.5 a run. Counted per declared piece since (2026-11-28, another 2-core VM whose
// put_run_s is 24 ns): 0.17-0.21 s of plan for the three real F maps' 4.3 million pieces
// (272 000 a rank, 1.6 million runs), about 85 ns a piece on each core: 3.5. Since the plan's
// pieces are 32 bytes, its copy program is found as the runs are copied and its extents and key
// take one pass each (2026-11-28, same VM): 80-88 ms, about 40 ns a piece on each core: 1.7.
// Since a copied write lists neither its extents nor its transfers (found from the plan as they
// are copied), a decomposition's variables are declared like their map's first and hashed into
// the key as such (same VM, 2026-11-28 evening): about 3 ms of CPU a rank for 263 000 pieces (two
// passes over them), the slowest rank's plan 35-40 ms, waits included: 0.7; the lists, where they
// are made, kListRun more.
constexpr double kPlanRun = 0.7;
// A piece planned as a view (engine/plan/piece_views.hpp: a variable declared like another's
// runs), x put_run_s: summarised where it lies, neither copied at its declaration nor passed
// through normalise(); a first estimate from the passes it skips, calibrated below.
constexpr double kViewRun = 0.2;
// Listing a plan's runs per declared piece x put_run_s (the extents and, for movement other than
// a copy from contiguous memory, the transfers of each round): 3.6 ms a rank for the same pieces
// before they were dropped, about 0.55; the direct strategy lists its extents only (a third).
constexpr double kListRun = 0.55;
// What a reused plan still does per declared run (hashing the declarations to find the plan,
// putting the pieces in file order, packing them), x put_run_s: about 19 ns a run on the same
// VM, a third of a datatype entry.
constexpr double kReuseRun = 0.35;
// A copied write finding its runs' memory as it copies them, per piece x put_run_s: measured
// 23-30 ms beyond the copies for 272 000 pieces a rank (the three real F maps, 16 ranks on 2
// cores, put_run_s 24 ns; 2026-11-28), keeping them 28 ms: about 0.45. Found from the plan (a
// walk over the pieces in file order, no transfer list, no seek by stream offset): the first
// write's execution 33 ms for the same maps, where 0.45 predicted 24 ms beyond the copies: 0.2.
constexpr double kFindRun = 0.2;
// The same for a viewed piece (plan/piece_views.hpp), copied as it is found (no run listed, the
// views' few thousand pieces in the cache): a first estimate, calibrated below.
constexpr double kFindViewRun = 0.05;
constexpr double kProgramRunBytes = 16;  // a piece's entry in the program (engine/move/packing.hpp, MemoryRun)
// The largest buffer the model tries for a partition written in one round.
constexpr uint64_t kOneRoundMax = uint64_t{64} << 20;

// A collective of MPI-IO at `ranks` ranks on `cores` cores.
double mpiio_collective(const IoFigures& f, int ranks, double cores) {
  return f.collective_at(ranks) + kOversubscribed_s * std::max(0.0, ranks / std::max(cores, 1.0) - 1.0);
}

}  // namespace

PredictionParts prediction_parts(const Alternative& a, const IoFigures& f, int ranks, bool reused, bool repeated,
                                 bool program_kept) {
  PredictionParts p;
  if (!reused) {
    p.plan_s = a.plan_s - a.find_s;
    p.write_s = a.predicted_s - p.plan_s;
    return p;
  }
  const double memory = program_kept ? 0 : repeated ? a.keep_s : a.find_s;
  // The window the plan's first execution made is kept: its pages are touched already.
  p.write_s = a.predicted_s - a.plan_s - a.touch_s + memory;
  p.plan_s = (repeated ? 0 : a.reuse_s) + f.collective_at(ranks);
  return p;
}

double reused_prediction(const Alternative& a, const IoFigures& f, int ranks, bool repeated, bool program_kept) {
  const PredictionParts p = prediction_parts(a, f, ranks, true, repeated, program_kept);
  return p.plan_s + p.write_s;
}

Alternative predict_mpiio(const StrategyInput& in, const IoFigures& f) {
  Alternative a;
  a.name = "mpi-io";
  a.mpiio = true;
  const Totals t = totals(in);
  const int ranks = std::max(static_cast<int>(in.ranks.size()), 1);
  const double streams = static_cast<double>(std::max(in.nodes, 1)) * std::max(in.cores_per_node, 1);
  const double log_ranks = std::log2(static_cast<double>(std::max(ranks, 2)));
  // Every rank flattens its request at once (sharing the cores when they are fewer).
  double flatten_slowest = 0, flatten_total = 0;
  for (const RankShape& r : in.ranks) {
    const double x = static_cast<double>(r.runs) * f.put_run_s * kFlattenRuns;
    flatten_slowest = std::max(flatten_slowest, x);
    flatten_total += x;
  }
  const double flatten = parallel(flatten_slowest, flatten_total, streams);
  // The call only: the caller opened the file and closes it whichever way it writes; MPI-IO
  // has no commit of its own.
  const double collective = mpiio_collective(f, ranks, streams);
  const bool independent = in.mpiio_romio ? !interleaved(in) : ranks <= 2;
  if (t.bytes == 0 || independent) {
    double slowest = 0, total = 0;
    for (const RankShape& r : in.ranks) {
      if (r.bytes == 0) continue;
      double w = 0;
      if (r.runs <= 1 || !in.mpiio_romio) {
        w = f.writes_s(r.runs, r.bytes);
      } else {  // data sieving over the rank's span
        const uint64_t span = r.hi - r.lo;
        const double pieces = std::ceil(static_cast<double>(span) / kSieveBytes);
        w = 2 * pieces * f.write_s(std::min<uint64_t>(span, kSieveBytes)) + static_cast<double>(r.bytes) / f.memcpy_Bps;
      }
      slowest = std::max(slowest, w);
      total += w;
    }
    a.plan_s = flatten;
    a.io_s = std::max(slowest, total);  // one file: the writes take turns
    a.sync_s = collective;              // ROMIO's allgather of the ranks' ranges
    a.predicted_s = a.plan_s + a.io_s + a.sync_s;
    return a;
  }
  int k = in.mpiio_aggregators.value_or(0);
  const uint64_t s = in.mpiio_buffer.value_or(in.mpiio_romio ? uint64_t{16} << 20 : uint64_t{32} << 20);
  if (k <= 0) {
    // ROMIO: cb_config_list *:1, one per host. OMPIO: enough aggregators for bytes_per_agg
    // each, at least one per node.
    k = in.mpiio_romio ? in.nodes
                       : static_cast<int>(std::max<uint64_t>((t.bytes + s - 1) / s, static_cast<uint64_t>(in.nodes)));
  }
  k = std::clamp(k, 1, ranks);
  a.aggregators = k;
  a.buffer_bytes = s;
  a.buffers = 1;
  const uint64_t domain = t.hi - t.lo;
  const uint64_t part = (domain + static_cast<uint64_t>(k) - 1) / static_cast<uint64_t>(k);
  a.rounds = (part + s - 1) / s;
  const double rounds = static_cast<double>(a.rounds);
  const double runs_per_agg = static_cast<double>(t.runs) / k;
  // Plan: flatten, send the pairs (16 bytes each, 24 at the aggregator), merge or sort them.
  double order = runs_per_agg * log_ranks * f.put_run_s * kRomioMerge;
  if (!in.mpiio_romio) order = static_cast<double>(t.runs) * ranks * f.put_run_s * kOmpioWalk;
  const double exchanges = in.mpiio_romio ? 2 : kOmpioCollectives - 2;  // the ranges (and OMPIO's set-up)
  a.plan_s = flatten + exchanges * collective + static_cast<double>(t.runs) * 40.0 / f.memcpy_Bps + order;
  // Movement: each aggregator receives its partition's bytes and runs; each rank sends its own.
  double send = 0;
  for (const RankShape& r : in.ranks) {
    send = std::max(send, static_cast<double>(r.bytes) / f.put_bandwidth_Bps +
                              static_cast<double>(r.runs) * f.put_run_s * kExchangeRun);
  }
  const double receive =
      static_cast<double>(t.bytes) / k / f.put_bandwidth_Bps + runs_per_agg * f.put_run_s * kExchangeRun;
  a.move_s = std::max(send, receive) + rounds * collective;  // an Alltoall of sizes a round
  // I/O: one buffer per round; rounds with holes are read first (the domain is dense only when
  // the ranks' bytes tile it).
  const uint64_t per_round = std::max<uint64_t>(std::min<uint64_t>(s, part), 1);
  const double write_round = f.write_s(per_round);
  const double io = rounds * (in.dense ? write_round : 2 * write_round);
  a.io_s = io * k;            // one file: the aggregators' writes take turns
  a.sync_s = 2 * collective;  // the Allreduce of the round count, the end of the call
  a.predicted_s = a.plan_s + a.move_s + a.io_s + a.sync_s;
  return a;
}

StrategyChoice choose_strategy(const StrategyInput& in, const IoFigures& measured) {
  StrategyChoice c;
  c.input = in;
  // A recycled file's requests rewrite cached pages (the rewrite curve); MPI-IO's, below, its own.
  const IoFigures f = in.write && in.recycled ? measured.rewriting() : measured;
  const Totals t = totals(in);
  const int ranks = static_cast<int>(in.ranks.size());
  const bool can_direct = in.direct_allowed && !in.force_aggregate;
  const bool can_aggregate = in.aggregate_allowed && !in.force_direct;
  if (can_direct && (in.force_direct || !in.aggregators.has_value())) c.alternatives.push_back(direct(in, f, t));
  if (can_aggregate || c.alternatives.empty()) {
    // Aggregator counts: the hint, or 1, 2, 4, ... up to one per rank, and one per node.
    std::vector<int> ks;
    if (in.aggregators) {
      ks.push_back(std::clamp(*in.aggregators, 1, std::max(ranks, 1)));
    } else {
      for (int k = 1; k < ranks; k *= 2) ks.push_back(k);
      ks.push_back(std::max(ranks, 1));
      ks.push_back(std::max(in.nodes, 1));
      std::sort(ks.begin(), ks.end());
      ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    }
    // Buffer sizes: the hint, or 1, 4 and 16 MiB, and a partition's whole span in one round
    // when it is larger than those but at most kOneRoundMax (fences cost most where ranks
    // outnumber cores).
    auto sizes_for = [&](int k) {
      std::vector<uint64_t> sizes;
      if (in.buffer_bytes) {
        sizes.push_back(*in.buffer_bytes);
        return sizes;
      }
      for (uint64_t s : {uint64_t{1} << 20, uint64_t{4} << 20, uint64_t{16} << 20}) {
        sizes.push_back(std::max(in.align, s / in.align * in.align));
      }
      const uint64_t part = (t.hi - t.lo + static_cast<uint64_t>(k) - 1) / static_cast<uint64_t>(k);
      const uint64_t whole = (part + in.align - 1) / in.align * in.align;
      if (whole > sizes.back() && whole <= kOneRoundMax) sizes.push_back(whole);
      sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
      return sizes;
    };
    const int n = in.buffers.value_or(2);
    std::vector<bool> hybrids;
    const bool hybrid_possible = !in.hybrid_forced_off && in.hybrid_threshold > 0;
    if (hybrid_possible) hybrids.push_back(true);
    if (!hybrid_possible || !in.hybrid_forced_on) hybrids.push_back(false);
    // Staged after the others: it must beat them by the margin below to be taken.
    std::vector<bool> stagings;
    if (!in.stage_forced) stagings.push_back(false);
    if (in.stage || in.stage_forced) stagings.push_back(true);
    for (bool staged : stagings) {
      for (bool hybrid : hybrids) {
        for (int k : ks) {
          for (uint64_t s : sizes_for(k)) {
            if (staged && s > UINT32_MAX) continue;  // a run's place in its round is 32 bits
            c.alternatives.push_back(aggregate(in, f, t, k, s, n, hybrid, staged));
          }
        }
      }
    }
  }
  // What every alternative pays alike (so it never changes the choice, but makes the prediction
  // comparable with the measured time): the plan's allgather, the close's agreement and the
  // statistics' reduction; a commit's intent record, renames and checksum messages.
  const double collective =
      f.collective_at(ranks) +
      crowded(f, ranks, static_cast<double>(std::max(in.nodes, 1)) * std::max(in.cores_per_node, 1));
  double fixed = 3 * collective;
  if (in.commit) fixed += f.create_s + 3 * f.rename_s + collective;
  // The plan itself: per declared piece (a run over several pieces of memory counts each),
  // sorting, summarising, splitting and listing it for its aggregator (kPlanRun x put_run_s
  // each, on the rank with the most). A reused plan pays one reduction instead
  // (reused_prediction()).
  // Every rank plans at once: on a node with more ranks than cores they share the cores.
  // Pieces planned as views cost kViewRun instead. A copied write finds its pieces' memory as it
  // copies them (kFindRun a piece); a repeated phase's first execution keeps what it found (its
  // copy program: 16 new bytes a piece), which its next executions copy by. Viewed pieces are
  // found at kFindViewRun and keep no program.
  auto per_piece = [&](double s, double viewed_s) {  // s a piece (viewed_s a viewed one), every rank at once
    double most = 0, all = 0;
    for (const RankShape& r : in.ranks) {
      const uint64_t n = std::max(r.pieces, r.runs), viewed = std::min(r.viewed, n);
      const double x = static_cast<double>(n - viewed) * s + static_cast<double>(viewed) * viewed_s;
      most = std::max(most, x);
      all += x;
    }
    return parallel(most, all, static_cast<double>(std::max(in.nodes, 1)) * std::max(in.cores_per_node, 1));
  };
  const double plan = per_piece(f.put_run_s * kPlanRun, f.put_run_s * kViewRun);
  const double reuse = per_piece(f.put_run_s * kReuseRun, f.put_run_s * kReuseRun);
  const double find = per_piece(f.put_run_s * kFindRun, f.put_run_s * kFindViewRun);
  const double keep = per_piece(f.put_run_s * kFindRun + kProgramRunBytes / f.fresh_Bps, f.put_run_s * kFindViewRun);
  const double list = per_piece(f.put_run_s * kListRun, f.put_run_s * kListRun);
  const bool big_runs =
      std::any_of(in.ranks.begin(), in.ranks.end(), [](const RankShape& r) { return r.big_runs > 0; });
  for (Alternative& a : c.alternatives) {
    a.sync_s += fixed;
    a.find_s = a.copied ? find : 0;
    a.keep_s = a.copied ? keep : 0;
    // A write copied from memory with every byte aggregated lists nothing (PackedTransfers::copied_by_plan).
    const bool unlisted = in.write && a.copied && !a.staged && !a.direct && (!a.hybrid || !big_runs);
    a.plan_s = plan + a.find_s + (unlisted ? 0 : a.direct ? list / 3 : list);
    a.reuse_s = reuse;
    a.predicted_s += fixed + a.plan_s;
  }
  // The cheapest; an alternative must beat an earlier one (simpler: owners before aggregators,
  // fewer aggregators, smaller buffers) by more than 5 %, the probe's own scatter, to be taken —
  // 5 % of what differs between them, not of the plan and the fixed costs all of them pay.
  const double common = fixed + plan;  // (a copied program differs: it stays in the comparison)
  for (size_t i = 1; i < c.alternatives.size(); ++i) {
    if (c.alternatives[i].predicted_s - common < (c.alternatives[c.chosen].predicted_s - common) * 0.95) c.chosen = i;
  }
  if (in.compare_mpiio) c.alternatives.push_back(predict_mpiio(in, measured));  // last: never chosen
  return c;
}

StrategyChoice repriced(const StrategyChoice& c, bool recycled, const IoFigures& f) {
  if (c.input.recycled == recycled || c.alternatives.empty()) return c;
  StrategyInput in = c.input;
  in.recycled = recycled;
  StrategyChoice again = choose_strategy(in, f);
  again.chosen = std::min(c.chosen, again.alternatives.size() - 1);  // (the same list: only the prices differ)
  return again;
}

}  // namespace strata::engine
