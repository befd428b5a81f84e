// The engine's output index: written by rank 0 when a write phase closes, read by any reader.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "engine/output_index.hpp"

namespace strata {

std::string index_path(const std::string& output) { return output + ".strata-index.json"; }

std::optional<OutputIndex> read_output_index(const std::string& output) { return read_index_file(index_path(output)); }

namespace {

std::string hex64(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

uint64_t parse_hex64(const std::string& text) {
  if (text.empty() || text.size() > 16 || text.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
    throw_usage("checksum \"" + text + "\" is not 16 hexadecimal digits");
  }
  return std::stoull(text, nullptr, 16);
}

}  // namespace

std::optional<OutputIndex> read_index_file(const std::string& path) {
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
      IndexedFile file{f.at("path").get<std::string>(),
                       f.at("begin").get<uint64_t>(),
                       f.at("end").is_null() ? UINT64_MAX : f.at("end").get<uint64_t>(),
                       std::nullopt,
                       {},
                       {},
                       {}};
      if (f.contains("size")) file.size = f.at("size").get<uint64_t>();
      if (f.contains("xxh3")) {
        for (const auto& c : f.at("xxh3")) file.checksums.push_back(parse_hex64(c.get<std::string>()));
      }
      if (f.contains("xxh3_ranges")) {
        index.checksum_ranges = true;
        uint64_t end = 0;
        for (const auto& r : f.at("xxh3_ranges")) {
          IndexedFile::Range range{r.at(0).get<uint64_t>(), r.at(1).get<uint64_t>(),
                                   parse_hex64(r.at(2).get<std::string>())};
          if (range.length == 0 || range.offset < end)
            throw_usage("checksum ranges must be sorted, disjoint and non-empty");
          end = range.offset + range.length;
          file.ranges.push_back(range);
        }
      }
      if (f.contains("holes")) {
        uint64_t end = 0;
        for (const auto& h : f.at("holes")) {
          const uint64_t offset = h.at(0).get<uint64_t>(), length = h.at(1).get<uint64_t>();
          if (length == 0 || offset < end) throw_usage("holes must be sorted, disjoint and non-empty");
          end = offset + length;
          file.holes.emplace_back(offset, length);
        }
      }
      index.files.push_back(std::move(file));
    }
    if (j.contains("checksum")) {
      if (j.at("checksum").at("algorithm").get<std::string>() != "xxh3-64") throw_usage("unknown checksum algorithm");
      index.checksum_chunk = j.at("checksum").at("chunk_bytes").get<uint64_t>();
      if (index.checksum_chunk == 0) throw_usage("checksum chunk_bytes is 0");
    }
    index.in_place = j.value("written_in_place", false);
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
  write_index_file(index_path(output), index, false);
}

void write_index_file(const std::string& path, const OutputIndex& index, bool sync, bool atomic,
                      const std::string& staging) {
  const int version = index.checksum_chunk == 0 ? 1 : index.checksum_ranges ? 3 : 2;
  nlohmann::json j = {
      {"format", "strata-index"}, {"version", version}, {"bytes", index.bytes}, {"writer_ranks", index.writer_ranks}};
  if (index.checksum_chunk > 0) j["checksum"] = {{"algorithm", "xxh3-64"}, {"chunk_bytes", index.checksum_chunk}};
  if (index.in_place) j["written_in_place"] = true;
  j["variables"] = nlohmann::json::array();
  for (const auto& v : index.variables) {
    j["variables"].push_back(
        {{"name", v.name}, {"element_size", v.element_size}, {"dims", v.dims}, {"file_offset", v.file_offset}});
  }
  j["files"] = nlohmann::json::array();
  for (const auto& f : index.files) {
    nlohmann::json file = {{"path", f.path},
                           {"begin", f.begin},
                           {"end", f.end == UINT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(f.end)}};
    if (f.size) file["size"] = *f.size;
    if (index.checksum_chunk > 0 && version == 2) {
      file["xxh3"] = nlohmann::json::array();
      for (uint64_t c : f.checksums) file["xxh3"].push_back(hex64(c));
    }
    if (index.checksum_chunk > 0 && version == 3) {
      file["xxh3_ranges"] = nlohmann::json::array();
      for (const IndexedFile::Range& r : f.ranges) file["xxh3_ranges"].push_back({r.offset, r.length, hex64(r.hash)});
      if (!f.holes.empty()) {
        file["holes"] = nlohmann::json::array();
        for (const auto& [offset, length] : f.holes) file["holes"].push_back({offset, length});
      }
    }
    j["files"].push_back(std::move(file));
  }
  if (!staging.empty()) atomic = true;
  const std::string tmp = !staging.empty() ? staging : atomic ? path + ".tmp" : path;
  const std::string text = j.dump(2) + "\n";
  // Never O_TRUNC on a file that may exist: ext4 (auto_da_alloc) flushes a file truncated to
  // zero and written again when it is closed, milliseconds on rank 0's critical path. The text
  // overwrites the file from its start and the file is cut to its length after.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | (atomic ? 0 : O_TRUNC) | O_CLOEXEC, 0644);
  if (fd < 0) throw_system("cannot write the index \"" + tmp + "\"", errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      throw_system("cannot write the index \"" + tmp + "\"", err);
    }
    done += static_cast<size_t>(n);
  }
  if (atomic && ::ftruncate(fd, static_cast<off_t>(text.size())) != 0) {
    const int err = errno;
    ::close(fd);
    throw_system("cannot write the index \"" + tmp + "\"", err);
  }
  const int rc = sync ? ::fsync(fd) : 0;
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw_system("fsync of the index \"" + tmp + "\" failed", err);
  if (atomic && std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw_system("cannot rename the index to \"" + path + "\"", errno);
  }
}

std::string resolve_indexed_path(const std::string& output, const std::string& relative) {
  std::filesystem::path p(relative);
  if (p.is_absolute()) return relative;
  return (std::filesystem::path(output).parent_path() / p).string();
}

}  // namespace engine
}  // namespace strata
