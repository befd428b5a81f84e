// An Advice for people (a table with reasons) and for machines (JSON).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "advise/advice.hpp"

namespace strata::advise {

// The inputs as the rules saw them.
nlohmann::json input_json(const AdviceInput& in);
// stripe_count, stripe_size_bytes, cb_buffer_size_bytes, cb_nodes, hints (key -> value, ROMIO
// and OMPIO keys together), romio_hints, ompio_hints, ompio_mca, cray_hints, lfs_setstripe,
// mpich_mpiio_hints, layout, reasons [{rule, advice, source}], input.
nlohmann::json to_json(const Advice& a, const AdviceInput& in);
// The human table: inputs, settings, the forms to paste, and one reason per rule.
std::string to_table(const Advice& a, const AdviceInput& in);

}  // namespace strata::advise
