// Burst-buffer drains (engine/drain_job.hpp): the record, the partitions' copies and markers,
// the commit, and completing an interrupted drain.
#include "engine/drain_job.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.hpp"
#include "engine/commit.hpp"
#include "engine/move/drain.hpp"
#include "engine/output_index.hpp"

namespace strata::engine {

namespace {

std::string folder_of(const std::string& path) {
  const auto dir = std::filesystem::path(path).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

// STRATA_DRAIN_KILL_AT=copying|copied|committing: the process kills itself there (SIGKILL), so
// tests can interrupt a drain at a known point.
void kill_point(const char* name) {
  const char* at = std::getenv("STRATA_DRAIN_KILL_AT");
  if (at != nullptr && std::string(at) == name) ::kill(::getpid(), SIGKILL);
}

// A small file written whole under a temporary name, synced (unless not `sync`), then renamed.
void write_synced(const std::string& path, const std::string& text, bool sync = true) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw_system("drain: cannot create \"" + tmp + "\"", errno);
  size_t done = 0;
  int rc = 0;
  while (done < text.size() && rc == 0) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) rc = -1;
    done += n > 0 ? static_cast<size_t>(n) : 0;
  }
  if (rc == 0 && sync) rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw_system("drain: cannot write \"" + tmp + "\"", err);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw_system("drain: cannot rename \"" + tmp + "\"", errno);
}

std::string target_file(const DrainRecord& r, size_t file) {
  return resolve_indexed_path(r.target, r.files[file].name);
}

}  // namespace

std::string drain_record_path(const std::string& target) { return target + ".strata-drain.json"; }

std::string drain_marker_path(const std::string& target, size_t part) {
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, ".strata-drain.part.%05zu", part);
  return target + suffix;
}

std::string drain_lock_path(const std::string& target) { return target + ".strata-drain.lock"; }

void write_drain_record(const DrainRecord& r) {
  nlohmann::json files = nlohmann::json::array(), parts = nlohmann::json::array();
  for (const DrainFile& f : r.files)
    files.push_back({{"name", f.name}, {"begin", f.begin}, {"end", f.end}, {"size", f.size}});
  for (const DrainPart& p : r.parts) {
    parts.push_back({{"from", p.from},
                     {"begin", p.begin},
                     {"end", p.end},
                     {"length", p.length},
                     {"file", p.file},
                     {"offset", p.offset}});
  }
  const nlohmann::json j = {
      {"strata_drain", 1},      {"target", r.target}, {"source", r.source}, {"checksum_chunk", r.checksum_chunk},
      {"subfiled", r.subfiled}, {"files", files},     {"parts", parts}};
  write_synced(drain_record_path(r.target), j.dump(1) + "\n", false);
}

std::optional<DrainRecord> read_drain_record(const std::string& target) {
  const std::string path = drain_record_path(target);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    DrainRecord r;
    r.target = j.at("target").get<std::string>();
    r.source = j.at("source").get<std::string>();
    r.checksum_chunk = j.at("checksum_chunk").get<uint64_t>();
    r.subfiled = j.at("subfiled").get<bool>();
    r.recycled = j.value("recycled", false);
    for (const auto& f : j.at("files")) {
      r.files.push_back({f.at("name").get<std::string>(), f.at("begin").get<uint64_t>(), f.at("end").get<uint64_t>(),
                         f.at("size").get<uint64_t>()});
    }
    for (const auto& p : j.at("parts")) {
      r.parts.push_back({p.at("from").get<std::string>(), p.at("begin").get<uint64_t>(), p.at("end").get<uint64_t>(),
                         p.at("length").get<uint64_t>(), p.at("file").get<size_t>(), p.at("offset").get<uint64_t>()});
      if (r.parts.back().file >= r.files.size())
        throw_usage("a part names file " + std::to_string(r.parts.back().file));
    }
    return r;
  } catch (const std::exception& e) {
    throw_usage("drain record \"" + path + "\" does not parse: " + e.what() +
                " (the drain cannot be finished from it; the target holds its previous output)");
  }
}

void clear_drain_leftovers(const std::string& target) {
  const std::string name = std::filesystem::path(target).filename().string() + ".strata-drain.part.";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder_of(target), ec)) {
    if (e.path().filename().string().rfind(name, 0) == 0) ::unlink(e.path().c_str());
  }
  ::unlink(drain_lock_path(target).c_str());
  for (const std::string& p : leftover_partials(target)) ::unlink(p.c_str());
}

uint64_t drain_part(const DrainRecord& r, size_t part) {
  const DrainPart& p = r.parts[part];
  const std::string to = partial_path(target_file(r, p.file));
  return mark_part(r, part,
                   drain_file(p.from, to, p.offset, p.length, r.checksum_chunk, [] { kill_point("copying"); }));
}

