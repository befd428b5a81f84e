#include "help_table.hpp"

#include <algorithm>

#include "kernels/app_kernel.hpp"
#include "kernels/kernel.hpp"

namespace strata::cli {

std::string help_table(const std::vector<std::pair<std::string, std::string>>& rows) {
  size_t column = 0;
  for (const auto& [name, summary] : rows) column = std::max(column, name.size() + 2);
  std::string text;
  for (const auto& [name, summary] : rows)
    text += "  " + name + std::string(column - name.size(), ' ') + summary + "\n";
  return text;
}

std::string kernels_help_table(bool with_application_kernels) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Kernel* k : kernel_list()) rows.emplace_back(k->name(), k->summary());
  if (with_application_kernels) {
    for (const AppKernel* k : app_kernel_list()) rows.emplace_back(k->name(), k->summary());
  }
  return help_table(rows);
}

}  // namespace strata::cli
