// The MPI-IO hints really in effect for an open file.
//
// Open MPI 4.1's MPI_File_get_info echoes the info the user passed (for OMPIO and ROMIO
// alike), not what the component uses: ask ROMIO for cb_nodes=4 on one host and get_info says
// 4 while ROMIO, bound by cb_config_list=*:1, uses 1. Strata therefore records, besides
// get_info, what the component itself reports:
//  - ROMIO prints the hints it settled on when ROMIO_PRINT_HINTS is set; Strata sets it around
//    its own opens and captures that text from stdout;
//  - OMPIO's defaults are MCA parameters, read through the MPI tool interface (MPI_T).
#pragma once

#include <cstdio>
#include <string>

#include "common/hints.hpp"

namespace strata {

// Around an MPI-IO open: when `active` (component ROMIO), sets ROMIO_PRINT_HINTS and sends
// this process's stdout to a temporary file until finish(), which restores stdout, unsets the
// variable and returns the hints ROMIO printed (empty when it printed none).
class RomioHintCapture {
 public:
  explicit RomioHintCapture(bool active);
  ~RomioHintCapture();
  RomioHintCapture(const RomioHintCapture&) = delete;
  RomioHintCapture& operator=(const RomioHintCapture&) = delete;
  Hints finish();

 private:
  bool active_ = false;
  int saved_stdout_ = -1;
  std::FILE* sink_ = nullptr;
};

// Parses ROMIO's "key = NAME value = VALUE" lines; other lines pass through to stdout.
Hints parse_romio_hint_print(const std::string& text, std::string* other_output);

// OMPIO's collective-I/O settings from MCA parameters, as "ompio:<parameter>": fcoll,
// io_ompio_bytes_per_agg, io_ompio_num_aggregators, data sieving, fs_ufs_lock_algorithm.
// Scans the MPI_T control variables (slow: call it outside timed regions).
Hints ompio_settings();

// ROMIO's printed hints when there are some, otherwise get_info's keys. Under OMPIO, callers add
// ompio_settings() for what the info keys leave to the MCA defaults.
Hints effective_hints(const Hints& from_get_info, const Hints& romio_printed);

// The hints of `requested` that MPI-IO component `component` did not take: under ROMIO, those
// missing from what it reports in effect (it drops keys it does not know); under OMPIO, whose
// get_info echoes every key, those outside the few it reads (cb_buffer_size, cb_nodes,
// collective_buffering, striping_factor, striping_unit: MPI-IO-NOTES.md).
Hints hints_not_recognised(const Hints& requested, const Hints& in_effect, const std::string& component);
// `hints` without the keys of `dropped`.
Hints without_keys(const Hints& hints, const Hints& dropped);

}  // namespace strata
