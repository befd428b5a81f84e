#include "backends/transfer_steps.hpp"

#include <algorithm>
#include <cstring>

namespace strata {

FileOrder::FileOrder(const Decomposition& d, bool stage_if_needed) : extents_(flatten(d)), bytes_(d.local_bytes()) {
  if (!stage_if_needed || memory_in_file_order(extents_)) return;
  std::sort(extents_.begin(), extents_.end(), [](const Extent& a, const Extent& b) {
    return a.var != b.var ? a.var < b.var : a.elem_begin < b.elem_begin;
  });
  pieces_.reserve(extents_.size());
  uint64_t off = 0;
  size_t kept = 0;
  for (size_t i = 0; i < extents_.size(); ++i) {
    Extent e = extents_[i];
    const uint64_t bytes = e.elems * elem_size(d.variables[static_cast<size_t>(e.var)].type);
    pieces_.push_back({e.mem_offset, off, bytes});
    e.mem_offset = off;
    off += bytes;
    Extent* last = kept > 0 ? &extents_[kept - 1] : nullptr;
    if (last != nullptr && !d.blocks_apart && last->var == e.var && last->elem_begin + last->elems == e.elem_begin) {
      last->elems += e.elems;  // neighbours in the file, and now in the staged copy
    } else {
      extents_[kept++] = e;
    }
  }
  extents_.resize(kept);
}

FileOrderBuffer::FileOrderBuffer(const FileOrder& order, std::byte* user, Access access)
    : order_(order), user_(user), data_(user) {
  if (!order.staged()) return;
  staging_.reset(new std::byte[order.bytes()]);
  data_ = staging_.get();
  if (access == Access::read) return;
  for (const FileOrder::Piece& p : order.pieces()) std::memcpy(data_ + p.staged, user_ + p.user, p.bytes);
}

void FileOrderBuffer::finish_read() {
  if (!staging_) return;
  for (const FileOrder::Piece& p : order_.pieces()) std::memcpy(user_ + p.user, data_ + p.staged, p.bytes);
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

Stonewall::Stonewall(const std::string& seconds, MPI_Comm collective)
    : seconds_(seconds.empty() ? 0 : std::stod(seconds)), comm_(collective), start_(std::chrono::steady_clock::now()) {}

bool Stonewall::reached() {
  if (seconds_ <= 0 || reached_) return reached_;
  int past = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() >= seconds_ ? 1 : 0;
  if (comm_ != MPI_COMM_NULL) MPI_Bcast(&past, 1, MPI_INT, 0, comm_);
  reached_ = past != 0;
  return reached_;
}

}  // namespace strata
