// posix: pwrite/pread of each extent (split at the transfer size) into one shared file at its
// raw-layout offset, or into a file per process at its offset in the rank's buffer.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "backends/backend_factories.hpp"
#include "backends/transfer_steps.hpp"
#include "common/error.hpp"
#include "decomp/selection.hpp"

namespace strata {

namespace {

class PosixBackend final : public Backend {
 public:
  PosixBackend(const BackendContext& ctx, const Decomposition& d, const Target& t) : ctx_(ctx), d_(d), t_(t) {}
  ~PosixBackend() override {
    if (fd_ >= 0) ::close(fd_);
  }

  std::string name() const override { return "posix"; }

  void open(Access access) override {
    path_ = file_path_for_rank(t_, ctx_.rank);
    int flags = access == Access::write ? (O_WRONLY | O_CREAT) : O_RDONLY;
    if (access == Access::write && !t_.file_per_process) {
      // Rank 0 creates the shared file; the others open it once that has happened everywhere.
      collectively(ctx_.comm, [&] {
        if (ctx_.rank == 0) open_fd(flags);
      });
      if (ctx_.rank != 0) open_fd(O_WRONLY);
      return;
    }
    open_fd(flags);
    if (access == Access::read) {
      struct stat st {};
      if (::fstat(fd_, &st) != 0) throw_system("cannot stat \"" + path_ + "\"", errno);
      const uint64_t need = t_.file_per_process ? d_.local_bytes() : d_.global_bytes();
      if (static_cast<uint64_t>(st.st_size) < need) {
        throw_runtime("\"" + path_ + "\" holds " + std::to_string(st.st_size) + " bytes but the decomposition needs " +
                      std::to_string(need) + " (the file is shorter than the decomposition)");
      }
    }
  }

  void transfer(Access access, std::byte* buffer) override {
    requests_ = 0;
    const auto pieces = split_extents(d_, flatten(d_), d_.transfer_bytes ? d_.transfer_bytes : kMaxRequestBytes);
    for (const Extent& e : pieces) {
      const Variable& v = d_.variables[static_cast<size_t>(e.var)];
      const uint64_t bytes = e.elems * elem_size(v.type);
      const uint64_t off = t_.file_per_process ? e.mem_offset : d_.variable_offset(e.var) + e.elem_begin * elem_size(v.type);
      std::byte* p = buffer + e.mem_offset;
      uint64_t done = 0;
      while (done < bytes) {
        ssize_t n = access == Access::write
                        ? ::pwrite(fd_, p + done, bytes - done, static_cast<off_t>(off + done))
                        : ::pread(fd_, p + done, bytes - done, static_cast<off_t>(off + done));
        ++requests_;
        if (n < 0) {
          if (errno == EINTR) continue;
          throw_system(std::string(access == Access::write ? "write to \"" : "read from \"") + path_ +
                           "\" at offset " + std::to_string(off + done) + " failed",
                       errno);
        }
        if (n == 0) {
          throw_runtime("read from \"" + path_ + "\" at offset " + std::to_string(off + done) +
                        " reached the end of the file (" + std::to_string(bytes - done) +
                        " bytes missing: the file is shorter than the decomposition)");
        }
        done += static_cast<uint64_t>(n);
      }
    }
  }

  void close() override {
    if (fd_ < 0) return;
    int fd = fd_;
    fd_ = -1;
    if (ctx_.fsync && writing_ && ::fsync(fd) != 0) {
      int err = errno;
      ::close(fd);
      throw_system("fsync of \"" + path_ + "\" failed", err);
    }
    if (::close(fd) != 0) throw_system("close of \"" + path_ + "\" failed", errno);
  }

  uint64_t requests() const override { return requests_; }

 private:
  void open_fd(int flags) {
    writing_ = (flags & O_WRONLY) != 0;
    fd_ = ::open(path_.c_str(), flags | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw_system(std::string("cannot open \"") + path_ + "\" for " + (writing_ ? "writing" : "reading"), errno);
    }
  }

  BackendContext ctx_;
  const Decomposition& d_;
  Target t_;
  std::string path_;
  int fd_ = -1;
  bool writing_ = false;
  uint64_t requests_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_posix_backend(const BackendContext& ctx, const Decomposition& d, const Target& t) {
  return std::make_unique<PosixBackend>(ctx, d, t);
}

}  // namespace strata
