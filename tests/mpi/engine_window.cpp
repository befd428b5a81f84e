// The engine's RMA window (src/engine/move/window.hpp): every segment is asked for in whole pages,
// and a put to displacement d of a rank lands at that rank's base() + d, whatever the sizes the
// ranks asked for (odd ones, 8 bytes past a page, nothing). MPICH 4.0.2 put bytes up to 15 bytes
// early at ranks whose lower ranks' sizes did not add up to a multiple of 16 (staged writes of
// S_buff plus an odd number of 8-byte runs: engine.property seeds 11, 15, 20, 34, 46 under MPICH).
// A shared window (every rank on one node) is reached by address: a copy to peer(t) + d lands
// where a put to displacement d does.
// usage: mpiexec -n K engine_window
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/move/window.hpp"

using namespace strata::engine;

namespace {

int rank = 0, size = 1, failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "engine_window: rank %d: FAIL %s\n", rank, what.c_str());
    ++failures;
  }
}

// Every rank puts 8 bytes of (its rank + 1) at displacement 8·rank of every rank that exposes
// memory; each then finds every origin's bytes where it put them, and zeros elsewhere.
void puts_land_where_aimed(const std::vector<uint64_t>& bytes_of_rank, const std::string& name, bool shared) {
  const uint64_t mine = bytes_of_rank[static_cast<size_t>(rank)];
  Window w(MPI_COMM_WORLD, mine, shared);
  check(w.shared() == shared, name + ": the window is " + (w.shared() ? "" : "not ") + "shared");
  if (mine > 0) std::memset(w.base(), 0, mine);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, w.get());
  std::vector<unsigned char> marker(8, static_cast<unsigned char>(rank + 1));
  for (int t = 0; t < size; ++t) {
    if (bytes_of_rank[static_cast<size_t>(t)] < 8 * static_cast<uint64_t>(size)) continue;
    if (shared) {
      std::memcpy(w.peer(t) + 8 * rank, marker.data(), 8);
    } else {
      MPI_Put(marker.data(), 8, MPI_BYTE, t, static_cast<MPI_Aint>(8 * rank), 8, MPI_BYTE, w.get());
    }
  }
  if (shared) std::atomic_thread_fence(std::memory_order_seq_cst);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, w.get());
  if (mine < 8 * static_cast<uint64_t>(size)) return;
  const auto* at = reinterpret_cast<const unsigned char*>(w.base());
  for (uint64_t b = 0; b < 8 * static_cast<uint64_t>(size) + 16; ++b) {
    const unsigned char want = b < 8 * static_cast<uint64_t>(size) ? static_cast<unsigned char>(b / 8 + 1) : 0;
    if (at[b] != want) {
      check(false, name + ": byte " + std::to_string(b) + " of the window is " + std::to_string(at[b]) + ", not " +
                       std::to_string(want) + " (a put landed elsewhere)");
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  check(window_request_bytes(0) == 0, "nothing asks for nothing");
  check(window_request_bytes(1) == kWindowAlignment, "one byte asks for a page");
  check(window_request_bytes(kWindowAlignment) == kWindowAlignment, "a page asks for a page");
  check(window_request_bytes((uint64_t{1} << 20) + 5 * 8) == (uint64_t{1} << 20) + kWindowAlignment,
        "a staged buffer (S_buff and five runs) asks for whole pages");

  const uint64_t staged = 3 * ((uint64_t{1} << 20) + 5 * 8);  // N_buff = 3 staged buffers, 5 runs each
  const std::vector<std::pair<std::string, std::vector<uint64_t>>> cases = {
      {"1000 bytes each", std::vector<uint64_t>(static_cast<size_t>(size), 1000)},
      {"1001 bytes each", std::vector<uint64_t>(static_cast<size_t>(size), 1001)},
      {"three staged buffers each", std::vector<uint64_t>(static_cast<size_t>(size), staged)},
  };
  // Shared windows where every rank shares this node's memory.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  std::vector<bool> kinds = {false};
  if (node_size == size) kinds.push_back(true);
  // Some ranks aggregate (odd sizes, in several), the others expose nothing.
  std::vector<uint64_t> mixed(static_cast<size_t>(size), 0);
  for (int r = 0; r < size; ++r)
    mixed[static_cast<size_t>(r)] = r % 3 == 2 ? 0 : 4096 * static_cast<uint64_t>(r + 1) + 8;
  for (bool shared : kinds) {
    const std::string kind = shared ? " (shared, copied)" : "";
    for (const auto& [name, bytes] : cases) puts_land_where_aimed(bytes, name + kind, shared);
    puts_land_where_aimed(mixed, "some ranks without memory" + kind, shared);
  }

  int any = 0;
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("engine_window: %s (%d ranks)\n", any == 0 ? "ok" : "FAILED", size);
  MPI_Finalize();
  return any == 0 ? 0 : 1;
}
