// The engine's output index: written by rank 0 when a write phase closes, read by any reader.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "engine/output_index.hpp"

namespace strata {

std::string index_path(const std::string& output) { return output + ".strata-index.json"; }

std::optional<OutputIndex> read_output_index(const std::string& output) {
  const std::string path = index_path(output);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  OutputIndex index;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    if (j.at("format").get<std::string>() != "strata-index") throw_usage("not a strata index");
    for (const auto& v : j.at("variables")) {
      index.variables.push_back({v.at("name").get<std::string>(), v.at("element_size").get<size_t>(),
                                 v.at("dims").get<std::vector<uint64_t>>(), v.at("file_offset").get<uint64_t>()});
    }
    for (const auto& f : j.at("files")) {
      index.files.push_back({f.at("path").get<std::string>(), f.at("begin").get<uint64_t>(),
                             f.at("end").is_null() ? UINT64_MAX : f.at("end").get<uint64_t>()});
    }
    index.bytes = j.at("bytes").get<uint64_t>();
    index.writer_ranks = j.at("writer_ranks").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw_usage("malformed index \"" + path + "\": " + e.what());
  } catch (const Error& e) {
    throw_usage("malformed index \"" + path + "\": " + e.what());
  }
  if (index.files.empty()) throw_usage("malformed index \"" + path + "\": it lists no file");
  return index;
}

namespace engine {

void write_output_index(const std::string& output, const OutputIndex& index) {
  nlohmann::json j = {{"format", "strata-index"}, {"version", 1}, {"bytes", index.bytes},
                      {"writer_ranks", index.writer_ranks}};
  j["variables"] = nlohmann::json::array();
  for (const auto& v : index.variables) {
    j["variables"].push_back({{"name", v.name}, {"element_size", v.element_size}, {"dims", v.dims},
                              {"file_offset", v.file_offset}});
  }
  j["files"] = nlohmann::json::array();
  for (const auto& f : index.files) {
    j["files"].push_back({{"path", f.path}, {"begin", f.begin},
                          {"end", f.end == UINT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(f.end)}});
  }
  const std::string path = index_path(output), tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << "\n";
    out.flush();
    if (!out) throw_system("cannot write the index \"" + tmp + "\"", errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw_system("cannot rename the index to \"" + path + "\"", errno);
}

std::string resolve_indexed_path(const std::string& output, const std::string& relative) {
  std::filesystem::path p(relative);
  if (p.is_absolute()) return relative;
  return (std::filesystem::path(output).parent_path() / p).string();
}

}  // namespace engine
}  // namespace strata
