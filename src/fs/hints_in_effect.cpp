#include "fs/hints_in_effect.hpp"

#include <algorithm>

#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <vector>

namespace strata {

RomioHintCapture::RomioHintCapture(bool active) {
  if (!active || std::getenv("ROMIO_PRINT_HINTS") != nullptr) return;  // the user asked to see them
  std::fflush(stdout);
  sink_ = std::tmpfile();
  if (sink_ == nullptr) return;
  saved_stdout_ = ::dup(STDOUT_FILENO);
  if (saved_stdout_ < 0 || ::dup2(::fileno(sink_), STDOUT_FILENO) < 0) {
    if (saved_stdout_ >= 0) ::close(saved_stdout_);
    std::fclose(sink_);
    sink_ = nullptr;
    saved_stdout_ = -1;
    return;
  }
  setenv("ROMIO_PRINT_HINTS", "1", 1);
  active_ = true;
}

RomioHintCapture::~RomioHintCapture() { finish(); }

Hints RomioHintCapture::finish() {
  if (!active_) return {};
  active_ = false;
  unsetenv("ROMIO_PRINT_HINTS");
  std::fflush(stdout);
  ::dup2(saved_stdout_, STDOUT_FILENO);
  ::close(saved_stdout_);
  std::string text;
  std::rewind(sink_);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, sink_)) > 0) text.append(buf, n);
  std::fclose(sink_);
  sink_ = nullptr;
  std::string other;
  Hints hints = parse_romio_hint_print(text, &other);
  if (!other.empty()) std::fputs(other.c_str(), stdout);
  return hints;
}

Hints parse_romio_hint_print(const std::string& text, std::string* other_output) {
  Hints out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto k = line.find("key = ");
    auto v = line.find("value = ");
    if (k == 0 && v != std::string::npos) {
      std::string key = line.substr(6, v - 6);
      std::string value = line.substr(v + 8);
      auto trim = [](std::string s) {
        size_t e = s.find_last_not_of(" \t\r");
        return e == std::string::npos ? std::string() : s.substr(0, e + 1);
      };
      // A library may open a file more than once; the last report of a key wins.
      bool replaced = false;
      for (auto& [ok, ov] : out) {
        if (ok == trim(key)) {
          ov = trim(value);
          replaced = true;
        }
      }
      if (!replaced) out.emplace_back(trim(key), trim(value));
    } else if (other_output != nullptr) {
      *other_output += line + "\n";
    }
  }
  return out;
}

Hints ompio_settings() {
  Hints out;
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return out;
  const std::vector<std::string> wanted = {"fcoll",
                                           "io_ompio_bytes_per_agg",
                                           "io_ompio_num_aggregators",
                                           "fbtl_posix_write_datasieving",
                                           "fbtl_posix_read_datasieving",
                                           "fs_ufs_lock_algorithm"};
  int count = 0;
  MPI_T_cvar_get_num(&count);
  for (int i = 0; i < count; ++i) {
    char name[256], desc[1024];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len, &bind, &scope) !=
        MPI_SUCCESS) {
      continue;
    }
    bool want = false;
    for (const auto& w : wanted) want = want || w == name;
    if (!want || bind != MPI_T_BIND_NO_OBJECT) continue;
    MPI_T_cvar_handle handle;
    int n = 0;
    if (MPI_T_cvar_handle_alloc(i, nullptr, &handle, &n) != MPI_SUCCESS) continue;
    std::string value;
    if (type == MPI_INT && n == 1) {
      int v = 0;
      if (MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) value = std::to_string(v);
    } else if (type == MPI_CHAR) {
      std::vector<char> v(static_cast<size_t>(n > 0 ? n : 1) + 1, '\0');
      if (MPI_T_cvar_read(handle, v.data()) == MPI_SUCCESS) value = v.data();
      if (value.empty()) value = "(automatic)";
    }
    MPI_T_cvar_handle_free(&handle);
    if (!value.empty()) out.emplace_back(std::string("ompio:") + name, value);
  }
  MPI_T_finalize();
  return out;
}

Hints effective_hints(const Hints& from_get_info, const Hints& romio_printed) {
  return romio_printed.empty() ? from_get_info : romio_printed;
}

namespace {
bool has_key(const Hints& hints, const std::string& key) {
  return std::any_of(hints.begin(), hints.end(), [&](const auto& h) { return h.first == key; });
}
}  // namespace

Hints hints_not_recognised(const Hints& requested, const Hints& in_effect, const std::string& component) {
  static const Hints ompio_keys = {{"cb_buffer_size", ""},
                                   {"cb_nodes", ""},
                                   {"collective_buffering", ""},
                                   {"striping_factor", ""},
                                   {"striping_unit", ""}};
  Hints out;
  for (const auto& h : requested) {
    const bool taken = component == "ompio" ? has_key(ompio_keys, h.first) : has_key(in_effect, h.first);
    if (!taken) out.push_back(h);
  }
  return out;
}

Hints without_keys(const Hints& hints, const Hints& dropped) {
  Hints out;
  for (const auto& h : hints) {
    if (!has_key(dropped, h.first)) out.push_back(h);
  }
  return out;
}

}  // namespace strata
