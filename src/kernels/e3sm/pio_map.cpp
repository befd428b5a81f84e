#include "kernels/e3sm/pio_map.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "common/error.hpp"

namespace strata {

namespace {

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

bool to_u64(const std::string& w, uint64_t& out) {
  if (w.empty() || w.find_first_not_of("0123456789") != std::string::npos || w.size() > 19) return false;
  out = std::stoull(w);
  return true;
}

}  // namespace

std::vector<uint64_t> PioMap::shape() const { return {dims.rbegin(), dims.rend()}; }

uint64_t PioMap::elements() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

PioMap parse_pio_map(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  size_t line_no = 0;
  auto fail = [&](const std::string& what) -> void {
    throw_usage("PIO map \"" + name + "\" line " + std::to_string(line_no) + ": " + what);
  };
  auto next_line = [&](const std::string& expecting) {
    if (!std::getline(in, line)) {
      ++line_no;
      fail("the file ends where " + expecting + " should be");
    }
    ++line_no;
    return words(line);
  };
  PioMap map;
  auto head = next_line("the header `version 2001 npes N ndims D`");
  uint64_t version = 0, npes = 0, ndims = 0;
  if (head.size() != 6 || head[0] != "version" || head[2] != "npes" || head[4] != "ndims" ||
      !to_u64(head[1], version) || !to_u64(head[3], npes) || !to_u64(head[5], ndims)) {
    fail("bad header \"" + line + "\" (expected `version 2001 npes N ndims D`)");
  }
  if (version != 2001) fail("unsupported map version " + std::to_string(version) + " (this reader knows 2001)");
  if (npes == 0 || npes > (1u << 24)) fail("npes must be between 1 and 16777216 (got " + std::to_string(npes) + ")");
  if (ndims == 0 || ndims > 6) fail("ndims must be between 1 and 6 (got " + std::to_string(ndims) + ")");
  map.npes = static_cast<int>(npes);
  auto dims = next_line("the dimension line");
  if (dims.size() != ndims) {
    fail("the dimension line holds " + std::to_string(dims.size()) + " sizes but the header says ndims " +
         std::to_string(ndims));
  }
  for (const auto& w : dims) {
    uint64_t d = 0;
    if (!to_u64(w, d) || d == 0) fail("dimension size \"" + w + "\" is not a positive integer");
    map.dims.push_back(d);
  }
  const uint64_t total = map.elements();
  map.offsets.resize(npes);
  for (uint64_t r = 0; r < npes; ++r) {
    auto rc = next_line("rank " + std::to_string(r) + "'s `rank count` line");
    uint64_t rank = 0, count = 0;
    if (rc.size() != 2 || !to_u64(rc[0], rank) || !to_u64(rc[1], count)) {
      fail("expected rank " + std::to_string(r) + "'s `rank count` line, got \"" + line.substr(0, 60) + "\"");
    }
    if (rank != r) fail("expected rank " + std::to_string(r) + ", got rank " + std::to_string(rank));
    auto offs = count == 0 && in.peek() == EOF ? std::vector<std::string>{}
                                               : next_line("rank " + std::to_string(r) + "'s offsets");
    if (offs.size() != count) {
      fail("count mismatch: rank " + std::to_string(r) + " declares " + std::to_string(count) +
           " offsets but its line holds " + std::to_string(offs.size()));
    }
    auto& out = map.offsets[r];
    out.reserve(count);
    for (const auto& w : offs) {
      uint64_t o = 0;
      if (!to_u64(w, o)) fail("offset \"" + w + "\" of rank " + std::to_string(r) + " is not a non-negative integer");
      if (o > total) {
        fail("offset " + w + " of rank " + std::to_string(r) + " is beyond the dimensions (" + std::to_string(total) +
             " elements)");
      }
      out.push_back(o);
    }
  }
  return map;
}

PioMap read_pio_map(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_system("cannot open PIO map \"" + path + "\"", errno);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_pio_map(ss.str(), path);
}

void write_pio_map(const PioMap& map, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw_system("cannot write PIO map \"" + path + "\"", errno);
  out << "version 2001 npes " << map.npes << " ndims " << map.dims.size() << " \n";
  for (uint64_t d : map.dims) out << d << " ";
  out << "\n";
  for (int r = 0; r < map.npes; ++r) {
    const auto& offs = map.offsets[static_cast<size_t>(r)];
    out << r << " " << offs.size() << "\n";
    for (size_t i = 0; i < offs.size(); ++i) out << (i ? " " : "") << offs[i];
    out << "\n";
  }
  if (!out) throw_system("cannot write PIO map \"" + path + "\"", errno);
}

std::vector<Block> pio_map_blocks(const PioMap& map, int var, int rank, int ranks, size_t lead) {
  std::vector<Block> blocks;
  const std::vector<uint64_t> shape = map.shape();
  const uint64_t row = shape.back();
  for (int m = rank; m < map.npes; m += ranks) {
    bool open = false;
    uint64_t next = 0;  // the 0-based index a run would continue with
    for (uint64_t o : map.offsets[static_cast<size_t>(m)]) {
      if (o == 0) continue;
      const uint64_t i = o - 1;
      if (open && i == next && i % row != 0) {
        ++blocks.back().count.back();
        ++next;
        continue;
      }
      Block b;
      b.var = var;
      b.start.assign(lead, 0);
      b.count.assign(lead, 1);
      const std::vector<uint64_t> at = unravel_index(shape, i);
      for (size_t k = 0; k < at.size(); ++k) {
        b.start.push_back(at[k]);
        b.count.push_back(1);
      }
      blocks.push_back(std::move(b));
      open = true;
      next = i + 1;
    }
  }
  return blocks;
}

}  // namespace strata
