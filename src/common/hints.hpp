// MPI-IO hints: from --hints "k=v,k=v" and from the file named by STRATA_HINTS
// (one "key value" per line, as ROMIO's hints file), and an RAII MPI_Info.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

namespace strata {

using Hints = std::vector<std::pair<std::string, std::string>>;

// Parses "k=v,k=v". Throws a usage Error naming the bad entry.
Hints parse_hint_list(const std::string& text);
// Reads a hints file. Throws a usage Error for a missing file or a malformed line.
Hints read_hints_file(const std::string& path);
// STRATA_HINTS file (if set) first, then `cli` on top; later keys replace earlier ones.
Hints merge_hints(const Hints& base, const Hints& top);
Hints hints_from_environment_and(const std::string& cli_text);

class MpiInfo {
 public:
  MpiInfo();
  explicit MpiInfo(const Hints& hints);
  explicit MpiInfo(MPI_Info adopt) : info_(adopt) {}
  ~MpiInfo();
  MpiInfo(const MpiInfo&) = delete;
  MpiInfo& operator=(const MpiInfo&) = delete;
  MpiInfo(MpiInfo&& other) noexcept : info_(other.info_) { other.info_ = MPI_INFO_NULL; }
  MPI_Info get() const { return info_; }
  void set(const std::string& key, const std::string& value);
  // Every key and value.
  Hints entries() const;

 private:
  MPI_Info info_ = MPI_INFO_NULL;
};

}  // namespace strata
