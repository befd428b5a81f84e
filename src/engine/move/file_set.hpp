// The files a phase's global byte space lives in: one shared file covering everything, or
// subfiles each holding one contiguous range of the global layout (global offset g of subfile
// f is stored at g - f.begin). Spans are split at file boundaries; files are opened on the
// ranks that touch them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::engine {

struct SubFile {
  std::string path;
  uint64_t begin = 0;
  uint64_t end = UINT64_MAX;
  int fd = -1;
};

class FileSet {
 public:
  FileSet() = default;
  // `subfiled`: the files are subfiles, not the output itself.
  FileSet(std::vector<SubFile> files, bool subfiled) : files_(std::move(files)), subfiled_(subfiled) {}
  ~FileSet();
  FileSet(const FileSet&) = delete;
  FileSet& operator=(const FileSet&) = delete;
  FileSet(FileSet&& o) noexcept : files_(std::move(o.files_)), subfiled_(o.subfiled_) { o.files_.clear(); }
  FileSet& operator=(FileSet&& o) noexcept;

  const std::vector<SubFile>& files() const { return files_; }
  bool subfiled() const { return subfiled_; }
  // The file holding global byte `offset`.
  size_t index_of(uint64_t offset) const;
  // Calls fn(file, local offset, length, offset into the span) for each piece of the span.
  // Throws a runtime Error for bytes no file holds (a gap in a damaged index).
  template <class F>
  void split(uint64_t global, uint64_t length, F&& fn) const {
    uint64_t done = 0;
    while (done < length) {
      const SubFile& f = files_[index_of(global + done)];
      if (global + done < f.begin || global + done >= f.end) not_held(global + done);
      const uint64_t n = std::min(length - done, f.end - (global + done));
      fn(f, global + done - f.begin, n, done);
      done += n;
    }
  }
  // Checks that the files are ordered and cover one contiguous range. Throws a usage Error.
  void check_contiguous(const std::string& what) const;
  // Opens file i with `flags` (mode 0644) if not open yet. Throws a runtime Error naming it.
  void open(size_t i, int flags);
  // fsync (when asked) and close every open file; throws the first failure after closing all.
  void close_all(bool sync);

 private:
  [[noreturn]] void not_held(uint64_t offset) const;
  std::vector<SubFile> files_;
  bool subfiled_ = false;
};

}  // namespace strata::engine
