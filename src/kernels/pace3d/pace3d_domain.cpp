#include "kernels/pace3d/pace3d_domain.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/error.hpp"

namespace strata::pace3d {

uint64_t Domain::row_file_offset(uint64_t z, uint64_t y) const {
  const uint64_t gz = start(0) + z, gy = start(1) + y;
  return ((gz * global[1] + gy) * global[2] + start(2)) * element_bytes;
}

Decomposition Domain::decomposition() const {
  Decomposition d;
  d.variables.push_back({"field", ElemType::f32, {global[0], global[1], global[2], components}});
  d.blocks.push_back({0, {start(0), start(1), start(2), 0}, {local[0], local[1], local[2], components}});
  return d;
}

std::array<int, 3> process_grid(int ranks) {
  // Prime factors, largest first, each to the dimension with the fewest processes so far.
  std::vector<int> primes;
  int n = ranks;
  for (int p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      primes.push_back(p);
      n /= p;
    }
  }
  if (n > 1) primes.push_back(n);
  std::sort(primes.rbegin(), primes.rend());
  std::array<int, 3> dims = {1, 1, 1};
  for (int p : primes) *std::min_element(dims.begin(), dims.end()) *= p;
  std::sort(dims.rbegin(), dims.rend());
  return dims;
}

Domain make_domain(uint64_t block_bytes, uint32_t element_bytes, const std::string& decomp, int rank, int size) {
  Domain d;
  d.element_bytes = element_bytes;
  d.components = element_bytes / 4;
  d.decomp = decomp;
  const uint64_t voxels = block_bytes / element_bytes;
  if (voxels == 0) {
    throw_usage("--block-size " + std::to_string(block_bytes) + " holds no voxel of " + std::to_string(element_bytes) +
                " bytes");
  }
  // A near-cube: x and y the cube root, z what is left (at least 1).
  uint64_t side = static_cast<uint64_t>(std::floor(std::cbrt(static_cast<double>(voxels)) + 1e-9));
  side = std::max<uint64_t>(side, 1);
  d.local = {std::max<uint64_t>(voxels / (side * side), 1), side, side};
  if (decomp == "1d") {
    d.procs = {size, 1, 1};
    d.coords = {rank, 0, 0};
  } else {
    d.procs = process_grid(size);
    d.coords = {rank / (d.procs[1] * d.procs[2]), (rank / d.procs[2]) % d.procs[1], rank % d.procs[2]};
  }
  for (int a = 0; a < 3; ++a) d.global[a] = d.local[a] * static_cast<uint64_t>(d.procs[a]);
  if (d.global[2] * element_bytes > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
      d.global[0] > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
      d.global[1] > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    throw_usage("the field is too large for an MPI subarray: lower --block-size");
  }
  return d;
}

Datatype field_filetype(const Domain& d) {
  int sizes[3] = {static_cast<int>(d.global[0]), static_cast<int>(d.global[1]),
                  static_cast<int>(d.global[2] * d.element_bytes)};
  int sub[3] = {static_cast<int>(d.local[0]), static_cast<int>(d.local[1]),
                static_cast<int>(d.local[2] * d.element_bytes)};
  int starts[3] = {static_cast<int>(d.start(0)), static_cast<int>(d.start(1)),
                   static_cast<int>(d.start(2) * d.element_bytes)};
  Datatype t;
  check_mpi(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_BYTE, t.out()),
            "MPI_Type_create_subarray");
  check_mpi(MPI_Type_commit(t.address()), "MPI_Type_commit");
  return t;
}

}  // namespace strata::pace3d