uint64_t mark_part(const DrainRecord& r, size_t part, const std::vector<DrainedRange>& ranges) {
  const DrainPart& p = r.parts[part];
  std::ostringstream text;
  uint64_t bytes = 0;
  for (const DrainedRange& d : ranges) {
    text << p.file << ' ' << d.offset << ' ' << d.length << ' ' << d.hash << '\n';
    bytes += d.length;
  }
  write_synced(drain_marker_path(r.target, part), text.str());
  kill_point("copied");
  return bytes;
}

bool claim_drain_commit(const DrainRecord& r) {
  struct stat st {};
  for (size_t p = 0; p < r.parts.size(); ++p) {
    if (::stat(drain_marker_path(r.target, p).c_str(), &st) != 0) return false;
  }
  const int fd = ::open(drain_lock_path(r.target).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;  // another partition's thread commits
  ::close(fd);
  return true;
}

std::string commit_drain(const DrainRecord& r) {
  const std::optional<OutputIndex> source = read_output_index(r.source);
  if (!source) {
    throw_runtime("drain of \"" + r.target + "\": the node-local copy's index \"" + index_path(r.source) +
                  "\" is missing");
  }
  OutputIndex index;
  index.variables = source->variables;
  index.bytes = source->bytes;
  index.writer_ranks = source->writer_ranks;
  index.checksum_chunk = r.checksum_chunk;
  index.checksum_ranges = true;
  for (const DrainFile& f : r.files) index.files.push_back({f.name, f.begin, f.end, f.size, {}, {}, {}});
  for (size_t p = 0; p < r.parts.size(); ++p) {
    std::ifstream in(drain_marker_path(r.target, p));
    if (!in) throw_runtime("drain of \"" + r.target + "\": partition " + std::to_string(p) + " has no marker");
    size_t file = 0;
    IndexedFile::Range range;
    while (in >> file >> range.offset >> range.length >> range.hash) {
      if (file >= index.files.size()) throw_runtime("drain marker of partition " + std::to_string(p) + " is damaged");
      index.files[file].ranges.push_back(range);
    }
  }
  for (IndexedFile& f : index.files) {
    std::sort(f.ranges.begin(), f.ranges.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
  }
  // Every file at its size (a subfile no partition copied into is created empty), synced.
  for (size_t i = 0; i < r.files.size(); ++i) {
    const std::string path = partial_path(target_file(r, i));
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) throw_system("drain: cannot open \"" + path + "\" to size it", errno);
    struct stat st {};
    const bool sized = ::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) == r.files[i].size;
    int rc = sized ? 0 : ::ftruncate(fd, static_cast<off_t>(r.files[i].size));
    // A recycled file: what no partition copied (holes between the ranges) must read as zeros.
    uint64_t at = 0;
    bool punched = false;
    const auto& ranges = index.files[i].ranges;
    for (size_t k = 0; r.recycled && rc == 0 && k <= ranges.size(); ++k) {
      const uint64_t stop = k < ranges.size() ? ranges[k].offset : r.files[i].size;
      if (stop > at) {
        rc = ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at),
                         static_cast<off_t>(stop - at));
        punched = true;
      }
      if (k < ranges.size()) at = ranges[k].offset + ranges[k].length;
    }
    // Synced unless nothing changed since its copies synced it (each copy fsyncs what it wrote).
    if (rc == 0 && (!sized || punched || ranges.empty())) rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) throw_system("drain: cannot size \"" + path + "\"", err);
  }
  // The commit point is the intent record with the drain record gone (engine/drain_job.hpp).
  std::vector<std::string> retired = commit_output(r.target, index, true, false, false, [&] {
    if (::unlink(drain_record_path(r.target).c_str()) != 0 && errno != ENOENT) {
      throw_system("drain: cannot remove the record \"" + drain_record_path(r.target) + "\"", errno);
    }
    sync_directory(folder_of(r.target));
    kill_point("committing");
  });
  // The old shared file stays, under its second name, for the next drain to write into.
  std::string kept = r.target + kRetiredSuffix;
  auto it = std::find(retired.begin(), retired.end(), kept);
  if (it != retired.end() && !r.subfiled) {
    retired.erase(it);
  } else {
    kept.clear();
  }
  remove_retired(retired);
  for (size_t p = 0; p < r.parts.size(); ++p) ::unlink(drain_marker_path(r.target, p).c_str());
  ::unlink(drain_lock_path(r.target).c_str());
  return kept;
}

DrainState drain_state(const std::string& target) {
  DrainState s;
  const std::optional<DrainRecord> r = read_drain_record(target);
  if (!r) return s;
  s.pending = true;
  s.parts = r->parts.size();
  s.source = r->source;
  struct stat st {};
  for (size_t p = 0; p < r->parts.size(); ++p) {
    if (::stat(drain_marker_path(target, p).c_str(), &st) == 0) ++s.marked;
    const DrainPart& part = r->parts[p];
    if (part.length == 0) continue;
    if (::stat(part.from.c_str(), &st) != 0) {
      s.missing.push_back(part.from + " (missing)");
    } else if (static_cast<uint64_t>(st.st_size) < part.length) {
      s.missing.push_back(part.from + " (" + std::to_string(st.st_size) + " bytes, needs " +
                          std::to_string(part.length) + ")");
    }
  }
  if (::stat(index_path(r->source).c_str(), &st) != 0) s.missing.push_back(index_path(r->source) + " (missing)");
  return s;
}

