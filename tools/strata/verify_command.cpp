// strata verify PATH: checks an engine output against its index — the index is there and
// parses, every file it lists exists at its size, every chunk checksum (XXH3-64) matches — and
// reports uncommitted writes (.strata-partial files) and interrupted commits. An output without an
// index is checked against the run record strata run left beside it (sizes, then read back and
// compared with the kernel's generator). Rank 0 checks the
// index and the files' sizes; the checksums are computed by all ranks, chunks shared out.
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "common/error.hpp"
#include "common/suggest.hpp"
#include "common/units.hpp"
#include "engine/commit.hpp"
#include "engine/drain_job.hpp"
#include "engine/output_index.hpp"
#include "run/run.hpp"
#include "strata/strata.hpp"
#ifdef STRATA_HAVE_HDF5
#include "common/hdf5_handles.hpp"
#endif

namespace strata::cli {

namespace {

const char* kHelp =
    "usage: strata verify PATH [--json] [--complete]\n"
    "\n"
    "Checks an output the engine wrote: its index PATH.strata-index.json is present and parses,\n"
    "every file it lists exists with the size recorded, and every chunk's XXH3-64 checksum matches.\n"
    "An output written in place (an HDF5 container, strata_commit=in-place) keeps the checksums of\n"
    "the ranges written (not of the bytes between them: a container's metadata): its files' sizes,\n"
    "those checksums and an HDF5 container's structure are checked (HDF5 opens it; each dataset has\n"
    "the indexed shape, element size and offset); an older one without checksums, its sizes and\n"
    "structure, and the report says the data was not checked.\n"
    "Reports each problem (missing file, wrong size, checksum mismatch with its byte range), a\n"
    "leftover PATH*.strata-partial (an uncommitted write: a write phase that did not finish; the\n"
    "committed output is unaffected) and an interrupted commit (PATH.strata-commit.json: its data\n"
    "is whole on disk; the output it commits is the one checked, where its files are now). A drain\n"
    "that did not finish (hint strata_drain, PATH.strata-drain.json) leaves the previous output whole:\n"
    "the report says so, how many partitions were copied, and whether the node-local copy can still\n"
    "finish it (`strata drain PATH`).\n"
    "An output with no index (every backend but strata, an application kernel) is checked against the\n"
    "run record `strata run` left beside it, PATH.strata-run.json: every file the run wrote is there at\n"
    "the size it wrote, and the output is read back as `strata run ... --read --verify` would: an HDF5\n"
    "or netCDF file opens and holds the kernel's datasets, and every value equals the kernel's generated\n"
    "one. A shared file is read by any number of ranks; files per process or per node and an\n"
    "application kernel's files only by as many ranks as wrote them (else their sizes only, said).\n"
    "PATH may also be one file of such an output (PATH.00000001, PATH.step000002).\n"
    "Exit status 0 when the committed output is good, 1 when not. Runs on any number of ranks.\n"
    "\n"
    "  --json      one JSON object on stdout instead of the report\n"
    "  --complete  finish an interrupted commit first (what the next read or write would do)\n";

struct Checked {
  std::vector<std::string> paths;         // files whose checksums are compared
  std::vector<engine::FileRange> ranges;  // what is hashed: chunks (version 2), or written ranges and the
  std::vector<uint64_t> expected;         // never-written gaps between them, which must hold zeros (version 3)
  std::vector<bool> gap;
  uint64_t chunk = 0;
};

// A file's ranges to check: version 2, every chunk; version 3, every written range and every gap
// (written in place: the written ranges only, `size` then the file's own).
void add_ranges(Checked& checked, const IndexedFile& f, bool ranged, bool in_place = false, uint64_t size = 0) {
  const size_t file = checked.paths.size() - 1;
  if (in_place) {
    for (const IndexedFile::Range& r : f.ranges) {
      if (r.offset + r.length > size) continue;  // past the end: a short file, reported as such
      checked.ranges.push_back({file, r.offset, r.length});
      checked.expected.push_back(r.hash);
      checked.gap.push_back(false);
    }
    return;
  }
  size = *f.size;
  if (!ranged) {
    for (uint64_t c = 0; c * checked.chunk < size; ++c) {
      checked.ranges.push_back({file, c * checked.chunk, std::min(checked.chunk, size - c * checked.chunk)});
      checked.expected.push_back(f.checksums[c]);
      checked.gap.push_back(false);
    }
    return;
  }
  uint64_t at = 0;
  auto gap_to = [&](uint64_t end) {
    for (; at < end; at = std::min(end, (at / checked.chunk + 1) * checked.chunk)) {
      const uint64_t n = std::min(end, (at / checked.chunk + 1) * checked.chunk) - at;
      checked.ranges.push_back({file, at, n});
      checked.expected.push_back(engine::zero_hash(n));
      checked.gap.push_back(true);
    }
  };
  for (const IndexedFile::Range& r : f.ranges) {
    gap_to(std::min(r.offset, size));
    checked.ranges.push_back({file, r.offset, r.length});
    checked.expected.push_back(r.hash);
    checked.gap.push_back(false);
    at = std::max(at, r.offset + r.length);
  }
  gap_to(size);
}

// The end of the declared variables in the global layout: what an output must hold.
uint64_t declared_end(const OutputIndex& index) {
  uint64_t end = 0;
  for (const IndexedVariable& v : index.variables) {
    uint64_t n = v.element_size;
    for (uint64_t d : v.dims) n *= d;
    end = std::max(end, v.file_offset + n);
  }
  return end;
}

bool is_hdf5(const std::string& file) {
  static const char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  char head[8] = {};
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (f == nullptr) return false;
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  return n == sizeof head && std::equal(head, head + 8, kSignature);
}

// An HDF5 container's structure against the index: the file opens (HDF5 checks its metadata's
// own checksums), each variable is a dataset of the indexed shape and element size whose data
// starts at the indexed offset. Returns the problems found.
std::vector<std::string> hdf5_structure_problems(const std::string& file, const OutputIndex& index) {
  std::vector<std::string> found;
#ifdef STRATA_HAVE_HDF5
  quiet_hdf5_errors();
  H5Id f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (f.get() < 0) return {"HDF5 cannot open it (its superblock or metadata is damaged)"};
  for (const IndexedVariable& v : index.variables) {
    H5Id d(H5Dopen2(f.get(), v.name.c_str(), H5P_DEFAULT));
    if (d.get() < 0) {
      found.push_back("dataset \"" + v.name + "\" cannot be opened");
      continue;
    }
    H5Id space(H5Dget_space(d.get())), type(H5Dget_type(d.get()));
    std::vector<hsize_t> dims(static_cast<size_t>(std::max(0, H5Sget_simple_extent_ndims(space.get()))));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    if (std::vector<uint64_t>(dims.begin(), dims.end()) != v.dims) {
      found.push_back("dataset \"" + v.name + "\" has another shape than the index's");
    } else if (H5Tget_size(type.get()) != v.element_size) {
      found.push_back("dataset \"" + v.name + "\" has " + std::to_string(H5Tget_size(type.get())) +
                      "-byte elements, the index says " + std::to_string(v.element_size));
    } else if (const haddr_t at = H5Dget_offset(d.get()); at != HADDR_UNDEF && at != v.file_offset) {
      found.push_back("dataset \"" + v.name + "\" starts at byte " + std::to_string(at) + ", the index says " +
                      std::to_string(v.file_offset));
    }
  }
#else
  (void)file;
  (void)index;
#endif
  return found;
}

nlohmann::json problem(const std::string& kind, const std::string& file, const std::string& message) {
  return {{"kind", kind}, {"file", file}, {"message", message}};
}

// Rank 0: everything but the checksums. Fills `report` and the files left to checksum.
void check_index(const std::string& path, bool complete, nlohmann::json& report, Checked& checked) {
  auto& problems = report["problems"];
  // A commit interrupted after its intent record was written has its data whole on disk: it is
  // the output now (the next read or write completes it). Its files are checked where they are:
  // under their final names once renamed, else still under their partial names.
  std::optional<OutputIndex> pending;
  try {
    pending = read_index_file(engine::intent_path(path));
  } catch (const Error&) {  // cut short while written: the commit never renamed a file
    if (complete) {
      engine::roll_forward(path);  // drops it
    } else {
      report["uncommitted"].push_back(engine::intent_path(path));
    }
  }
  if (pending && complete) {
    engine::roll_forward(path);
    report["completed_commit"] = true;
    pending.reset();
  }
  // A drain that has not reached its commit point: the output is the previous one (or none).
  try {
    const engine::DrainState d = engine::drain_state(path);
    if (d.pending) {
      report["drain"] = {{"record", engine::drain_record_path(path)},
                         {"output_is", "previous"},
                         {"partitions", d.parts},
                         {"copied", d.marked},
                         {"source", d.source},
                         {"can_finish", d.missing.empty()},
                         {"missing", d.missing}};
    }
  } catch (const Error& e) {
    report["drain"] = {{"record", engine::drain_record_path(path)},
                       {"output_is", "previous"},
                       {"can_finish", false},
                       {"missing", {e.what()}}};
  }
  std::vector<std::string> partials = engine::leftover_partials(path);
  std::optional<OutputIndex> index;
  try {
    index = pending ? pending : read_output_index(path);
  } catch (const Error& e) {
    problems.push_back(problem("index", index_path(path), e.what()));
    return;
  }
  auto in_commit = [&](const std::string& file) {
    const std::string partial = engine::partial_path(file);
    struct stat mine {};
    if (::stat(partial.c_str(), &mine) != 0) return file;  // renamed already
    std::erase_if(partials, [&](const std::string& p) {    // part of the commit, not an uncommitted write
      struct stat st {};
      return ::stat(p.c_str(), &st) == 0 && st.st_dev == mine.st_dev && st.st_ino == mine.st_ino;
    });
    return partial;
  };
  std::map<std::string, std::string> located;  // a committed file -> where it is now
  if (pending) {
    for (const IndexedFile& f : index->files) {
      const std::string file = engine::resolve_indexed_path(path, f.path);
      located[file] = in_commit(file);
    }
    report["interrupted_commit"] = engine::intent_path(path);
  }
  for (const std::string& p : partials) report["uncommitted"].push_back(p);
  if (!index) {
    problems.push_back(problem("index", index_path(path),
                               "no index (" + index_path(path) + ") and no run record (" + run_record_path(path) +
                                   "): written neither by the engine nor by strata run, so nothing can be checked"));
    return;
  }
  report["index"] = {{"path", index_path(path)},
                     {"files", index->files.size()},
                     {"bytes", index->bytes},
                     {"checksum_chunk", index->checksum_chunk},
                     {"checksum_ranges", index->checksum_ranges}};
  // An output written in place (strata_commit=in-place, an HDF5 container, a node-local target)
  // keeps no checksums: its sizes and structure are checked, its data cannot be.
  const bool in_place = index->checksum_chunk == 0 || index->in_place;
  const bool in_place_sums = index->in_place && index->checksum_chunk > 0;
  const uint64_t end = declared_end(*index);
  auto& checks = report["checked"];
  auto& unchecked = report["not_checked"];
  checks.push_back("every file listed is present");
  checks.push_back(in_place ? "each file holds the variables' bytes (sizes)" : "each file's size");
  if (index->checksum_chunk == 0) {
    unchecked.push_back(
        "the data: written in place by an engine that kept no checksums for it (strata keeps them since "
        "index field written_in_place; write it again to have them)");
  } else if (in_place_sums) {
    checks.push_back("the checksum of every range written");
    unchecked.push_back(
        "the bytes between the ranges written: written in place, they hold what the file held (a container's "
        "metadata, earlier bytes), which the index does not know");
  } else {
    checks.push_back("the checksum of every written range, and zeros in every range never written");
  }
  checked.chunk = index->checksum_chunk;
  for (const IndexedFile& f : index->files) {
    std::string file = engine::resolve_indexed_path(path, f.path);
    if (pending) file = located[file];
    nlohmann::json entry = {{"path", file}};
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
      problems.push_back(problem("missing", file, "listed in the index but missing"));
      entry["status"] = "missing";
    } else if (const uint64_t need = end > f.begin ? std::min(end, f.end) - f.begin : 0;
               !f.size && static_cast<uint64_t>(st.st_size) < need) {
      problems.push_back(problem("size", file,
                                 "short: " + std::to_string(st.st_size) +
                                     " bytes, the variables it holds "
                                     "end at byte " +
                                     std::to_string(need)));
      entry["status"] = "size";
      entry["bytes"] = static_cast<uint64_t>(st.st_size);
    } else if (f.size && static_cast<uint64_t>(st.st_size) != *f.size) {
      const uint64_t have = static_cast<uint64_t>(st.st_size);
      problems.push_back(problem("size", file,
                                 std::string(have < *f.size ? "short" : "long") + ": " + std::to_string(have) +
                                     " bytes, the index says " + std::to_string(*f.size)));
      entry["status"] = "size";
      entry["bytes"] = have;
    } else if (in_place_sums) {
      checked.paths.push_back(file);
      add_ranges(checked, f, true, true, static_cast<uint64_t>(st.st_size));
      entry["bytes"] = static_cast<uint64_t>(st.st_size);
      entry["status"] = "ok";
    } else if (checked.chunk > 0 && f.size && !f.ranges.empty() &&
               f.ranges.back().offset + f.ranges.back().length > *f.size) {
      problems.push_back(problem("index", file, "the index's checksum ranges reach past its size"));
      entry["status"] = "index";
    } else if (checked.chunk > 0 && f.size) {
      if (!index->checksum_ranges && f.checksums.size() != (*f.size + checked.chunk - 1) / checked.chunk) {
        problems.push_back(problem("index", file,
                                   "the index lists " + std::to_string(f.checksums.size()) + " checksums for " +
                                       std::to_string(*f.size) + " bytes"));
        entry["status"] = "index";
      } else {
        checked.paths.push_back(file);
        add_ranges(checked, f, index->checksum_ranges);
        entry["bytes"] = *f.size;
        entry["status"] = "ok";
      }
    } else {
      entry["bytes"] = static_cast<uint64_t>(st.st_size);
      entry["status"] = "sizes";  // present and long enough; no checksums to compare
    }
    // An output written in place whose data starts after some bytes is a container (the engine's
    // is HDF5): those bytes are its metadata, which must be HDF5's.
    uint64_t first = UINT64_MAX;
    for (const IndexedVariable& v : index->variables) first = std::min(first, v.file_offset);
    const bool container = in_place && f.begin == 0 && first != UINT64_MAX && first > 0;
    if (entry["status"] != "missing" && entry["status"] != "size" && container && !is_hdf5(file)) {
      problems.push_back(problem("structure", file,
                                 "the index places the data after " + std::to_string(first) +
                                     " bytes of container metadata, but the file does not begin "
                                     "with HDF5's signature (damaged, or not the engine's container)"));
      entry["status"] = "structure";
    } else if (entry["status"] != "missing" && entry["status"] != "size" && is_hdf5(file)) {
      for (const std::string& p : hdf5_structure_problems(file, *index)) {
        problems.push_back(problem("structure", file, p));
        entry["status"] = "structure";
      }
      const std::string what = "the HDF5 structure of " + file + " (its datasets' shapes, element sizes and offsets)";
      if (std::find(checks.begin(), checks.end(), what) == checks.end()) checks.push_back(what);
    }
    report["files"].push_back(entry);
  }
}

// Rank 0's files and ranges to checksum, for every rank.
void share(MPI_Comm comm, int rank, Checked& checked) {
  std::string text;
  std::vector<uint64_t> flat;
  if (rank == 0) {
    for (const std::string& p : checked.paths) text += p + '\n';
    flat.push_back(checked.chunk);
    for (const engine::FileRange& r : checked.ranges) flat.insert(flat.end(), {r.file, r.offset, r.length});
  }
  unsigned long long n[2] = {text.size(), flat.size()};
  MPI_Bcast(n, 2, MPI_UNSIGNED_LONG_LONG, 0, comm);
  text.resize(n[0]);
  flat.resize(n[1]);
  MPI_Bcast(text.data(), static_cast<int>(n[0]), MPI_CHAR, 0, comm);
  MPI_Bcast(flat.data(), static_cast<int>(n[1]), MPI_UINT64_T, 0, comm);
  if (rank == 0) return;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) checked.paths.push_back(line);
  checked.chunk = flat.empty() ? 0 : flat[0];
  for (size_t i = 1; i + 2 < flat.size(); i += 3) checked.ranges.push_back({flat[i], flat[i + 1], flat[i + 2]});
}

