// The MPI tests a kernel declares: its test arguments, rank counts and the backend variants each
// runs on. The run layer crosses them with the backend table's test variants
// (src/run/test_matrix.hpp) and `strata info --tests` prints the result, one test a line, which
// tests/mpi/CMakeLists.txt registers with ctest: a new kernel is tested by declaring its tests
// here, in its own file, and a new backend by its row.
#pragma once

#include <string>
#include <vector>

namespace strata {

// Which of the backends' test variants (BackendRow::test_variants) a test runs on.
struct TestBackends {
  bool backend = true;                            // false: the kernel's own I/O (application kernels)
  std::vector<std::string> layouts = {"shared"};  // the variants that write these layouts (layout_name)
  bool romio = false;                             // also the variants launched under ROMIO
  bool collective_only = false;                   // only backends whose transfers are collective
  bool with_options = false;                      // also the variants that add backend options
  std::string option = {};                        // only backends that take this run option ("independent")
};

// How a test checks what it wrote.
enum class TestCheck {
  run,        // strata run ... --write --read --verify (every backend variant's own read back)
  identical,  // tests/mpi/identical_outputs.sh: byte-identical to the serial reference writer
};

// One test, or one per backend variant and rank count. In `name`, "{BACKEND}" stands for the
// variant's name and "{LAYOUT}" for the layout (shared, fpp); ".np<ranks>" follows, unless "{NP}"
// places the rank count. In `args`,
// "{NP}" stands for the rank count and "{DATA}" for the folder tests/data.
struct KernelTest {
  std::string name;
  std::vector<std::string> args;  // the kernel's options (the test adds --backend, --write, ...)
  std::vector<int> ranks;
  TestBackends backends = {};
  std::vector<std::string> env = {};  // extra environment, NAME=VALUE
  std::string output_suffix = ".out";
  TestCheck check = TestCheck::run;
};

// The tests every decomposition kernel of the matrix has: "matrix.<kernel>.<variant>" on every
// backend variant of a shared file or a file per process (and ROMIO) at 1, 2, 3, 4 and 8 ranks,
// and "independent.<kernel>.<backend>" with --independent at 1 and 4 ranks on the backends that
// take it. `args` include the seed.
std::vector<KernelTest> matrix_tests(const std::string& kernel, const std::vector<std::string>& args);
// "identical.<layout>.<kernel>.np<ranks>.<args as an identifier>": one layout, many ways of
// writing it (identical_outputs.sh), in a shared file and in files per process.
KernelTest identical_test(const std::string& kernel, int ranks, const std::vector<std::string>& args);

}  // namespace strata
