#include "kernels/app_kernel.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "kernels/mslio/mslio_kernel.hpp"
#include "kernels/pace3d/pace3d_kernel.hpp"

namespace strata {

const std::vector<const AppKernel*>& app_kernel_list() {
  static const MslioKernel mslio;
  static const Pace3dKernel pace3d;
  static const std::vector<const AppKernel*> list = {&mslio, &pace3d};
  return list;
}

const AppKernel* find_app_kernel(const std::string& name) {
  for (const AppKernel* k : app_kernel_list()) {
    if (k->name() == name) return k;
  }
  return nullptr;
}

CallTotals& CallTotals::operator+=(const CallTotals& o) {
  open_s += o.open_s;
  write_s += o.write_s;
  close_s += o.close_s;
  format_s += o.format_s;
  opens += o.opens;
  writes += o.writes;
  closes += o.closes;
  bytes += o.bytes;
  return *this;
}

CallTotals CallTotals::summed(MPI_Comm comm) const {
  double t[4] = {open_s, write_s, close_s, format_s}, ts[4];
  unsigned long long n[4] = {opens, writes, closes, bytes}, ns[4];
  MPI_Allreduce(t, ts, 4, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(n, ns, 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  CallTotals out;
  out.open_s = ts[0];
  out.write_s = ts[1];
  out.close_s = ts[2];
  out.format_s = ts[3];
  out.opens = ns[0];
  out.writes = ns[1];
  out.closes = ns[2];
  out.bytes = ns[3];
  return out;
}

std::optional<std::string> agree_mismatch(MPI_Comm comm, const std::optional<std::string>& local) {
  std::optional<Error> e;
  if (local) e = Error(ErrorKind::verification, *local);
  try {
    agree(comm, e ? &*e : nullptr);
  } catch (const Error& agreed) {
    return std::string(agreed.what());
  }
  return std::nullopt;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace strata
