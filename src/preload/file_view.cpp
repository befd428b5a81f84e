#include "preload/file_view.hpp"

#include <algorithm>

namespace strata::preload {

namespace {

void add(std::vector<FileRun>& out, uint64_t offset, uint64_t length) {
  if (length == 0) return;
  if (!out.empty() && out.back().offset + out.back().length == offset) {
    out.back().length += length;
  } else {
    out.push_back({offset, length});
  }
}

}  // namespace

void FileView::file_runs(uint64_t position, uint64_t length, std::vector<FileRun>& out) const {
  if (length == 0) return;
  if (!filetype || filetype->contiguous()) {
    const uint64_t lb = filetype ? static_cast<uint64_t>(filetype->lb) : 0;
    add(out, disp + lb + position, length);
    return;
  }
  const TypeMap& ft = *filetype;
  if (ft.size == 0) return;  // no data in this view (an erroneous access): nothing to place
  uint64_t tile = position / ft.size;
  uint64_t within = position % ft.size;
  size_t i = static_cast<size_t>(std::upper_bound(ft.prefix.begin(), ft.prefix.end(), within) - ft.prefix.begin()) - 1;
  within -= ft.prefix[i];
  while (length > 0) {
    const Run& r = ft.runs[i];
    const uint64_t n = std::min(r.length - within, length);
    add(out, disp + tile * static_cast<uint64_t>(ft.extent) + static_cast<uint64_t>(r.offset) + within, n);
    length -= n;
    within = 0;
    if (++i == ft.runs.size()) {
      i = 0;
      ++tile;
    }
  }
}

std::string FileView::problem() const {
  if (datarep != "native") return "data representation";
  if (!filetype) return "";
  if (!filetype->ok) return "view not decoded";
  if (filetype->size == 0) return "";  // this rank sees no data (a zero-count rank)
  if (filetype->extent <= 0 || !filetype->monotonic()) return "view not monotonic";
  const auto& runs = filetype->runs;
  if (!runs.empty() &&
      runs.back().offset + static_cast<int64_t>(runs.back().length) - runs.front().offset > filetype->extent) {
    return "view not monotonic";  // consecutive tiles would overlap
  }
  return "";
}

}  // namespace strata::preload
