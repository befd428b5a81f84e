#include "backends/transfer_steps.hpp"

#include <algorithm>
#include <cstring>

namespace strata {

FileOrderBuffer::FileOrderBuffer(const Decomposition& d, std::byte* user, Access access, bool stage_if_needed)
    : user_(user), data_(user) {
  user_extents_ = flatten(d);
  if (!stage_if_needed || memory_in_file_order(user_extents_)) {
    extents_ = user_extents_;
    return;
  }
  std::sort(user_extents_.begin(), user_extents_.end(), [](const Extent& a, const Extent& b) {
    return a.var != b.var ? a.var < b.var : a.elem_begin < b.elem_begin;
  });
  staging_.resize(d.local_bytes());
  data_ = staging_.data();
  uint64_t off = 0;
  extents_ = user_extents_;
  for (size_t i = 0; i < extents_.size(); ++i) {
    const uint64_t bytes = extents_[i].elems * elem_size(d.variables[static_cast<size_t>(extents_[i].var)].type);
    extents_[i].mem_offset = off;
    if (access == Access::write) std::memcpy(data_ + off, user_ + user_extents_[i].mem_offset, bytes);
    off += bytes;
  }
}

void FileOrderBuffer::finish_read() {
  if (staging_.empty()) return;
  for (size_t i = 0; i < extents_.size(); ++i) {
    const uint64_t next = i + 1 < extents_.size() ? extents_[i + 1].mem_offset : staging_.size();
    std::memcpy(user_ + user_extents_[i].mem_offset, data_ + extents_[i].mem_offset, next - extents_[i].mem_offset);
  }
}

TransferSteps transfer_steps(MPI_Comm comm, const Decomposition& d) {
  TransferSteps s = local_transfer_steps(d);
  unsigned long long mine = s.count, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
  s.count = all;
  return s;
}

TransferSteps local_transfer_steps(const Decomposition& d) {
  TransferSteps s;
  s.step_bytes = d.transfer_bytes != 0 ? std::min(d.transfer_bytes, kMaxRequestBytes) : kMaxRequestBytes;
  // Keep steps on element boundaries for every variable.
  uint64_t lcm_elem = 1;
  for (const auto& v : d.variables) lcm_elem = std::max<uint64_t>(lcm_elem, elem_size(v.type));
  s.step_bytes -= s.step_bytes % lcm_elem;
  const uint64_t local = d.local_bytes();
  s.count = (local + s.step_bytes - 1) / s.step_bytes;
  return s;
}

}  // namespace strata
