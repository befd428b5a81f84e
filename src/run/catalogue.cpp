#include "run/catalogue.hpp"

#include "backends/backend.hpp"
#include "kernels/app_kernel.hpp"
#include "kernels/kernel.hpp"
#include "run/run_options.hpp"
#include "strata/hints.hpp"

namespace strata {

namespace {

nlohmann::json option_json(const std::string& name, const char* metavar, const std::string& help,
                           const std::string& default_value) {
  nlohmann::json j = {{"name", name}, {"flag", metavar == nullptr}, {"help", help}};
  if (metavar != nullptr) j["metavar"] = metavar;
  if (!default_value.empty()) j["default"] = default_value;
  return j;
}

nlohmann::json options_json(const OptionSet& o) {
  nlohmann::json out = nlohmann::json::array();
  for (const OptionSet::Spec& s : o.specs()) {
    if (!s.is_section)
      out.push_back(option_json(s.name, s.is_flag ? nullptr : s.metavar.c_str(), s.help, s.default_value));
  }
  return out;
}

nlohmann::json kernels_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const Kernel* k : kernel_list()) {
    OptionSet o;
    k->add_options(o);
    out.push_back({{"name", k->name()},
                   {"summary", k->summary()},
                   {"kind", kernel_kind_name(KernelKind::decomposition)},
                   {"selector", "backend"},
                   {"options", options_json(o)}});
  }
  for (const AppKernel* k : app_kernel_list()) {
    OptionSet o;
    k->add_options(o);
    nlohmann::json modes = nlohmann::json::array();
    for (const auto& [name, help] : k->modes()) modes.push_back({{"name", name}, {"help", help}});
    out.push_back({{"name", k->name()},
                   {"summary", k->summary()},
                   {"kind", kernel_kind_name(KernelKind::application)},
                   {"selector", k->mode_option()},
                   {"modes", modes},
                   {"default_output", k->default_output()},
                   {"options", options_json(o)}});
  }
  return out;
}

nlohmann::json backends_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const BackendRow& b : backend_table()) {
    nlohmann::json layouts = nlohmann::json::array();
    for (Layout l : b.can.layouts) layouts.push_back(layout_name(l));
    nlohmann::json variants = nlohmann::json::array();
    for (const BackendTestVariant& v : b.test_variants) {
      variants.push_back(
          {{"name", v.name}, {"layout", layout_name(v.layout)}, {"romio", v.romio}, {"options", v.options}});
    }
    out.push_back({{"name", b.name},
                   {"summary", b.summary},
                   {"file_extension", b.can.file_extension},
                   {"layouts", layouts},
                   {"mpi_io", b.can.mpi_io},
                   {"call_per_variable", b.can.call_per_variable},
                   {"sizes_own_buffers", b.can.sizes_own_buffers},
                   {"raw_file", b.can.raw_file},
                   {"collective", b.can.collective},
                   {"test_variants", variants},
                   {"options", b.can.options},
                   {"hints", hint_family_name(b.can.hints)}});
  }
  return out;
}

}  // namespace

nlohmann::json run_options_json(const std::vector<RunOptionSpec>& specs) {
  nlohmann::json out = nlohmann::json::array();
  for (const RunOptionSpec& s : specs) {
    nlohmann::json j = option_json(s.name, s.metavar, s.help, s.default_value);
    nlohmann::json kinds = nlohmann::json::array();
    if (s.for_decomposition) kinds.push_back(kernel_kind_name(KernelKind::decomposition));
    if (s.for_application) kinds.push_back(kernel_kind_name(KernelKind::application));
    j["kinds"] = kinds;
    if (s.campaign_switch) {  // the harness makes it a [campaign] key (python/strata/catalogue.py)
      const CampaignSwitch& c = *s.campaign_switch;
      j["campaign_switch"] = {{"report_on", c.report_on},
                              {"report_off", c.report_off},
                              {"label_on", c.label_on},
                              {"label_off", c.label_off}};
    }
    out.push_back(j);
  }
  return out;
}

namespace {

nlohmann::json layouts_json() {
  return nlohmann::json::array({
      {{"name", layout_name(Layout::shared)},
       {"option", nullptr},
       {"summary", "every rank writes one shared file (N:1)"}},
      {{"name", layout_name(Layout::file_per_process)},
       {"option", "file-per-process"},
       {"summary", "each rank its own file PATH.<rank> (N:N)"}},
      {{"name", layout_name(Layout::file_per_node)},
       {"option", "file-per-node"},
       {"summary", "the ranks of a node share a file PATH.node<node> (N:M)"}},
  });
}

nlohmann::json hints_json() {
  nlohmann::json engine = nlohmann::json::array();
  for (const HintDescription& h : engine_hints()) {
    engine.push_back({{"name", h.name}, {"values", h.values}, {"meaning", h.meaning}});
  }
  return {
      {"families",
       {{hint_family_name(HintFamily::none), "the backend takes no hints"},
        {hint_family_name(HintFamily::mpi_io),
         "passed to MPI_File_open: the MPI library's keys (strata info lists "
         "the defaults, strata advise the advised ones)"},
        {hint_family_name(HintFamily::engine), "the engine's, listed under \"engine\""}}},
      {"engine", engine},
  };
}

}  // namespace

nlohmann::json catalogue() {
  return {
      {"strata_version", STRATA_VERSION}, {"kernels", kernels_json()}, {"run_options", run_options_json()},
      {"backends", backends_json()},      {"layouts", layouts_json()}, {"hints", hints_json()},
  };
}

}  // namespace strata
