#include "engine/plan/exchange.hpp"

#include <algorithm>
#include <string>

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

}  // namespace

std::vector<std::vector<Transfer>> transfers_by_round(const Plan& plan, const Selection& mine) {
  std::vector<std::vector<Transfer>> out(plan.global_rounds);
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
  ReceivedRanges ranges;
  for (int r = 0; r < size; ++r) {
    for (int i = 0; i + 1 < recv_counts[static_cast<size_t>(r)]; i += 2) {
      const size_t at = static_cast<size_t>(recv_displs[static_cast<size_t>(r)] + i);
      ranges.push_back({recv[at], recv[at + 1], r});
    }
  }
  return ranges;
}

std::vector<std::vector<Run>> rounds_of_partition(const Plan& plan, int partition, ReceivedRanges ranges) {
  // The ranges arrive as one sorted list per source rank: a natural merge sort costs
  // O(n log sources), not O(n log n).
  auto by_offset = [](const ReceivedRange& a, const ReceivedRange& b) { return a.offset < b.offset; };
  std::vector<size_t> starts{0};
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].offset < ranges[i - 1].offset) starts.push_back(i);
  }
  while (starts.size() > 1) {
    std::vector<size_t> merged;
    for (size_t k = 0; k < starts.size(); k += 2) {
      merged.push_back(starts[k]);
      if (k + 1 >= starts.size()) break;
      const size_t end = k + 2 < starts.size() ? starts[k + 2] : ranges.size();
      std::inplace_merge(ranges.begin() + static_cast<long>(starts[k]),
                         ranges.begin() + static_cast<long>(starts[k + 1]), ranges.begin() + static_cast<long>(end),
                         by_offset);
    }
    starts = std::move(merged);
  }
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
