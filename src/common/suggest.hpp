// "Did you mean": the nearest of a list of valid names to a misspelt one, for error messages.
#pragma once

#include <string>
#include <vector>

namespace strata {

// The valid name closest to `given` (case-insensitive edit distance, or a name that starts with
// or contains it), when it is close enough to be what was meant; "" otherwise.
std::string nearest_name(const std::string& given, const std::vector<std::string>& valid);

// " (did you mean \"NAME\"?)" for the nearest name, formatted with `prefix` (e.g. "--"); "" when
// none is close.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& valid,
                         const std::string& prefix = "");

}  // namespace strata
