#include "arch/page_reporting.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace strata {

namespace {

constexpr const char* kBalloonDevice = "0x0005";  // virtio device id of the memory balloon
constexpr size_t kReportingFeature = 5;           // VIRTIO_BALLOON_F_REPORTING

std::string first_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

bool balloon_reports() {
  std::error_code ec;
  for (const auto& dev : std::filesystem::directory_iterator("/sys/bus/virtio/devices", ec)) {
    if (first_line(dev.path() / "device") != kBalloonDevice) continue;
    const std::string features = first_line(dev.path() / "features");  // one character a feature bit
    if (features.size() > kReportingFeature && features[kReportingFeature] == '1') return true;
  }
  return false;
}

uint64_t find_block() {
  if (!balloon_reports()) return 0;
  const std::string order = first_line("/sys/module/page_reporting/parameters/page_reporting_order");
  char* end = nullptr;
  const unsigned long o = std::strtoul(order.c_str(), &end, 10);
  if (order.empty() || end == order.c_str() || o > 20) return 0;
  const long page = ::sysconf(_SC_PAGESIZE);
  return static_cast<uint64_t>(page > 0 ? page : 4096) << o;
}

}  // namespace

uint64_t reported_block_bytes() {
  static const uint64_t block = find_block();
  return block;
}

uint64_t page_cache_write_limit() {
  static const uint64_t limit = [] {
    if (const char* v = std::getenv("STRATA_WRITE_PIECE"); v != nullptr && *v != '\0') {
      return static_cast<uint64_t>(std::strtoull(v, nullptr, 10));
    }
    return reported_block_bytes() / 8;
  }();
  return limit;
}

}  // namespace strata
