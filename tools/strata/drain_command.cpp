// strata drain OUTPUT: finishes a burst-buffer drain (hint strata_drain, engine/drain_job.hpp)
// that a crash interrupted: a commit past its commit point is rolled forward; otherwise every
// partition is copied again from its node-local copy, synced and committed. Rank 0 works (where
// the node-local files are visible); the other ranks wait.
#include <mpi.h>

#include <cstdio>

#include "commands.hpp"
#include "common/error.hpp"
#include "common/suggest.hpp"
#include "engine/drain_job.hpp"

namespace strata::cli {

namespace {

const char* kHelp =
    "usage: strata drain OUTPUT\n"
    "\n"
    "Finishes the drain of OUTPUT that a write with hint strata_drain started and a crash interrupted\n"
    "(OUTPUT.strata-drain.json is there; `strata verify OUTPUT` says so). The previous output stays\n"
    "whole until the drain commits. Each partition is copied again from its node-local file (the\n"
    "drain record lists them; run where they are), synced, and committed as any write is. A commit\n"
    "that had passed its commit point is completed instead. Exit status 0 when OUTPUT is drained\n"
    "or there was nothing to finish, 1 when the node-local copy cannot finish it.\n";

}  // namespace

int drain_command(const std::vector<std::string>& args, const Environment&) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string path;
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      if (rank == 0) std::fputs(kHelp, stdout);
      return 0;
    }
    if (!a.empty() && a[0] == '-') {
      throw_usage("drain: unknown option \"" + a + "\"" + did_you_mean(a, {"--help"}) + " (see strata drain --help)");
    }
    if (!path.empty()) throw_usage("drain: one OUTPUT only (see strata drain --help)");
    path = a;
  }
  if (path.empty()) throw_usage("drain: which output? usage: strata drain OUTPUT");
  bool finished = false;
  collectively(comm, [&] {
    if (rank == 0) finished = engine::finish_drain(path);
  });
  if (rank == 0) {
    std::printf(finished ? "strata drain: %s: drained and committed\n" : "strata drain: %s: no drain to finish\n",
                path.c_str());
  }
  return 0;
}

}  // namespace strata::cli
