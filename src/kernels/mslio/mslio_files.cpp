// MSLIO's original output routine (a text file per local problem, one fprintf per value) and
// the paper's per-file buffering; reading the files back.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "kernels/mslio/mslio_io.hpp"
#include "kernels/mslio/mslio_text.hpp"
#include "kernels/mslio/mslio_volume.hpp"

namespace strata::mslio {

uint64_t Setup::file_bytes() const { return kValueBytes * values(); }

uint64_t Setup::chunk_stride() const {
  const uint64_t b = file_bytes();
  return align > 1 ? (b + align - 1) / align * align : b;
}

std::string Setup::problem_folder(uint64_t problem) const {
  char name[32];
  std::snprintf(name, sizeof name, "/lp%07llu", static_cast<unsigned long long>(problem));
  return folder + name;
}

std::string Setup::problem_file(uint64_t problem) const { return problem_folder(problem) + "/solution.txt"; }
std::string Setup::shared_path() const { return folder + "/solutions.txt"; }
std::string Setup::hdf5_path() const { return folder + "/solutions.h5"; }

void FirstError::raise() const {
  if (!message_.empty()) throw_runtime(message_);
}

void create_folders(const Setup& s) {
  FirstError error;
#pragma omp parallel for schedule(static) num_threads(s.threads)
  for (uint64_t k = s.first; k < s.first + s.count; ++k) {
    const std::string dir = s.problem_folder(k);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      error.set("cannot create the folder \"" + dir + "\": " + std::strerror(errno));
    }
  }
  error.raise();
}

void remove_files(const Setup& s) {
  FirstError error;
#pragma omp parallel for schedule(static) num_threads(s.threads)
  for (uint64_t k = s.first; k < s.first + s.count; ++k) {
    const std::string path = s.problem_file(k);
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      error.set("cannot remove \"" + path + "\": " + std::strerror(errno));
    }
  }
  error.raise();
}

namespace {

// One local problem's file, written the original way: a formatted write per value.
void write_original(const Setup& s, const double* mem, FILE* f, CallTotals& t, FirstError& error) {
  for (unsigned d = 0; d < s.dims; ++d) {
    for (uint64_t p = 0; p < s.points; ++p) {
      if (std::fprintf(f, kValueFormat, mem[p * s.dims + d]) != static_cast<int>(kValueBytes)) {
        error.set(std::string("fprintf of a solution value failed: ") + std::strerror(errno));
        return;
      }
      ++t.writes;
    }
  }
}

// The same values through a buffer of s.buffer_bytes, flushed with one fwrite when full.
void write_buffered(const Setup& s, const double* mem, FILE* f, std::vector<char>& buffer, CallTotals& t,
                    FirstError& error) {
  size_t used = 0;
  auto flush = [&] {
    if (used == 0) return true;
    if (std::fwrite(buffer.data(), 1, used, f) != used) {
      error.set(std::string("fwrite of a solution buffer failed: ") + std::strerror(errno));
      return false;
    }
    ++t.writes;
    used = 0;
    return true;
  };
  for (unsigned d = 0; d < s.dims; ++d) {
    for (uint64_t p = 0; p < s.points; ++p) {
      if (used + kValueBytes > buffer.size() && !flush()) return;
      if (!format_value(mem[p * s.dims + d], buffer.data() + used)) {
        error.set("a solution value does not fit 14 characters");
        return;
      }
      used += kValueBytes;
    }
  }
  flush();
}

}  // namespace

CallTotals write_files(const Setup& s, const double* memory, bool fsync) {
  const bool buffered = s.mode == "buffered";
  CallTotals total;
  FirstError error;
#pragma omp parallel num_threads(s.threads)
  {
    CallTotals t;
    std::vector<char> buffer(buffered ? s.buffer_bytes : 0);
#pragma omp for schedule(static)
    for (uint64_t k = s.first; k < s.first + s.count; ++k) {
      if (error.any()) continue;
      const std::string path = s.problem_file(k);
      const double t0 = now_s();
      FILE* f = std::fopen(path.c_str(), "w");
      const double t1 = now_s();
      t.open_s += t1 - t0;
      ++t.opens;
      if (f == nullptr) {
        error.set("cannot create \"" + path + "\": " + std::strerror(errno));
        continue;
      }
      // Buffered writes go straight to the file: one write(2) per fwrite of a full buffer.
      if (buffered) std::setvbuf(f, nullptr, _IONBF, 0);
      const double* mem = problem_memory(s, memory, k);
      if (buffered) {
        write_buffered(s, mem, f, buffer, t, error);
      } else {
        write_original(s, mem, f, t, error);
      }
      const double t2 = now_s();
      t.write_s += t2 - t1;
      if (fsync && (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0)) {
        error.set("cannot sync \"" + path + "\": " + std::strerror(errno));
      }
      if (std::fclose(f) != 0) error.set("cannot close \"" + path + "\": " + std::strerror(errno));
      t.close_s += now_s() - t2;
      ++t.closes;
      t.bytes += s.file_bytes();
    }
#pragma omp critical(mslio_totals)
    total += t;
  }
  error.raise();
  return total;
}

CallTotals read_files(const Setup& s, const double* memory, bool compare, std::optional<std::string>& mismatch) {
  CallTotals total;
  FirstError error, differs;
  const uint64_t want = s.file_bytes();
#pragma omp parallel num_threads(s.threads)
  {
    CallTotals t;
    std::vector<char> text(want + 1);
#pragma omp for schedule(static)
    for (uint64_t k = s.first; k < s.first + s.count; ++k) {
      if (error.any()) continue;
      const std::string path = s.problem_file(k);
      const double t0 = now_s();
      const int fd = ::open(path.c_str(), O_RDONLY);
      const double t1 = now_s();
      t.open_s += t1 - t0;
      ++t.opens;
      if (fd < 0) {
        error.set("cannot open \"" + path + "\": " + std::strerror(errno));
        continue;
      }
      // Read up to one byte more than expected, so a longer file is noticed.
      uint64_t got = 0;
      while (got < want + 1) {
        const ssize_t n = ::read(fd, text.data() + got, want + 1 - got);
        ++t.writes;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          error.set("cannot read \"" + path + "\": " + std::strerror(errno));
          break;
        }
        if (n == 0) break;
        got += static_cast<uint64_t>(n);
      }
      const double t2 = now_s();
      t.write_s += t2 - t1;
      ::close(fd);
      t.close_s += now_s() - t2;
      ++t.closes;
      t.bytes += got;
      if (compare && !error.any()) {
        const double t3 = now_s();
        auto bad = check_file(text.data(), got, problem_memory(s, memory, k), s.points, s.dims, k);
        if (bad) differs.set("\"" + path + "\": " + *bad);
        t.format_s += now_s() - t3;
      }
    }
#pragma omp critical(mslio_totals)
    total += t;
  }
  error.raise();
  if (differs.any()) mismatch = differs.message();
  return total;
}

}  // namespace strata::mslio
