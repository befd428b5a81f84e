#include "engine/move/file_set.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "common/error.hpp"

namespace strata::engine {

FileSet::~FileSet() {
  for (auto& f : files_) {
    if (f.fd >= 0) ::close(f.fd);
  }
}

FileSet& FileSet::operator=(FileSet&& o) noexcept {
  if (this != &o) {
    for (auto& f : files_) {
      if (f.fd >= 0) ::close(f.fd);
    }
    files_ = std::move(o.files_);
    subfiled_ = o.subfiled_;
    o.files_.clear();
  }
  return *this;
}

size_t FileSet::index_of(uint64_t offset) const {
  auto it =
      std::upper_bound(files_.begin(), files_.end(), offset, [](uint64_t o, const SubFile& f) { return o < f.begin; });
  return it == files_.begin() ? 0 : static_cast<size_t>(it - files_.begin()) - 1;
}

void FileSet::not_held(uint64_t offset) const {
  throw_runtime("byte " + std::to_string(offset) + " of the global layout is in none of the files (" +
                std::to_string(files_.size()) + " listed); the index does not match the data declared");
}

void FileSet::check_contiguous(const std::string& what) const {
  for (size_t i = 0; i < files_.size(); ++i) {
    if (files_[i].begin >= files_[i].end) throw_usage(what + ": file \"" + files_[i].path + "\" has an empty range");
    if (i > 0 && files_[i].begin != files_[i - 1].end) {
      throw_usage(what + ": files \"" + files_[i - 1].path + "\" and \"" + files_[i].path +
                  "\" do not hold adjacent ranges");
    }
  }
}

void FileSet::open(size_t i, int flags) {
  SubFile& f = files_[i];
  if (f.fd >= 0) return;
  f.fd = ::open(f.path.c_str(), flags | O_CLOEXEC, 0644);
  if (f.fd < 0) {
    throw_system(std::string("cannot open \"") + f.path + "\" for " + ((flags & O_WRONLY) ? "writing" : "reading"),
                 errno);
  }
}

void FileSet::close_all(bool sync) {
  std::optional<Error> failure;
  for (auto& f : files_) {
    if (f.fd < 0) continue;
    const int fd = f.fd;
    f.fd = -1;
    if (sync && ::fsync(fd) != 0 && !failure) {
      failure = Error(ErrorKind::runtime, "fsync of \"" + f.path + "\" failed: " + std::strerror(errno));
    }
    if (::close(fd) != 0 && !failure) {
      failure = Error(ErrorKind::runtime, "close of \"" + f.path + "\" failed: " + std::strerror(errno));
    }
  }
  if (failure) throw *failure;
}

}  // namespace strata::engine
