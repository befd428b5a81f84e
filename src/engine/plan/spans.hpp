// How an aggregator writes (or reads) each round's buffer: as few contiguous spans as the
// file allows. In a file the phase creates (a partial file, committed at close) holes hold
// nothing, so neighbouring runs merge into one span and the holes between them are zeroed in
// the buffer; a hole at least `hole_limit` long ends the span (the file stays sparse there).
// Written in place, holes must keep what the file holds: each group of runs is written either
// run by run or as one read-modify-write of its span (ROMIO's data sieving), whichever the
// figures predict cheaper. A read reads whole spans (holes read and ignored). Spans never
// cover bytes other ranks write directly: those split a span. Pure: no MPI.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "arch/io_figures.hpp"
#include "engine/plan/exchange.hpp"

namespace strata::engine {

struct RoundSpan {
  uint64_t file_offset = 0;
  uint64_t length = 0;
  uint64_t buffer_offset = 0;
  // Read-modify-write: the data pieces (offset within the span, length); empty: write it all.
  std::vector<std::pair<uint64_t, uint64_t>> pieces;
};

struct RoundIo {
  std::vector<RoundSpan> spans;
  std::vector<std::pair<uint64_t, uint64_t>> zero;  // buffer ranges to clear before writing (holes)
  // The same holes in the file (global offset, length): written as zeros but owned by no rank,
  // so the index can tell a reader they hold no data (IndexedFile::holes).
  std::vector<std::pair<uint64_t, uint64_t>> holes;
  // Staged: the round's runs as they landed in the window, placed in file order (staged_places).
  std::vector<PlacedRun> places;
};

enum class SpanPolicy {
  runs,   // one request per run (strata_spans=false)
  fill,   // whole spans, holes zeroed: a new file
  sieve,  // per group of runs: run by run or read-modify-write, by cost (in place)
  read,   // whole spans, holes read and ignored
};

// `direct` holds every rank's direct runs sorted by offset (may be empty).
std::vector<RoundIo> plan_round_io(const std::vector<std::vector<Run>>& rounds,
                                   const std::vector<ReceivedRange>& direct, SpanPolicy policy, uint64_t hole_limit,
                                   const IoFigures& f);

// The hole length below which filling (or reading) a hole costs less than one more request.
uint64_t hole_limit_from(const IoFigures& f);

}  // namespace strata::engine
