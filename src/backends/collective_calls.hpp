// What a backend's collective calls cost, in the multi-dataset paper's terms: how many
// collective calls a transfer made, how many two-phase rounds (iterations) they imply, and
// Equation 1's time split — total = I/O + communication + collective overhead + library
// overhead (the paper's t_IO, t_comm, t_o, t_h5).
//
// For the MPI-IO based backends (mpiio-coll, hdf5, pnetcdf) the split comes from the PMPI
// hooks of mpiio_timing.h: I/O is the time in file reads/writes inside collective calls;
// collective overhead is the time a rank waits inside a call for the last rank to enter it
// (the straggler effect; entry times compared on one clock, exact on one node); communication
// is the rest of the time inside the calls (two-phase exchange, metadata, packing); library
// overhead is the transfer's time outside the calls (HDF5's or PnetCDF's own work: selections,
// type conversion, request bookkeeping). Two-phase rounds are estimated the way the paper's
// Table I says they can be: per call, the file domain it touches divided by the domain one
// round covers (aggregators x cb_buffer_size), rounded up, summed over calls.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/hints.hpp"

namespace strata {

struct CollectiveStats {
  bool valid = false;        // false: the backend makes no collective calls (posix, mpiio-ind)
  uint64_t calls = 0;        // collective data calls in the transfer (max over ranks)
  uint64_t rounds = 0;       // two-phase rounds implied, or the engine's rounds
  std::string rounds_kind;   // "two-phase estimate" or "engine"
  uint64_t aggregators = 0;  // of the geometry used for the estimate (or the engine's)
  uint64_t round_bytes = 0;  // cb_buffer_size of the estimate (or the engine's S_buff)
  // Equation 1, max over ranks of each part (seconds).
  double io_s = 0, comm_s = 0, overhead_s = 0, library_s = 0;
  nlohmann::json to_json() const;
};

// A rank's file bytes [lo, hi) in one collective call; lo == hi: it moves nothing.
struct CallSpan {
  uint64_t lo = 0, hi = 0;
};

struct TwoPhaseGeometry {
  uint64_t aggregators = 1;
  uint64_t buffer_bytes = uint64_t{16} << 20;
};

// cb_nodes and cb_buffer_size from the hints in effect (OMPIO: io_ompio_num_aggregators and
// io_ompio_bytes_per_agg when the info keys are absent); defaults 1 aggregator, 16 MiB.
TwoPhaseGeometry two_phase_geometry(const Hints& in_effect);

// Sum over calls of ceil(global span / (aggregators x buffer)). Collective over `comm`; every
// rank passes one span per call and all make the same number of calls.
uint64_t two_phase_rounds(MPI_Comm comm, const std::vector<CallSpan>& spans, const TwoPhaseGeometry& g);

// Starts measuring a transfer (resets the hooks). Local.
void begin_collective_timing();
// Ends it: keeps what the hooks saw until now, so that calls made later (by close) are not
// counted. The driver calls it right after every transfer. Local.
void end_collective_timing();
// The statistics of a transfer of `transfer_s` seconds between begin_ and end_collective_timing().
// Collective over `comm`.
// Equation 1's split of a transfer into c: the slowest rank's (the longest `transfer_s` over comm)
// parts {I/O, communication, collective overhead, library}, scaled down when they add up to more
// than its transfer took, so that they never add up to more than the phase's transfer time.
// Collective over comm.
void set_split(CollectiveStats& c, MPI_Comm comm, const double (&parts)[4], double transfer_s);

CollectiveStats mpiio_collective_stats(MPI_Comm comm, const std::vector<CallSpan>& spans, const Hints& in_effect,
                                       double transfer_s);

}  // namespace strata