void print_report(const std::string& path, const nlohmann::json& report) {
  const auto& problems = report["problems"];
  if (problems.empty() && report.contains("run_record")) {
    std::printf("strata verify: %s: OK (%zu file(s), checked against the run record %s)\n", path.c_str(),
                report["files"].size(), report["run_record"].get<std::string>().c_str());
    for (const auto& c : report["checked"]) std::printf("  checked: %s\n", c.get<std::string>().c_str());
  } else if (problems.empty()) {
    const auto& ix = report["index"];
    if (ix["checksum_chunk"].get<uint64_t>() > 0) {
      std::printf("strata verify: %s: OK (%zu file(s), %s declared, checksums of %s chunks match)\n", path.c_str(),
                  ix["files"].get<size_t>(), format_size(ix["bytes"].get<uint64_t>()).c_str(),
                  format_size(ix["checksum_chunk"].get<uint64_t>()).c_str());
    } else {
      std::printf("strata verify: %s: OK (%zu file(s), %s declared; written in place: sizes%s checked)\n", path.c_str(),
                  ix["files"].get<size_t>(), format_size(ix["bytes"].get<uint64_t>()).c_str(),
                  report["checked"].size() > 2 ? " and HDF5 structure" : "");
    }
  } else {
    std::printf("strata verify: %s: %zu problem(s)\n", path.c_str(), problems.size());
    for (const auto& p : problems) {
      std::printf("  %-18s %s: %s\n", p["kind"].get<std::string>().c_str(), p["file"].get<std::string>().c_str(),
                  p["message"].get<std::string>().c_str());
    }
  }
  for (const auto& u : report["not_checked"]) std::printf("  not checked: %s\n", u.get<std::string>().c_str());
  if (report.value("completed_commit", false)) std::printf("  note: an interrupted commit was completed first\n");
  if (report.contains("interrupted_commit")) {
    std::printf(
        "  note: a commit was interrupted after its data was written (%s): the output checked above is\n"
        "        the one it commits; the next read or write, or `strata verify --complete`, finishes it\n",
        report["interrupted_commit"].get<std::string>().c_str());
  }
  if (report.contains("drain")) {
    const auto& d = report["drain"];
    std::printf("  note: a drain to this output did not finish (%s): the output is the previous one%s\n",
                d["record"].get<std::string>().c_str(),
                report["index"].is_null() ? " (there is none yet)" : ", checked above");
    if (d.contains("partitions")) {
      std::printf("        %zu of %zu partition(s) copied; ", d["copied"].get<size_t>(), d["partitions"].get<size_t>());
    } else {
      std::printf("        ");
    }
    if (d["can_finish"].get<bool>()) {
      std::printf("its node-local copy can finish it: strata drain %s\n", report["path"].get<std::string>().c_str());
    } else {
      std::printf("its node-local copy cannot finish it:");
      for (const auto& m : d["missing"]) std::printf(" %s;", m.get<std::string>().c_str());
      std::printf(" write the output again\n");
    }
  }
  for (const auto& u : report["uncommitted"]) {
    std::printf("  note: uncommitted write %s (a write phase did not finish; the committed output is unaffected)\n",
                u.get<std::string>().c_str());
  }
}

