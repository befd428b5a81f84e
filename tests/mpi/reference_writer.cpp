// The serial reference writer: builds every rank's part of a kernel's decomposition in one
// process and writes it with plain C++ streams at the raw layout's offsets (or into a file per
// rank). Parallel backends' outputs must be byte-identical to it.
// usage: reference_writer RANKS OUTPUT [--file-per-process] KERNEL [kernel options] [--seed S] [--step K]
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "decomp/selection.hpp"
#include "decomp/values.hpp"
#include "kernels/kernel.hpp"

using namespace strata;

int main(int argc, char** argv) {
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() < 3) throw_usage("usage: reference_writer RANKS OUTPUT [--file-per-process] KERNEL [options]");
    const int ranks = static_cast<int>(parse_count(args[0], "RANKS"));
    const std::string output = args[1];
    size_t next = 2;
    bool fpp = false;
    if (args[next] == "--file-per-process") {
      fpp = true;
      ++next;
    }
    const Kernel& kernel = find_kernel(args[next]);
    OptionSet o;
    o.add("seed", "S", "seed", "1");
    o.add("step", "K", "step", "0");
    kernel.add_options(o);
    o.parse({args.begin() + static_cast<long>(next) + 1, args.end()});
    ValueStream vs{parse_count(o.get("seed"), "--seed"), parse_count(o.get("step"), "--step")};

    std::fstream shared;
    uint64_t extent = 0;  // the shared file's size: the whole decomposition, unowned elements included
    if (!fpp) {
      shared.open(output, std::ios::out | std::ios::binary | std::ios::trunc);
      if (!shared) throw_runtime("cannot create " + output);
    }
    for (int r = 0; r < ranks; ++r) {
      KernelSetup setup = kernel.build(o, r, ranks);
      const Decomposition& d = setup.decomposition;
      d.validate();
      extent = d.global_bytes();
      std::vector<std::byte> buf(d.local_bytes());
      fill(d, vs, buf.data());
      std::fstream own;
      std::fstream* out = &shared;
      if (fpp) {
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, ".%08d", r);
        own.open(output + suffix, std::ios::out | std::ios::binary | std::ios::trunc);
        if (!own) throw_runtime("cannot create " + output + suffix);
        out = &own;
      }
      for (const Extent& e : flatten(d)) {
        const uint64_t es = elem_size(d.variables[static_cast<size_t>(e.var)].type);
        const uint64_t off = fpp ? e.mem_offset : d.variable_offset(e.var) + e.elem_begin * es;
        out->seekp(static_cast<std::streamoff>(off));
        out->write(reinterpret_cast<const char*>(buf.data() + e.mem_offset),
                   static_cast<std::streamsize>(e.elems * es));
      }
      if (!*out) throw_runtime("write to " + output + " failed");
    }
    if (!fpp) {
      shared.close();
      if (std::filesystem::file_size(output) < extent) std::filesystem::resize_file(output, extent);
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "reference_writer: %s\n", e.what());
    return e.exit_status();
  }
}
