// The subcommands of the strata program. Each returns the process exit status; errors are
// thrown as strata::Error after collective agreement, so every rank exits the same way.
#pragma once

#include <mpi.h>

#include <string>

#include <vector>
#include "common/process_memory.hpp"
#include "run/run_options.hpp"
#include "run/run_record.hpp"

namespace strata::cli {

struct Environment {
  std::vector<std::string> mpi_workarounds;  // settings applied before MPI_Init
  AllocatorSettings allocator;               // set first thing in main
};

int run_command(const std::vector<std::string>& args, const Environment& env);
int info_command(const std::vector<std::string>& args, const Environment& env);
int advise_command(const std::vector<std::string>& args, const Environment& env);
int plan_command(const std::vector<std::string>& args, const Environment& env);
int cost_command(const std::vector<std::string>& args, const Environment& env);
// strata info --tiers (collective over comm).
int tiers_info(MPI_Comm comm, const std::string& json_path);
// strata info --probe [DIR]: measures the engine's I/O figures and stores them in the machine cache.
int probe_info(MPI_Comm comm, const std::string& dir, const std::string& json_path);
int decomp_command(const std::vector<std::string>& args, const Environment& env);
int verify_command(const std::vector<std::string>& args, const Environment& env);
int drain_command(const std::vector<std::string>& args, const Environment& env);
int replay_command(const std::vector<std::string>& args, const Environment& env);
// strata exec [options] -- PROGRAM ARGS...: before MPI_Init; execs PROGRAM with the drop-in
// layer preloaded (returns only on an error).
int exec_command(int argc, char** argv);

// The run record `strata run` leaves beside an output it wrote without an engine index (every
// backend but strata): OUTPUT.strata-run.json, with the run's arguments, its rank count and each
// file's size, what `strata verify OUTPUT` checks the output against (verify_command.cpp).
std::string run_record_path(const std::string& output);
// Rank 0, after strata::run: writes that record for a successful write of `args` (the arguments
// of strata run); nothing for the engine (its index is its record), node-local files or a read.
void write_run_record_beside(const std::vector<std::string>& args, const RunOptions& o, const RunRecord& record);

// A record file a command will write at its end (--json): its folder exists and is writable, it is
// not a folder. Local (run it inside `collectively`, before the work); a usage or runtime Error.
void check_record_path(const std::string& path, const std::string& what);

}  // namespace strata::cli