// ---- an output without an engine index, checked against the run record beside it -------------

// The run record for PATH: PATH.strata-run.json, or the record of an output PATH is one file of (a
// file per process, per node, a checkpoint: PATH with suffixes dropped), listing PATH. "" if none.
std::string find_run_record(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(run_record_path(path), ec)) return run_record_path(path);
  const fs::path p(path);
  const std::string name = p.filename().string();
  for (size_t dot = name.rfind('.'); dot != std::string::npos && dot > 0; dot = name.rfind('.', dot - 1)) {
    const fs::path candidate = p.parent_path() / name.substr(0, dot);
    const std::string record = run_record_path(candidate.string());
    if (!fs::exists(record, ec)) continue;
    try {
      std::ifstream in(record);
      const nlohmann::json rec = nlohmann::json::parse(in);
      for (const auto& f : rec.at("files")) {
        if (f.at("path").get<std::string>() == name) return record;
      }
    } catch (const std::exception&) {
      return record;  // a damaged record is reported where it is read
    }
    if (dot == 0) break;
  }
  return "";
}

// The run record's output: beside the record, wherever the run was started from.
std::string recorded_output(const std::string& record) {
  return record.substr(0, record.size() - std::string(".strata-run.json").size());
}

// Rank 0: the record parses; every file it lists is there at its size. Returns whether the
// values can be read back (no file missing or of another size).
bool check_run_record(const std::string& record_path, const nlohmann::json& rec, nlohmann::json& report) {
  auto& problems = report["problems"];
  auto& checks = report["checked"];
  const std::filesystem::path folder = std::filesystem::path(record_path).parent_path();
  checks.push_back("every file the run wrote is present, at the size it wrote");
  bool whole = true;
  for (const auto& f : rec.at("files")) {
    const std::string file = (folder / f.at("path").get<std::string>()).string();
    const uint64_t bytes = f.at("bytes").get<uint64_t>();
    nlohmann::json entry = {{"path", file}};
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
      problems.push_back(problem("missing", file, "written by the run (" + record_path + ") but missing"));
      entry["status"] = "missing";
      whole = false;
    } else if (static_cast<uint64_t>(st.st_size) != bytes) {
      const uint64_t have = static_cast<uint64_t>(st.st_size);
      problems.push_back(problem("size", file,
                                 std::string(have < bytes ? "short (truncated)" : "long") + ": " +
                                     std::to_string(have) + " bytes, the run wrote " + std::to_string(bytes)));
      entry["status"] = "size";
      entry["bytes"] = have;
      whole = false;
    } else {
      entry["status"] = "ok";
      entry["bytes"] = bytes;
    }
    report["files"].push_back(entry);
  }
  return whole;
}

