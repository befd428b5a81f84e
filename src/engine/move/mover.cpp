#include "engine/move/mover.hpp"

#include <cstring>

#include "common/error.hpp"

namespace strata::engine {

namespace {

// Round `round`'s spans in its buffer; for a write, the holes inside spans are cleared first
// (the buffer is quiet: the fence that closed the round's puts has completed).
std::vector<IoSpan> spans_of(const Move& m, uint64_t round, bool write) {
  std::vector<IoSpan> spans;
  if (m.rounds == nullptr || round >= m.rounds->size()) return spans;
  const uint64_t slot = round % static_cast<uint64_t>(m.plan->buffers);
  std::byte* buffer =
      m.placed != nullptr ? m.placed + slot * m.plan->buffer_bytes : m.window->base() + slot * m.plan->buffer_bytes;
  const RoundIo& io = (*m.rounds)[round];
  if (write) {
    for (const auto& [at, len] : io.zero) std::memset(buffer + at, 0, len);
  }
  for (const RoundSpan& r : io.spans)
    spans.push_back({r.file_offset, r.length, buffer + r.buffer_offset, r.pieces, {}});
  return spans;
}

void fence(const Move& m, int assertion) {
  ++m.stats->collectives;
  check_mpi(MPI_Win_fence(assertion, m.window->get()), "MPI_Win_fence");
}

}  // namespace

void move_write(const Move& m) {
  const uint64_t rounds = m.plan->global_rounds;
  const uint64_t nbuf = static_cast<uint64_t>(m.plan->buffers);
  std::vector<uint64_t> job(rounds, UINT64_MAX);
  double t = MPI_Wtime();
  fence(m, MPI_MODE_NOPRECEDE);
  for (uint64_t g = 0; g < rounds; ++g) {
    put_round(*m.transfers, g, m.stream, *m.window, m.copies);
    // The buffer round g+1 fills must have been written out before the fence opens round g+1.
    if (m.io != nullptr && g + 1 < rounds && g + 1 >= nbuf && job[g + 1 - nbuf] != UINT64_MAX) {
      const double w = MPI_Wtime();
      m.io->wait(job[g + 1 - nbuf]);
      m.stats->wait_s += MPI_Wtime() - w;
    }
    fence(m, g + 1 == rounds ? MPI_MODE_NOSUCCEED : 0);
    if (m.io != nullptr && m.placed != nullptr && m.rounds != nullptr && g < m.rounds->size()) {
      const uint64_t slot = (g % nbuf) * m.plan->buffer_bytes;
      place_round((*m.rounds)[g].places, m.window->base() + slot, m.plan->buffer_bytes, m.placed + slot);
    }
    if (m.io != nullptr) {
      auto spans = spans_of(m, g, true);
      if (!spans.empty()) job[g] = m.io->submit_write(std::move(spans));
    }
    // With one buffer the next round can only start once this one is on its way to the file.
    if (nbuf == 1 && g + 1 < rounds) {
      if (m.io != nullptr && job[g] != UINT64_MAX) {
        const double w = MPI_Wtime();
        m.io->wait(job[g]);
        m.stats->wait_s += MPI_Wtime() - w;
      }
      fence(m, 0);
    }
  }
  if (rounds == 0) fence(m, MPI_MODE_NOSUCCEED);
  // The last buffers' writes go on in the background: the window belongs to the engine and
  // close() (or the next phase) waits for them.
  m.stats->aggregation_s += MPI_Wtime() - t;
}

void move_read(const Move& m) {
  const uint64_t rounds = m.plan->global_rounds;
  const uint64_t nbuf = static_cast<uint64_t>(m.plan->buffers);
  std::vector<uint64_t> job(rounds, UINT64_MAX);
  auto prefetch = [&](uint64_t g) {
    if (m.io == nullptr || g >= rounds) return;
    auto spans = spans_of(m, g, false);
    if (!spans.empty()) job[g] = m.io->submit_read(std::move(spans));
  };
  for (uint64_t g = 0; g < std::min(nbuf, rounds); ++g) prefetch(g);
  const double t = MPI_Wtime();
  double waited = 0;
  for (uint64_t g = 0; g < rounds; ++g) {
    if (m.io != nullptr && job[g] != UINT64_MAX) {
      const double w = MPI_Wtime();
      m.io->wait(job[g]);
      waited += MPI_Wtime() - w;
    }
    fence(m, g == 0 ? MPI_MODE_NOPRECEDE : 0);
    // Round g-1's gets are complete: its buffer can take round g-1+N_buff.
    if (g >= 1 && nbuf > 1) prefetch(g - 1 + nbuf);
    get_round(*m.transfers, g, m.stream, *m.window);
    // With one buffer the next round's data can only be read once these gets are done.
    if (nbuf == 1 && g + 1 < rounds) {
      fence(m, 0);
      prefetch(g + 1);
    }
  }
  fence(m, MPI_MODE_NOSUCCEED);
  if (m.io != nullptr) m.io->wait_all();
  m.stats->wait_s += waited;
  m.stats->aggregation_s += MPI_Wtime() - t - waited;
}

}  // namespace strata::engine
