#include "run/test_matrix.hpp"

#include <algorithm>

#include "backends/backend.hpp"
#include "kernels/app_kernel.hpp"
#include "kernels/kernel.hpp"

namespace strata {

namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The short name a test gives a layout (identical_outputs.sh's LAYOUT).
std::string layout_word(Layout l) {
  switch (l) {
    case Layout::shared: return "shared";
    case Layout::file_per_process: return "fpp";
    case Layout::file_per_node: return "fpn";
  }
  return "?";
}

std::vector<BackendTestVariant> variants_of(const BackendRow& row) {
  if (!row.test_variants.empty()) return row.test_variants;
  return {{.name = row.name}};
}

bool chosen(const TestBackends& want, const BackendRow& row, const BackendTestVariant& v) {
  const auto& layouts = want.layouts;
  if (std::find(layouts.begin(), layouts.end(), layout_name(v.layout)) == layouts.end()) return false;
  if (v.romio && !want.romio) return false;
  if (!v.options.empty() && !want.with_options) return false;
  if (want.collective_only && !row.can.collective) return false;
  return want.option.empty() || row.can.takes(want.option);
}

// The backends an identical_outputs.sh test compares for `layout`: environment of the script.
std::vector<std::string> identical_env(Layout layout) {
  std::string raw, romio, containers;
  auto add = [](std::string& list, const std::string& name) { list += (list.empty() ? "" : ",") + name; };
  for (const BackendRow& row : backend_table()) {
    if (!row.can.supports(layout)) continue;
    if (!row.can.raw_file) {
      add(containers, row.name);
      continue;
    }
    add(raw, row.name);
    if (row.can.mpi_io) add(romio, row.name);
  }
  return {"RAW_BACKENDS=" + raw, "ROMIO_BACKENDS=" + romio, "CONTAINERS=" + containers};
}

std::vector<std::string> test_args(const std::vector<std::string>& args, int ranks) {
  std::vector<std::string> out;
  for (const std::string& a : args) out.push_back(replaced(a, "{NP}", std::to_string(ranks)));
  return out;
}

std::string test_name(const std::string& pattern, int ranks) {
  if (pattern.find("{NP}") != std::string::npos) return replaced(pattern, "{NP}", std::to_string(ranks));
  return pattern + ".np" + std::to_string(ranks);
}

// The rows of one declared test of `kernel`.
void add_rows(std::vector<TestRow>& rows, const std::string& kernel, const KernelTest& t) {
  const std::vector<std::string> verified = {"--write", "--read", "--verify", "--quiet"};
  for (int np : t.ranks) {
    if (t.check == TestCheck::identical) {
      for (const std::string& l : t.backends.layouts) {
        const Layout layout = l == layout_name(Layout::shared) ? Layout::shared : Layout::file_per_process;
        TestRow row{test_name(replaced(t.name, "{LAYOUT}", layout_word(layout)), np),
                    np,
                    "identical",
                    identical_env(layout),
                    {layout_word(layout), kernel}};
        for (const std::string& a : test_args(t.args, np)) row.args.push_back(a);
        rows.push_back(row);
      }
      continue;
    }
    auto add = [&](const std::string& variant, const std::vector<std::string>& backend_args, bool romio) {
      TestRow row{
          test_name(replaced(t.name, "{BACKEND}", variant), np), np, romio ? "romio" : "run", t.env, {"run", kernel}};
      for (const std::string& a : test_args(t.args, np)) row.args.push_back(a);
      row.args.insert(row.args.end(), backend_args.begin(), backend_args.end());
      row.args.insert(row.args.end(), verified.begin(), verified.end());
      row.args.push_back("--output");
      row.args.push_back("{OUT}/" + row.name + t.output_suffix);
      rows.push_back(row);
    };
    if (!t.backends.backend) {
      add("", {}, false);
      continue;
    }
    for (const BackendRow& b : backend_table()) {
      for (const BackendTestVariant& v : variants_of(b)) {
        if (!chosen(t.backends, b, v)) continue;
        std::vector<std::string> backend_args = {"--backend", b.name};
        if (v.layout != Layout::shared) backend_args.push_back("--" + layout_name(v.layout));
        backend_args.insert(backend_args.end(), v.options.begin(), v.options.end());
        add(v.name, backend_args, v.romio);
      }
    }
  }
}

}  // namespace

std::vector<TestRow> test_matrix() {
  std::vector<TestRow> rows;
  for (const Kernel* k : kernel_list()) {
    for (const KernelTest& t : k->tests()) add_rows(rows, k->name(), t);
  }
  for (const AppKernel* k : app_kernel_list()) {
    for (const KernelTest& t : k->tests()) add_rows(rows, k->name(), t);
  }
  return rows;
}

std::string test_matrix_lines(const std::vector<TestRow>& rows) {
  std::string text;
  for (const TestRow& r : rows) {
    std::string env, args;
    for (const std::string& e : r.env) env += (env.empty() ? "" : " ") + e;
    for (const std::string& a : r.args) args += (args.empty() ? "" : " ") + a;
    text += r.name + "\t" + std::to_string(r.ranks) + "\t" + r.launch + "\t" + (env.empty() ? "-" : env) + "\t" + args +
            "\n";
  }
  return text;
}

}  // namespace strata