// Every rank: the output read back as `strata run ... --read --verify` would, by the ranks here (a
// decomposition kernel: each an even share of what the writers wrote; an application kernel: only
// at the writers' rank count). Problems into `report` on rank 0.
void check_run_values(MPI_Comm comm, const std::string& record_path, const nlohmann::json& rec, bool whole,
                      nlohmann::json& report) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::string output = recorded_output(record_path);
  const uint64_t writers = rec.at("ranks").get<uint64_t>();
  const bool application = rec.value("kernel_kind", "") == "application";
  const std::string kernel = rec.value("kernel", "");
  const std::string backend = rec.value("backend", "");
  const bool hdf5 = backend == "hdf5";
  const bool netcdf = backend == "pnetcdf";
  auto& checks = report["checked"];
  auto& unchecked = report["not_checked"];
  if (!whole) {
    unchecked.push_back("the values: a file is missing or of another size than the run wrote (above)");
    return;
  }
  RunOptions o;
  std::optional<Error> failed = caught([&] { o = RunOptions::parse(rec.at("args").get<std::vector<std::string>>()); });
  // Files of their own (an application kernel's, files per process or per node) are read back by
  // as many ranks as wrote them; a shared file by any number, each an even share.
  const bool own_files = application || (!failed && o.layout() != Layout::shared);
  if (!failed && own_files && writers != static_cast<uint64_t>(size)) {
    unchecked.push_back(
        "the values: " +
        (application ? kernel + " writes its own files, which" : std::string("files per process or per node, which")) +
        " only as many ranks as wrote them read back: `mpirun -np " + std::to_string(writers) + " strata verify " +
        report["path"].get<std::string>() + "` checks them");
    return;
  }
  if (!failed)
    failed = caught([&] {
      o.output = output;
      o.write = false;
      o.read = true;
      o.verify = true;
      o.writer_ranks = own_files ? 0 : writers;
      o.repetitions = 1;
      o.json.clear();
      o.quiet = true;
      o.reorder_tasks = 0;
      o.reorder_by_node = false;
      o.drop_caches = false;
      o.io.fsync = false;
      o.io.fsync_per_write = false;
      o.io.direct = false;
      o.io.deadline.clear();
    });
  std::optional<RunRecord> read;
  std::optional<Error> error = failed;
  if (!failed) {
    // The run's relative paths (--trace, --maps) start where it ran; the output is where it is now.
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path here = fs::current_path(ec);
    o.output = fs::absolute(o.output, ec).string();
    const std::string ran_in = rec.value("cwd", "");
    const bool move = !ran_in.empty() && fs::is_directory(ran_in, ec) && ::chdir(ran_in.c_str()) == 0;
    // Files per node of virtual nodes: read back by the ranks of the nodes that wrote them.
    std::optional<std::string> nodes_were[2];
    const char* const kNodeVars[2] = {"STRATA_NODE_MAP", "STRATA_RANKS_PER_NODE"};
    const nlohmann::json map = rec.value("node_map", nlohmann::json::object());
    const bool virtual_nodes = own_files && map.value("virtual", false) && map.contains("node_of_rank");
    if (virtual_nodes) {
      std::string ids;
      for (const auto& n : map["node_of_rank"]) ids += (ids.empty() ? "" : ",") + n.dump();
      for (int k = 0; k < 2; ++k) {
        if (const char* v = std::getenv(kNodeVars[k]); v != nullptr) nodes_were[k] = v;
      }
      ::unsetenv(kNodeVars[1]);
      ::setenv(kNodeVars[0], ids.c_str(), 1);
    }
    try {
      read = run(o, comm);
    } catch (const Error& e) {  // thrown on every rank alike
      error = e;
    }
    if (virtual_nodes) {
      for (int k = 0; k < 2; ++k) {
        if (nodes_were[k]) {
          ::setenv(kNodeVars[k], nodes_were[k]->c_str(), 1);
        } else {
          ::unsetenv(kNodeVars[k]);
        }
      }
    }
    if (move && ::chdir(here.c_str()) != 0) error = Error(ErrorKind::runtime, "cannot return to " + here.string());
  }
  if (rank != 0) return;
  auto& problems = report["problems"];
  if (error) {
    problems.push_back(problem(hdf5 || netcdf ? "structure" : "read", output, error->what()));
    return;
  }
  if (hdf5) checks.push_back("its HDF5 structure: HDF5 opens it and finds each dataset of the kernel by name");
  if (netcdf) checks.push_back("its netCDF structure: its header parses and holds each variable of the kernel");
  if (read->failure) {
    problems.push_back(problem("data", output, "a value read back differs from the kernel's: " + *read->failure));
    return;
  }
  checks.push_back("every value written, read back and compared with the kernel's generator (" + kernel +
                   (application ? "" : " through " + backend) + ", seed " +
                   read->header["params"].value("seed", nlohmann::json(1)).dump() + ")");
  if (hdf5) {
    unchecked.push_back("HDF5's metadata beyond what opening the file and its datasets reads (attributes, free space)");
  } else if (netcdf) {
    unchecked.push_back("the netCDF header beyond the variables' definitions (attributes)");
  } else if (!application) {
    unchecked.push_back("bytes no element of the kernel's decomposition covers, where it has holes (a map's)");
  }
}

