// Help text tables shared by the commands: names in a column as wide as the longest, then a summary.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace strata::cli {

// "  name   summary\n" per row, the summaries aligned two columns past the longest name.
std::string help_table(const std::vector<std::pair<std::string, std::string>>& rows);
// The table of every kernel (and, when asked, the application kernels after them).
std::string kernels_help_table(bool with_application_kernels);

}  // namespace strata::cli
