#include "engine/plan/spans.hpp"

#include <algorithm>

namespace strata::engine {

uint64_t hole_limit_from(const IoFigures& f) {
  if (f.write.size() < 2) return 64 * 1024;
  // A request's fixed cost (the smallest request less its bytes at the largest one's rate)
  // against the cost per byte of writing a hole (its bytes, plus clearing them).
  const WriteFigure& small = f.write.front();
  const WriteFigure& large = f.write.back();
  const double per_byte = large.seconds / static_cast<double>(large.request_bytes);
  const double fixed = std::max(small.seconds - per_byte * static_cast<double>(small.request_bytes), 0.0);
  const double hole_byte = per_byte + 1.0 / std::max(f.memcpy_Bps, 1.0);
  return std::clamp<uint64_t>(static_cast<uint64_t>(fixed / hole_byte), 4096, uint64_t{16} << 20);
}

namespace {

// Whether [a, b) holds a byte of a direct run.
bool touches_direct(const std::vector<ReceivedRange>& direct, uint64_t a, uint64_t b) {
  auto it = std::upper_bound(direct.begin(), direct.end(), a,
                             [](uint64_t o, const ReceivedRange& d) { return o < d.offset; });
  if (it != direct.begin() && std::prev(it)->offset + std::prev(it)->length > a) return true;
  return it != direct.end() && it->offset < b;
}

}  // namespace

std::vector<RoundIo> plan_round_io(const std::vector<std::vector<Run>>& rounds,
                                   const std::vector<ReceivedRange>& direct, SpanPolicy policy, uint64_t hole_limit,
                                   const IoFigures& f) {
  std::vector<RoundIo> out(rounds.size());
  for (size_t g = 0; g < rounds.size(); ++g) {
    const std::vector<Run>& runs = rounds[g];
    RoundIo& io = out[g];
    if (policy == SpanPolicy::runs) {
      for (const Run& r : runs) io.spans.push_back({r.file_offset, r.length, r.buffer_offset, {}});
      continue;
    }
    // Groups of runs whose holes are short and free of direct runs.
    size_t i = 0;
    while (i < runs.size()) {
      size_t j = i + 1;
      while (j < runs.size()) {
        const uint64_t gap_begin = runs[j - 1].file_offset + runs[j - 1].length;
        const uint64_t gap_end = runs[j].file_offset;
        if (gap_end - gap_begin >= hole_limit || touches_direct(direct, gap_begin, gap_end)) break;
        ++j;
      }
      const Run& first = runs[i];
      const Run& last = runs[j - 1];
      const uint64_t length = last.file_offset + last.length - first.file_offset;
      if (policy == SpanPolicy::sieve && j - i > 1) {
        uint64_t data = 0;
        for (size_t k = i; k < j; ++k) data += runs[k].length;
        const double per_run = f.writes_s(j - i, data);
        const double sieve = 2 * f.write_s(length) + static_cast<double>(length) / std::max(f.memcpy_Bps, 1.0);
        if (per_run <= sieve) {
          for (size_t k = i; k < j; ++k)
            io.spans.push_back({runs[k].file_offset, runs[k].length, runs[k].buffer_offset, {}});
        } else {
          RoundSpan s{first.file_offset, length, first.buffer_offset, {}};
          for (size_t k = i; k < j; ++k) s.pieces.emplace_back(runs[k].file_offset - first.file_offset, runs[k].length);
          io.spans.push_back(std::move(s));
        }
      } else {
        io.spans.push_back({first.file_offset, length, first.buffer_offset, {}});
        if (policy == SpanPolicy::fill) {
          for (size_t k = i + 1; k < j; ++k) {
            const uint64_t b = runs[k - 1].buffer_offset + runs[k - 1].length;
            if (runs[k].buffer_offset > b) io.zero.emplace_back(b, runs[k].buffer_offset - b);
            const uint64_t f = runs[k - 1].file_offset + runs[k - 1].length;
            if (runs[k].file_offset > f) io.holes.emplace_back(f, runs[k].file_offset - f);
          }
        }
      }
      i = j;
    }
  }
  return out;
}

}  // namespace strata::engine