// Rank 0 says the verdict (JSON or the table) and every rank returns its status: 0 when nothing
// is wrong.
int conclude(MPI_Comm comm, int rank, const std::string& path, nlohmann::json& report, bool json,
             bool uncommitted_write) {
  int status = 0;
  if (rank == 0) {
    report["ok"] = report["problems"].empty();
    report["uncommitted_write"] = uncommitted_write;
    if (json) {
      std::printf("%s\n", report.dump(2).c_str());
    } else {
      print_report(path, report);
    }
    status = report["problems"].empty() ? 0 : static_cast<int>(ErrorKind::runtime);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  return status;
}

}  // namespace

int verify_command(const std::vector<std::string>& args, const Environment&) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string path;
  bool json = false, complete = false;
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      if (rank == 0) std::fputs(kHelp, stdout);
      return 0;
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--complete") {
      complete = true;
    } else if (!a.empty() && a[0] == '-') {
      throw_usage("verify: unknown option \"" + a + "\"" + did_you_mean(a, {"--json", "--complete", "--help"}) +
                  " (see strata verify --help)");
    } else if (path.empty()) {
      path = a;
    } else {
      throw_usage("verify: one PATH only (see strata verify --help)");
    }
  }
  if (path.empty()) throw_usage("verify: which output? usage: strata verify PATH [--json]");
  nlohmann::json report = {{"path", path},
                           {"problems", nlohmann::json::array()},
                           {"files", nlohmann::json::array()},
                           {"uncommitted", nlohmann::json::array()},
                           {"index", nullptr},
                           {"checked", nlohmann::json::array()},
                           {"not_checked", nlohmann::json::array()}};
  // No engine index (every backend but strata): the run record `strata run` left beside the output.
  std::string record_path;
  {
    std::error_code ec;
    if (!std::filesystem::exists(index_path(path), ec) && !std::filesystem::exists(engine::intent_path(path), ec))
      record_path = find_run_record(path);
  }
  if (!record_path.empty()) {
    report["run_record"] = record_path;
    nlohmann::json rec;
    int whole = 0;
    const std::optional<Error> bad = caught([&] {
      std::ifstream in(record_path);
      rec = nlohmann::json::parse(in);
      (void)rec.at("args"), (void)rec.at("ranks"), (void)rec.at("files");
    });
    if (bad) {
      if (rank == 0)
        report["problems"].push_back(problem("record", record_path, std::string("unreadable: ") + bad->what()));
    } else {
      collectively(comm, [&] {
        if (rank == 0) whole = check_run_record(record_path, rec, report) ? 1 : 0;
      });
      MPI_Bcast(&whole, 1, MPI_INT, 0, comm);
      check_run_values(comm, record_path, rec, whole != 0, report);
    }
    return conclude(comm, rank, path, report, json, false);
  }
  Checked checked;
  collectively(comm, [&] {
    if (rank == 0) check_index(path, complete, report, checked);
  });
  share(comm, rank, checked);
  const auto sums = engine::hash_ranges(comm, checked.paths, checked.ranges);
  if (rank == 0) {
    for (size_t i = 0; i < checked.ranges.size(); ++i) {
      if (sums[i] == checked.expected[i]) continue;
      const engine::FileRange& r = checked.ranges[i];
      const std::string& name = checked.paths[r.file];
      auto p = problem(
          "checksum", name,
          "bytes [" + std::to_string(r.offset) + ", " + std::to_string(r.offset + r.length) +
              (checked.gap[i] ? ") were never written but do not hold zeros" : ") differ from the index's checksum"));
      p["begin"] = r.offset;
      p["end"] = r.offset + r.length;
      report["problems"].push_back(p);
      for (auto& e : report["files"]) {
        if (e["path"] == name) e["status"] = "checksum";
      }
    }
  }
  return conclude(comm, rank, path, report, json, !report["uncommitted"].empty());
}

}  // namespace strata::cli
