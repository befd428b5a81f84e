// Earlier jobs' measured / priced ratios (engine/plan/write_calibration.hpp), kept in a small
// file so that a launch's first writes start from what the last launches of the same writes
// measured on the same figures. Rank 0 reads it when the engine starts (the text is broadcast:
// every rank seeds the same ratios) and merges this job's into it when the engine ends.
//
// The file: STRATA_WRITE_HISTORY names it ("0" or "off": none kept); otherwise
// writes-HOST.json beside the machine cache (arch/machine.hpp: machine_cache_path()). A record
// belongs to one set of figures (figures_identity(): a probe again starts afresh), one plan's key
// and one kind of file; records older than kMaxAge_s are ignored, and the file keeps the
// kMaxRecords newest. A file that cannot be read or written costs only the seeding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/io_figures.hpp"
#include "engine/plan/write_calibration.hpp"

namespace strata::engine {

constexpr int64_t kMaxAge_s = 24 * 3600;  // a host's load and memory change within the day
constexpr size_t kMaxRecords = 256;

// The file, or empty when none is kept.
std::string write_history_path();
// The file's text (empty when there is none or it cannot be read).
std::string read_write_history(const std::string& path);
// A digest of the figures the model prices writes by.
uint64_t figures_identity(const IoFigures& f);
// The records of `text` for these figures, dated within kMaxAge_s of `now`. Text that is not a
// history (empty, damaged, another version): none.
std::vector<WriteRecord> parse_write_history(const std::string& text, uint64_t figures, int64_t now);
// The file's records with `learned` (for `figures`) in place of the ones they update: the
// kMaxRecords newest, none older than kMaxAge_s, written aside and renamed. False when it could
// not be written.
bool store_write_history(const std::string& path, uint64_t figures, const std::vector<WriteRecord>& learned,
                         int64_t now);

}  // namespace strata::engine
