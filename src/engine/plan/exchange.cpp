#include "engine/plan/exchange.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "common/error.hpp"

namespace strata::engine {

namespace {

// Calls fn(partition, slot, file_offset, length, stream_offset) for each piece of `mine`
// cut at partition and round boundaries.
// (The round last located is kept: runs sorted by offset mostly fall in it, without a search.)
template <class F>
void for_each_segment(const Plan& plan, const Selection& mine, F&& fn) {
  Slot round;
  uint64_t round_lo = 1, round_hi = 0;  // the file bytes of `round` (none yet)
  for (const StreamExtent& e : mine.extents) {
    uint64_t off = e.file_offset, left = e.length, stream = e.stream_offset;
    while (left > 0) {
      if (off < round_lo || off >= round_hi) {
        round = plan.locate(off);
        round_lo = off - round.offset;
        round_hi = std::min(round_lo + plan.buffer_bytes, plan.end[static_cast<size_t>(round.partition)]);
      }
      Slot s = round;
      s.offset = off - round_lo;
      const uint64_t n = std::min(left, round_hi - off);
      fn(s, off, n, stream);
      off += n;
      stream += n;
      left -= n;
    }
  }
}

bool by_offset(const ReceivedRange& a, const ReceivedRange& b) { return a.offset < b.offset; }

// The (offset, length) pairs each source sent, as one list sorted by offset: a k-way merge of
// the sources' lists (each sorted, as a rank's extents are), O(n log sources); a sort where a
// source's list is not.
ReceivedRanges merge_by_offset(const std::vector<uint64_t>& recv, const std::vector<int>& counts,
                               const std::vector<int>& displs) {
  const size_t sources = counts.size();
  size_t total = 0;
  bool sorted = true;
  for (size_t r = 0; r < sources; ++r) {
    const size_t n = static_cast<size_t>(counts[r]) / 2, at = static_cast<size_t>(displs[r]);
    total += n;
    for (size_t i = 1; i < n && sorted; ++i) sorted = recv[at + 2 * i] >= recv[at + 2 * (i - 1)];
  }
  ReceivedRanges out;
  out.reserve(total);
  if (!sorted) {
    for (size_t r = 0; r < sources; ++r) {
      const size_t at = static_cast<size_t>(displs[r]);
      for (size_t i = 0; i + 1 < static_cast<size_t>(counts[r]); i += 2)
        out.push_back({recv[at + i], recv[at + i + 1], static_cast<int>(r)});
    }
    std::stable_sort(out.begin(), out.end(), by_offset);
    return out;
  }
  // A min-heap of (next offset, source); each source's position in `next`.
  std::vector<size_t> next(sources), end(sources);
  std::vector<std::pair<uint64_t, int>> heap;
  for (size_t r = 0; r < sources; ++r) {
    next[r] = static_cast<size_t>(displs[r]);
    end[r] = next[r] + static_cast<size_t>(counts[r]) / 2 * 2;
    if (next[r] < end[r]) heap.emplace_back(recv[next[r]], static_cast<int>(r));
  }
  auto later = [](const std::pair<uint64_t, int>& a, const std::pair<uint64_t, int>& b) { return a > b; };
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const size_t r = static_cast<size_t>(heap.back().second);
    // This source's ranges while they stay below every other source's next one.
    const uint64_t bound = heap.size() > 1 ? heap.front().first : UINT64_MAX;
    size_t& i = next[r];
    do {
      out.push_back({recv[i], recv[i + 1], static_cast<int>(r)});
      i += 2;
    } while (i < end[r] && recv[i] < bound);
    if (i < end[r]) {
      heap.back().first = recv[i];
      std::push_heap(heap.begin(), heap.end(), later);
    } else {
      heap.pop_back();
    }
  }
  return out;
}

}  // namespace

std::vector<std::vector<Transfer>> transfers_by_round(const Plan& plan, const Selection& mine) {
  std::vector<std::vector<Transfer>> out(plan.global_rounds);
  if (plan.global_rounds == 1) out[0].reserve(mine.extents.size() + static_cast<size_t>(plan.partitions()));
  for_each_segment(plan, mine, [&](const Slot& s, uint64_t, uint64_t n, uint64_t stream) {
    out[s.round].push_back({plan.aggregator[static_cast<size_t>(s.partition)], plan.window_displacement(s), stream, n});
  });
  return out;
}

ReceivedRanges exchange_ranges(MPI_Comm comm, const Plan& plan, const Selection& mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  // Ranges per destination, coalesced per partition (rounds are cut at the aggregator).
  std::vector<std::vector<uint64_t>> out(static_cast<size_t>(size));
  for (const StreamExtent& e : mine.extents) {
    uint64_t off = e.file_offset, left = e.length;
    while (left > 0) {
      const int p = plan.partition_of(off);
      const uint64_t n = std::min(left, plan.end[static_cast<size_t>(p)] - off);
      auto& v = out[static_cast<size_t>(plan.aggregator[static_cast<size_t>(p)])];
      if (v.size() >= 2 && v[v.size() - 2] + v.back() == off) {
        v.back() += n;
      } else {
        v.push_back(off);
        v.push_back(n);
      }
      off += n;
      left -= n;
    }
  }
  std::vector<int> send_counts(static_cast<size_t>(size)), recv_counts(static_cast<size_t>(size));
  std::vector<int> send_displs(static_cast<size_t>(size)), recv_displs(static_cast<size_t>(size));
  std::vector<uint64_t> send;
  for (int r = 0; r < size; ++r) {
    send_displs[static_cast<size_t>(r)] = static_cast<int>(send.size());
    send_counts[static_cast<size_t>(r)] = static_cast<int>(out[static_cast<size_t>(r)].size());
    send.insert(send.end(), out[static_cast<size_t>(r)].begin(), out[static_cast<size_t>(r)].end());
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    recv_displs[static_cast<size_t>(r)] = total;
    total += recv_counts[static_cast<size_t>(r)];
  }
  std::vector<uint64_t> recv(static_cast<size_t>(total));
  MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_UINT64_T, recv.data(), recv_counts.data(),
                recv_displs.data(), MPI_UINT64_T, comm);
  return merge_by_offset(recv, recv_counts, recv_displs);
}

