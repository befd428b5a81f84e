#include "common/hints.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/error.hpp"

namespace strata {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

void check_key(const std::string& key, const std::string& where) {
  if (key.empty()) throw_usage("malformed hint " + where + ": empty key");
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
      throw_usage("malformed hint " + where + ": key \"" + key + "\" may hold only letters, digits, '_', '-' and '.'");
    }
  }
  if (key.size() >= MPI_MAX_INFO_KEY) throw_usage("malformed hint " + where + ": key too long");
}

}  // namespace

Hints parse_hint_list(const std::string& text) {
  Hints out;
  if (trim(text).empty()) throw_usage("malformed --hints \"\": expected key=value[,key=value...]");
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::string where = "\"" + item + "\" in --hints";
    auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw_usage("malformed hint " + where + ": expected key=value");
    }
    std::string key = trim(item.substr(0, eq));
    std::string value = trim(item.substr(eq + 1));
    check_key(key, where);
    if (value.empty()) throw_usage("malformed hint " + where + ": empty value");
    out.emplace_back(key, value);
  }
  if (!text.empty() && text.back() == ',') throw_usage("malformed --hints \"" + text + "\": trailing comma");
  return out;
}

Hints read_hints_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_usage("cannot read hints file \"" + path + "\" (named by STRATA_HINTS)");
  Hints out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::istringstream fields(t);
    std::string key, value, extra;
    fields >> key >> value >> extra;
    std::string where = "at " + path + ":" + std::to_string(number);
    if (value.empty() || !extra.empty()) {
      throw_usage("malformed hint " + where + ": expected \"key value\", got \"" + t + "\"");
    }
    check_key(key, where);
    out.emplace_back(key, value);
  }
  return out;
}

Hints merge_hints(const Hints& base, const Hints& top) {
  Hints out = base;
  for (const auto& [k, v] : top) {
    bool replaced = false;
    for (auto& [bk, bv] : out) {
      if (bk == k) {
        bv = v;
        replaced = true;
      }
    }
    if (!replaced) out.emplace_back(k, v);
  }
  return out;
}

Hints hints_from_environment_and(const std::string& cli_text) {
  Hints base;
  if (const char* file = std::getenv("STRATA_HINTS"); file != nullptr && *file != '\0') {
    base = read_hints_file(file);
  }
  Hints top = cli_text.empty() ? Hints{} : parse_hint_list(cli_text);
  return merge_hints(base, top);
}

MpiInfo::MpiInfo() { MPI_Info_create(&info_); }

MpiInfo::MpiInfo(const Hints& hints) : MpiInfo() {
  for (const auto& [k, v] : hints) set(k, v);
}

MpiInfo::~MpiInfo() {
  if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);
}

void MpiInfo::set(const std::string& key, const std::string& value) {
  check_mpi(MPI_Info_set(info_, key.c_str(), value.c_str()), "MPI_Info_set");
}

Hints MpiInfo::entries() const {
  Hints out;
  if (info_ == MPI_INFO_NULL) return out;
  int n = 0;
  MPI_Info_get_nkeys(info_, &n);
  for (int i = 0; i < n; ++i) {
    char key[MPI_MAX_INFO_KEY + 1];
    MPI_Info_get_nthkey(info_, i, key);
    int len = 0, flag = 0;
    MPI_Info_get_valuelen(info_, key, &len, &flag);
    std::string value(static_cast<size_t>(len) + 1, '\0');
    MPI_Info_get(info_, key, len + 1, value.data(), &flag);
    value.resize(static_cast<size_t>(len));
    out.emplace_back(key, value);
  }
  return out;
}

}  // namespace strata
