// The subcommands of the strata program. Each returns the process exit status; errors are
// thrown as strata::Error after collective agreement, so every rank exits the same way.
#pragma once

#include <string>
#include <vector>

namespace strata::cli {

struct Environment {
  std::vector<std::string> mpi_workarounds;  // settings applied before MPI_Init
};

int run_command(const std::vector<std::string>& args, const Environment& env);
int info_command(const std::vector<std::string>& args, const Environment& env);
int advise_command(const std::vector<std::string>& args, const Environment& env);

}  // namespace strata::cli
