// MSLIO's data volume: how many solution files, values and bytes a (ccross, sub-elements,
// dimensions) case writes, calibrated on the paper's Table I (Boito et al., WAMCA 2022).
//
// Table I gives, per (ccross, sub-elements), the number of files (4^ccross) and the total data
// in MB (10^6 bytes); every value is one 14-byte formatted write. A solution file of the
// two-dimensional simulation holds about 0.443·S² + 1.32·S + 1 values for S sub-elements; we
// round that up to a whole number of two-dimensional points, P(S) = ceil((0.443·S²+1.32·S+1)/2),
// and a file of D dimensions holds D·P(S) values. With D = 2 this matches all 21 cells of
// Table I within 0.9 % (tests/unit/mslio_test.cpp checks every cell).
#pragma once

#include <cstdint>
#include <vector>

namespace strata::mslio {

constexpr uint64_t kValueBytes = 14;  // 13 formatted characters and a separator

uint64_t local_problems(unsigned ccross);                       // 4^ccross
uint64_t points_per_file(uint64_t subelements);                 // P(S)
uint64_t values_per_file(uint64_t subelements, unsigned dims);  // D·P(S)
uint64_t bytes_per_file(uint64_t subelements, unsigned dims);   // 14·D·P(S)

struct Volume {
  uint64_t files = 0;
  uint64_t bytes = 0;
};
Volume volume(unsigned ccross, uint64_t subelements, unsigned dims = 2);

// A cell of the paper's Table I.
struct TableOneCell {
  unsigned ccross;
  uint64_t subelements;
  double total_mb;  // 10^6 bytes
  uint64_t files;
};
const std::vector<TableOneCell>& table_one();

}  // namespace strata::mslio