bool finish_drain(const std::string& target) {
  if (roll_forward(target)) {  // the commit point was passed: the new output, completed
    clear_drain_leftovers(target);
    return true;
  }
  const std::optional<DrainRecord> r = read_drain_record(target);
  if (!r) {  // a commit completed by someone else (roll_forward) leaves its markers and lock
    const std::string name = std::filesystem::path(target).filename().string() + ".strata-drain.part.";
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(folder_of(target), ec)) {
      if (e.path().filename().string().rfind(name, 0) == 0) ::unlink(e.path().c_str());
    }
    ::unlink(drain_lock_path(target).c_str());
    return false;
  }
  const DrainState s = drain_state(target);
  if (!s.missing.empty()) {
    std::string list;
    for (const std::string& m : s.missing) list += (list.empty() ? "" : ", ") + m;
    throw_runtime("cannot finish the drain of \"" + target + "\": its node-local copy is incomplete: " + list +
                  " (the target keeps its previous output; run `strata drain` where the node-local files are, or "
                  "write the output again)");
  }
  // Every partition again: a copy the crash cut short, or a partial file another write removed,
  // leaves no doubt this way.
  clear_drain_leftovers(target);
  DrainRecord again = *r;
  again.recycled = false;  // its partial file is gone: new files
  for (size_t p = 0; p < again.parts.size(); ++p) drain_part(again, p);
  ::unlink((target + kRetiredSuffix).c_str());
  commit_drain(again);
  ::unlink((target + kRetiredSuffix).c_str());
  return true;
}

namespace {

// Behind the computation: a drain's threads yield the core to the application's.
void yield_core() {
  const char* nice = std::getenv("STRATA_DRAIN_NICE");
  const int by = nice != nullptr && *nice != '\0' ? std::atoi(nice) : 10;
  if (by != 0) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), by);
}

}  // namespace

void DrainJob::Follower::advance(uint64_t end) {
  {
    const std::lock_guard<std::mutex> lock(m);
    written = std::max(written, end);
  }
  cv.notify_all();
}

void DrainJob::Follower::abandon() {
  {
    const std::lock_guard<std::mutex> lock(m);
    abandoned = true;
  }
  cv.notify_all();
}

void DrainJob::Follower::ready(uint64_t want) {
  std::unique_lock<std::mutex> lock(m);
  cv.wait(lock, [&] { return abandoned || written >= want; });
  if (abandoned) throw_runtime("drain: the node-local write was abandoned");
}

void DrainJob::follow(const std::string& from, const std::string& to, uint64_t offset, uint64_t length,
                      uint64_t hash_chunk) {
  follower = std::make_shared<Follower>();
  early_from = from;
  early_to = to;
  early_offset = offset;
  early_length = length;
  early = std::thread([this, hash_chunk, f = follower] {
    yield_core();
    const Clock::time_point t0 = Clock::now();
    try {
      early_ranges = drain_file(early_from, early_to, early_offset, early_length, hash_chunk, {},
                                [&f](uint64_t want) { f->ready(want); });
    } catch (const std::exception& e) {
      early_error = e.what();
    }
    early_s = std::chrono::duration<double>(Clock::now() - t0).count();
  });
}

void DrainJob::abandon_follow() {
  if (follower) follower->abandon();
  if (early.joinable()) early.join();
}

void DrainJob::start(bool commit_alone) {
  auto run = [this] {
    yield_core();
    const Clock::time_point t0 = Clock::now();
    try {
      if (early.joinable()) early.join();
      const bool followed = part >= 0 && follower && !early_error && static_cast<size_t>(part) < record.parts.size() &&
                            record.parts[static_cast<size_t>(part)].from == early_from &&
                            record.parts[static_cast<size_t>(part)].offset == early_offset &&
                            record.parts[static_cast<size_t>(part)].length == early_length &&
                            partial_path(target_file(record, record.parts[static_cast<size_t>(part)].file)) == early_to;
      if (followed) {  // copied behind the write already: its marker (no marker yet: a crash here recopies)
        kill_point("copying");
        bytes = mark_part(record, static_cast<size_t>(part), early_ranges);
      } else if (part >= 0) {
        bytes = drain_part(record, static_cast<size_t>(part));
      }
      copy_s = followed ? early_s : std::chrono::duration<double>(Clock::now() - t0).count();
      if (claim_drain_commit(record)) kept_retired = commit_drain(record);
    } catch (const std::exception& e) {
      error = e.what();
    }
    durable_s = std::chrono::duration<double>(Clock::now() - origin).count();
  };
  if (part >= 0) {
    thread = std::thread(run);
  } else if (commit_alone) {
    run();  // nothing to copy: the (empty) target is committed at once
  }
}

}  // namespace strata::engine