namespace {

// `ranges` sorted by offset: throws on the first two that overlap.
void check_sorted_overlaps(const ReceivedRanges& ranges) {
  for (size_t i = 1; i < ranges.size(); ++i) {
    const ReceivedRange& a = ranges[i - 1];
    const ReceivedRange& b = ranges[i];
    if (b.offset < a.offset + a.length) {
      throw_usage("rank " + std::to_string(b.from) + " declares bytes [" + std::to_string(b.offset) + ", " +
                  std::to_string(b.offset + b.length) + ") that overlap rank " + std::to_string(a.from) + "'s bytes [" +
                  std::to_string(a.offset) + ", " + std::to_string(a.offset + a.length) +
                  ") (every byte of a phase must be declared by one rank only)");
    }
  }
}

// `received` when it is sorted by offset, else `copy` made so.
const ReceivedRanges& by_offset_view(const ReceivedRanges& received, ReceivedRanges& copy) {
  if (std::is_sorted(received.begin(), received.end(), by_offset)) return received;
  copy = received;
  std::stable_sort(copy.begin(), copy.end(), by_offset);
  return copy;
}

}  // namespace

void check_received_overlaps(const ReceivedRanges& received) {
  ReceivedRanges copy;
  check_sorted_overlaps(by_offset_view(received, copy));
}

std::vector<std::vector<PlacedRun>> staged_places(const Plan& plan, int partition, const ReceivedRanges& received,
                                                  int ranks) {
  ReceivedRanges copy;
  const ReceivedRanges& ranges = by_offset_view(received, copy);
  const size_t nrounds = plan.rounds[static_cast<size_t>(partition)];
  std::vector<std::vector<PlacedRun>> places(nrounds);
  const uint64_t base = plan.start[static_cast<size_t>(partition)];
  // Each rank's bytes of a round land after the lower ranks' (the senders' scan), in file order:
  // first each sender's bytes per round (`from` holds the sender meanwhile), then where each
  // sender's bytes start, then each run's place.
  std::vector<uint64_t> at(static_cast<size_t>(ranks), 0);
  std::vector<int> present;
  size_t i = 0;          // the first range not placed yet
  uint64_t carried = 0;  // of ranges[i], the bytes placed in earlier rounds
  for (size_t g = 0; g < nrounds; ++g) {
    const uint64_t round_end = base + (g + 1) * plan.buffer_bytes;
    auto& runs = places[g];
    present.clear();
    size_t j = i;
    uint64_t done = carried;
    while (j < ranges.size()) {
      const ReceivedRange& r = ranges[j];
      const uint64_t off = r.offset + done;
      if (off >= round_end) break;
      const uint64_t n = std::min(r.length - done, round_end - off);
      uint64_t& bytes = at[static_cast<size_t>(r.from)];
      if (bytes == 0) present.push_back(r.from);
      bytes += n;
      runs.push_back({static_cast<uint32_t>((off - base) % plan.buffer_bytes), static_cast<uint32_t>(r.from),
                      static_cast<uint32_t>(n)});
      if (done + n < r.length) {
        done += n;  // the rest is the next round's
        break;
      }
      done = 0;
      ++j;
    }
    std::sort(present.begin(), present.end());  // the senders of the round (at most the ranks)
    uint64_t before = 0;
    for (int r : present) {
      const uint64_t bytes = at[static_cast<size_t>(r)];
      at[static_cast<size_t>(r)] = before;
      before += bytes;
    }
    for (PlacedRun& p : runs) {
      uint64_t& next = at[static_cast<size_t>(p.from)];
      p.from = static_cast<uint32_t>(next);
      next += p.length;
    }
    for (int r : present) at[static_cast<size_t>(r)] = 0;
    i = j;
    carried = done;
  }
  return places;
}

std::vector<std::vector<Run>> rounds_of_partition(const Plan& plan, int partition, const ReceivedRanges& received) {
  ReceivedRanges copy;
  const ReceivedRanges& ranges = by_offset_view(received, copy);
  check_sorted_overlaps(ranges);
  std::vector<std::vector<Run>> rounds(plan.rounds[static_cast<size_t>(partition)]);
  const uint64_t base = plan.start[static_cast<size_t>(partition)];
  for (const ReceivedRange& r : ranges) {
    uint64_t off = r.offset, left = r.length;
    while (left > 0) {
      const uint64_t rel = off - base;
      const uint64_t round = rel / plan.buffer_bytes, in = rel % plan.buffer_bytes;
      const uint64_t n = std::min(left, plan.buffer_bytes - in);
      auto& runs = rounds[round];
      if (!runs.empty() && runs.back().file_offset + runs.back().length == off) {
        runs.back().length += n;
      } else {
        runs.push_back({off, n, in});
      }
      off += n;
      left -= n;
    }
  }
  return rounds;
}

}  // namespace strata::engine
