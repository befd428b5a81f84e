#include "kernels/kernel_test.hpp"

#include <cctype>

namespace strata {

std::vector<KernelTest> matrix_tests(const std::string& kernel, const std::vector<std::string>& args) {
  std::vector<std::string> independent = args;
  independent.push_back("--independent");
  return {
      {.name = "matrix." + kernel + ".{BACKEND}",
       .args = args,
       .ranks = {1, 2, 3, 4, 8},
       .backends = {.layouts = {"shared", "file-per-process"}, .romio = true}},
      {.name = "independent." + kernel + ".{BACKEND}",
       .args = independent,
       .ranks = {1, 4},
       .backends = {.option = "independent"}},
  };
}

KernelTest identical_test(const std::string& kernel, int ranks, const std::vector<std::string>& args) {
  // The arguments as a C identifier (CMake's MAKE_C_IDENTIFIER, which named these tests before).
  std::string id;
  for (const std::string& a : args) {
    id += (id.empty() ? "" : " ") + a;
  }
  for (char& c : id) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
  }
  if (!id.empty() && std::isdigit(static_cast<unsigned char>(id[0])) != 0) id = "_" + id;
  return {.name = "identical.{LAYOUT}." + kernel + ".np{NP}." + id,
          .args = args,
          .ranks = {ranks},
          .backends = {.layouts = {"shared", "file-per-process"}},
          .check = TestCheck::identical};
}

}  // namespace strata
