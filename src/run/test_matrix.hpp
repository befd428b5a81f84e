// The MPI test matrix of this build: every kernel's declared tests (kernels/kernel_test.hpp)
// crossed with the backend table's test variants (BackendRow::test_variants). `strata info
// --tests` prints it, one test a line; tests/mpi/CMakeLists.txt registers each line with ctest, so
// a kernel or a backend is tested by its own declaration and the test list names neither.
#pragma once

#include <string>
#include <vector>

namespace strata {

struct TestRow {
  std::string name;  // the ctest name
  int ranks = 1;
  // run: `strata ARGS` under the launcher; romio: the same with the MPI's ROMIO flags;
  // identical: tests/mpi/identical_outputs.sh with ARGS = LAYOUT KERNEL KERNEL-OPTIONS.
  std::string launch = "run";
  std::vector<std::string> env;   // NAME=VALUE, a value's list separated by commas
  std::vector<std::string> args;  // "{OUT}" stands for the tests' output folder, "{DATA}" for tests/data
};

std::vector<TestRow> test_matrix();

// One test a line, tab-separated: NAME, RANKS, LAUNCH, ENV ("-" or NAME=VALUE separated by
// spaces) and ARGS separated by spaces. No field holds a tab, a space in an argument or a ';'.
std::string test_matrix_lines(const std::vector<TestRow>& rows);

}  // namespace strata
