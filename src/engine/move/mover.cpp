#include "engine/move/mover.hpp"

#include "common/error.hpp"

namespace strata::engine {

namespace {

std::vector<IoSpan> spans_of(const Move& m, uint64_t round) {
  std::vector<IoSpan> spans;
  if (m.runs == nullptr || round >= m.runs->size()) return spans;
  std::byte* buffer = m.window->base() + (round % static_cast<uint64_t>(m.plan->buffers)) * m.plan->buffer_bytes;
  for (const Run& r : (*m.runs)[round]) spans.push_back({r.file_offset, r.length, buffer + r.buffer_offset});
  return spans;
}

void fence(const Move& m, int assertion) {
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
    for (const Transfer& x : (*m.transfers)[g]) {
      check_mpi(MPI_Put(m.stream + x.stream_offset, static_cast<int>(x.length), MPI_BYTE, x.target,
                        static_cast<MPI_Aint>(x.displacement), static_cast<int>(x.length), MPI_BYTE, m.window->get()),
                "MPI_Put");
    }
    // The buffer round g+1 fills must have been written out before the fence opens round g+1.
    if (m.io != nullptr && g + 1 < rounds && g + 1 >= nbuf && job[g + 1 - nbuf] != UINT64_MAX) {
      const double w = MPI_Wtime();
      m.io->wait(job[g + 1 - nbuf]);
      m.stats->wait_s += MPI_Wtime() - w;
    }
    fence(m, g + 1 == rounds ? MPI_MODE_NOSUCCEED : 0);
    if (m.io != nullptr) {
      auto spans = spans_of(m, g);
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
    auto spans = spans_of(m, g);
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
    for (const Transfer& x : (*m.transfers)[g]) {
      check_mpi(MPI_Get(m.stream + x.stream_offset, static_cast<int>(x.length), MPI_BYTE, x.target,
                        static_cast<MPI_Aint>(x.displacement), static_cast<int>(x.length), MPI_BYTE, m.window->get()),
                "MPI_Get");
    }
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
