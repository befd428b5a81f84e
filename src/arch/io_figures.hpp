// The machine's figures the engine's strategy model needs (engine/plan/strategy.hpp,
// engine/plan/spans.hpp, engine/move/packing.hpp): measured by probe_io_figures() — `strata info
// --probe`, or at the engine's first use on a machine without them — and kept in the machine
// file's [io] table (arch/machine.hpp, docs/tiers.md). Until measured, the defaults below are
// stated figures of a commodity node, not measurements (`measured` says which).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

struct WriteFigure {
  uint64_t request_bytes;
  double seconds;  // one pwrite of that size into a file's page cache: the node's time per request (median)
};

struct IoFigures {
  bool measured = false;
  int probe_ranks = 2;          // ranks the MPI figures were measured at
  double put_latency_s = 3e-6;  // one small MPI_Put to another rank of the node, in a batch closed by one fence
  // The put figures are a core's own (measured by at most one rank per core of a node): the
  // model counts the sharing of the cores by more ranks itself.
  double put_bandwidth_Bps = 4e9;  // a large (4 MiB) MPI_Put to another rank of the node
  double put_run_s = 0.2e-6;       // each run of one MPI_Put with an hindexed target type (type built and freed)
  double fence_s = 20e-6;          // one MPI_Win_fence at probe_ranks ranks
  double collective_s = 10e-6;     // one 8-byte MPI_Allreduce at probe_ranks ranks
  // Measured by the engine when it starts, on its own communicator (job_collective_seconds()):
  // one small collective of every rank of the job, its sharing of the cores included. Not
  // stored; 0 when not measured. fence_at() and collective_at() at job_ranks return it.
  int job_ranks = 0;
  double job_collective_s = 0;
  double memcpy_Bps = 5e9;      // memcpy of 4 MiB
  double copy_run_s = 5e-9;     // each run of a copy of 64-byte runs to their places in a buffer (a staged round)
  double spread_run_s = 20e-9;  // each 8-byte run copied to a line of its own across 8 MiB (a copied write's runs)
  double fresh_Bps = 4e9;       // first touches of memory the process never used (page faults), per second
  double hash_Bps = 8e9;        // XXH3-64 of 4 MiB in memory
  double create_s = 50e-6;      // open(O_CREAT) and close of a new file in the probed folder
  double rename_s = 30e-6;      // rename() in that folder
  double fsync_Bps = 0;         // 16 MiB written then fsynced, per second (0: not measured)
  int cores = 0;                // cores of the node (hwloc, at probe time); 0: not known, ask the OS
  // How much to trust the figures: each timed figure keeps the best of its repeats (a busy moment
  // only ever slows a repeat down), and `scatter` is the largest ratio of a figure's median repeat
  // to that best (about 1 on a quiet machine; 0: not known). `load_average` is the 1-minute load
  // of the node when probed (-1: not known), `probed_at` the time (Unix seconds; 0: not known).
  double scatter = 0;
  double load_average = -1;
  int64_t probed_at = 0;
  std::vector<WriteFigure> write = {{4096, 4e-6}, {65536, 25e-6}, {1 << 20, 350e-6}, {4 << 20, 1.4e-3}};
  // The same requests over a file's cached pages: a write into an output's previous file, which
  // the engine recycles as its next write's partial file (engine/commit.cpp), rewrites pages
  // instead of allocating them. Measured at the same sizes as `write`; empty: not measured (such
  // writes are priced as new ones).
  std::vector<WriteFigure> rewrite;
  // The writers of one node that measured both curves at once (every rank of the probe's first
  // node, taking turns at one file's lock); 0: one writer alone measured `write` (a probe before
  // 2026-12-02's, whose curve priced a launch's first writes at half what they took: probed again).
  int curve_writers = 0;

  // Seconds for one pwrite of `bytes`: log-log interpolation between the points, the time per
  // byte of the largest above it, the smallest's time below it.
  double write_s(uint64_t bytes) const;
  // Seconds for n pwrites totalling `bytes` (each bytes / n); 0 when n == 0.
  double writes_s(uint64_t n, uint64_t bytes) const;
  // These figures for writes into a recycled file: `rewrite` as the write curve, when measured.
  IoFigures rewriting() const;
  // A fence or a small collective at `ranks` ranks: the measured one scaled by
  // log2(ranks) / log2(probe_ranks) (never below the measured one; a tenth of it for one rank);
  // at job_ranks the job's own (job_collective_s) when measured.
  double fence_at(int ranks) const;
  double collective_at(int ranks) const;
  // Cores that run copies and writes at once on a node: `cores` when known, else the online
  // processors the OS reports (no topology load on the engine's path).
  int cores_per_node() const;
  // Measured while the machine was busy: repeats scattered by more than kDoubtfulScatter.
  bool doubtful() const;
  // Probed before the program that reads them was built (a new build may time things otherwise).
  bool older_than_build() const;
};

// A figure whose median repeat took this many times its best was measured on a busy machine.
constexpr double kDoubtfulScatter = 2.5;

// The node's 1-minute load average (-1 when the system does not say).
double load_average_now();

// Collective over `comm`: measures every figure (the MPI ones between the ranks of `comm`, each
// rank putting to its neighbour — a lone rank keeps their defaults; the file ones by rank 0 in folder `dir`, its files
// removed afterwards; a folder it cannot write leaves the file figures at their defaults). Every rank returns the same
// figures. Takes a fraction of a second. Each figure is the best of its repeats (the slowest
// rank's best), with `scatter`, `load_average` and `probed_at` saying how far to trust them.
IoFigures probe_io_figures(MPI_Comm comm, const std::string& dir);
// Collective: one 8-byte MPI_Allreduce over `comm` as it costs now — the median of a few,
// each rank's, the slowest rank's median on every rank (the same figure everywhere).
double job_collective_seconds(MPI_Comm comm);

}  // namespace strata
