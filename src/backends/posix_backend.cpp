// posix: pwrite/pread of each extent (split at the transfer size) into one shared file at its
// raw-layout offset, or into a file per process at its offset in the rank's buffer.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "backends/backend.hpp"
#include "backends/transfer_steps.hpp"
#include "common/error.hpp"
#include "decomp/selection.hpp"

namespace strata {

namespace {

class PosixBackend final : public Backend {
 public:
  PosixBackend(const BackendContext& ctx, const Decomposition& d) : ctx_(ctx), d_(d) {}
  ~PosixBackend() override {
    if (fd_ >= 0) ::close(fd_);
  }

  std::string name() const override { return "posix"; }

  // No step makes an MPI call, so none needs an agreement of its own: an error is kept until
  // close, where the driver's one agreement reports it on every rank (the other steps are skipped).
  bool agrees_on(BackendStep step) const override { return step != BackendStep::close; }

  void open(Access access) override {
    path_ = ctx_.file.path;
    failure_.take();
    // Every rank opens with O_CREAT: creating a file that another rank has just created is not
    // an error, so nobody waits for the file's creator.
    failure_.run([&] {
      open_fd((access == Access::write ? O_WRONLY | O_CREAT : O_RDONLY) | (ctx_.io.direct ? O_DIRECT : 0));
      if (access == Access::read) check_size();
    });
  }

  void transfer(Access access, std::byte* buffer) override {
    requests_ = 0;
    stopped_at_.reset();
    failure_.run([&] { move(access, buffer); });
  }

  void close() override {
    std::optional<Error> failure = failure_.take();
    if (fd_ >= 0) {
      int fd = fd_;
      fd_ = -1;
      if (!failure && ctx_.io.fsync && writing_ && ::fsync(fd) != 0) {
        failure = caught([&] { throw_system("fsync of \"" + path_ + "\" failed", errno); });
      }
      if (::close(fd) != 0 && !failure)
        failure = caught([&] { throw_system("close of \"" + path_ + "\" failed", errno); });
    }
    if (failure) throw *failure;
    // The creator extends a file the writes left short. Other ranks may still be writing (no
    // agreement came between): extending never shortens, and every write lands below the extent.
    if (writing_) extend_to_extent(ctx_.file);
  }

  uint64_t requests() const override { return requests_; }
  uint64_t moved_bytes(uint64_t asked) const override { return stopped_at_ ? *stopped_at_ : asked; }

 private:
  void open_fd(int flags) {
    writing_ = (flags & O_WRONLY) != 0;
    fd_ = ::open(path_.c_str(), flags | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == EINVAL && (flags & O_DIRECT) != 0) {
      throw_usage("--direct: the file system of \"" + path_ + "\" refuses O_DIRECT (tmpfs does); write to a disk");
    }
    if (fd_ < 0) {
      throw_system(std::string("cannot open \"") + path_ + "\" for " + (writing_ ? "writing" : "reading"), errno);
    }
  }

  void check_size() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw_system("cannot stat \"" + path_ + "\"", errno);
    const uint64_t need = ctx_.file.bytes_needed;
    if (static_cast<uint64_t>(st.st_size) < need) {
      throw_runtime("\"" + path_ + "\" holds " + std::to_string(st.st_size) + " bytes but the decomposition needs " +
                    std::to_string(need) + " (the file is shorter than the decomposition)");
    }
  }

  void move(Access access, std::byte* buffer) {
    const auto pieces = split_extents(d_, flatten(d_), d_.transfer_bytes ? d_.transfer_bytes : kMaxRequestBytes);
    // IOR's stonewalling (-D): past the deadline, no further request starts; what moved is counted.
    Stonewall wall(ctx_.io.deadline);
    uint64_t moved = 0;
    for (const Extent& e : pieces) {
      if (wall.reached()) {
        stopped_at_ = moved;
        return;
      }
      const Variable& v = d_.variables[static_cast<size_t>(e.var)];
      const uint64_t bytes = e.elems * elem_size(v.type);
      const uint64_t off = file_offset(ctx_.file, d_, e.var, e.elem_begin, e.mem_offset);
      std::byte* p = buffer + e.mem_offset;
      if (ctx_.io.direct) p = bounce(off, bytes, access == Access::write ? p : nullptr);
      uint64_t done = 0;
      while (done < bytes) {
        ssize_t n = access == Access::write ? ::pwrite(fd_, p + done, bytes - done, static_cast<off_t>(off + done))
                                            : ::pread(fd_, p + done, bytes - done, static_cast<off_t>(off + done));
        ++requests_;
        if (n > 0 && access == Access::write && ctx_.io.fsync_per_write && ::fsync(fd_) != 0) {
          throw_system("fsync of \"" + path_ + "\" after a write failed", errno);
        }
        if (n < 0) {
          if (errno == EINTR) continue;
          throw_system(std::string(access == Access::write ? "write to \"" : "read from \"") + path_ + "\" at offset " +
                           std::to_string(off + done) + " failed",
                       errno);
        }
        if (n == 0) {
          throw_runtime("read from \"" + path_ + "\" at offset " + std::to_string(off + done) +
                        " reached the end of the file (" + std::to_string(bytes - done) +
                        " bytes missing: the file is shorter than the decomposition)");
        }
        done += static_cast<uint64_t>(n);
      }
      if (ctx_.io.direct && access == Access::read) std::memcpy(buffer + e.mem_offset, p, bytes);
      moved += bytes;
    }
  }

  // O_DIRECT moves whole blocks between the disk and aligned memory: the request's bytes in an
  // aligned buffer of this backend's (copied in when writing); a request that does not start and
  // end on a block is refused, not split (the measure would no longer be the transfer asked for).
  std::byte* bounce(uint64_t offset, uint64_t bytes, const std::byte* from) {
    if (offset % kDirectAlign != 0 || bytes % kDirectAlign != 0) {
      throw_usage("--direct: a request of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                  " is not on 4 KiB blocks (O_DIRECT needs offsets and transfer sizes that are multiples of 4 KiB)");
    }
    if (bounce_bytes_ < bytes) {
      void* p = nullptr;
      if (::posix_memalign(&p, kDirectAlign, bytes) != 0) throw_runtime("--direct: cannot allocate an aligned buffer");
      bounce_.reset(static_cast<std::byte*>(p));
      bounce_bytes_ = bytes;
    }
    if (from != nullptr) std::memcpy(bounce_.get(), from, bytes);
    return bounce_.get();
  }

  static constexpr uint64_t kDirectAlign = 4096;
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> bounce_;
  uint64_t bounce_bytes_ = 0;
  std::optional<uint64_t> stopped_at_;  // bytes moved when the deadline stopped the last transfer

  BackendContext ctx_;
  const Decomposition& d_;
  std::string path_;
  int fd_ = -1;
  bool writing_ = false;
  uint64_t requests_ = 0;
  KeptError failure_;  // from open or transfer, until close
};

}  // namespace

BackendRow posix_backend_row() {
  BackendRow row;
  row.name = "posix";
  row.summary = "pwrite/pread: one shared file, or a file per process with --file-per-process";
  row.make = [](const BackendContext& ctx, const Decomposition& d, const Target&) -> std::unique_ptr<Backend> {
    return std::make_unique<PosixBackend>(ctx, d);
  };
  row.can.layouts = {Layout::shared, Layout::file_per_process, Layout::file_per_node};
  row.test_variants = {{.name = "posix"}, {.name = "posix-fpp", .layout = Layout::file_per_process}};
  row.can.options = {"fsync-per-write", "direct", "deadline"};  // run options of this backend only
  return row;
}

}  // namespace strata
