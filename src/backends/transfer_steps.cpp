#include "backends/transfer_steps.hpp"

#include <algorithm>
#include <cstring>

namespace strata {

FileOrder::FileOrder(const Decomposition& d, bool stage_if_needed) : extents_(flatten(d)), bytes_(d.local_bytes()) {
  if (!stage_if_needed || memory_in_file_order(extents_)) return;
  std::sort(extents_.begin(), extents_.end(), [](const Extent& a, const Extent& b) {
    return a.var != b.var ? a.var < b.var : a.elem_begin < b.elem_begin;
  });
  user_offsets_.resize(extents_.size());
  uint64_t off = 0;
  for (size_t i = 0; i < extents_.size(); ++i) {
    Extent& e = extents_[i];
    user_offsets_[i] = e.mem_offset;
    e.mem_offset = off;
    off += e.elems * elem_size(d.variables[static_cast<size_t>(e.var)].type);
  }
}

FileOrderBuffer::FileOrderBuffer(const FileOrder& order, std::byte* user, Access access)
    : order_(order), user_(user), data_(user) {
  if (!order.staged()) return;
  staging_.reset(new std::byte[order.bytes()]);
  data_ = staging_.get();
  if (access == Access::read) return;
  const std::vector<Extent>& ext = order.extents();
  const std::vector<uint64_t>& from = order.user_offsets();
  for (size_t i = 0; i < ext.size(); ++i) {
    const uint64_t next = i + 1 < ext.size() ? ext[i + 1].mem_offset : order.bytes();
    std::memcpy(data_ + ext[i].mem_offset, user_ + from[i], next - ext[i].mem_offset);
  }
}

void FileOrderBuffer::finish_read() {
  if (!staging_) return;
  const std::vector<Extent>& ext = order_.extents();
  const std::vector<uint64_t>& to = order_.user_offsets();
  for (size_t i = 0; i < ext.size(); ++i) {
    const uint64_t next = i + 1 < ext.size() ? ext[i + 1].mem_offset : order_.bytes();
    std::memcpy(user_ + to[i], data_ + ext[i].mem_offset, next - ext[i].mem_offset);
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
