// strata decomp: PIO decomposition maps (the format E3SM writes, kernels/e3sm/pio_map.hpp).
//   describe FILE   blocks per rank, block lengths, coverage (elements held, missing, held twice)
//   generate ...    writes a synthetic map shaped like E3SM's (the e3sm kernel's own maps)
// Rank 0 does the work; run it with or without mpirun.
#include <mpi.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <numeric>

#include "commands.hpp"
#include "common/error.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "kernels/e3sm/pio_map.hpp"
#include "kernels/e3sm/synthetic_maps.hpp"

namespace strata::cli {

namespace {

const char* kHelp =
    "usage: strata decomp describe FILE [--json OUT]\n"
    "       strata decomp generate --output FILE [--map d2] [--ncol N] [--lev N] [--npes P] [--max-run N] [--seed S]\n"
    "\n"
    "describe: what a PIO decomposition map (piodecomp*.dat, `version 2001 npes N ndims D`) holds:\n"
    "  blocks per rank (runs of offsets consecutive in the list, the file and one row), block lengths,\n"
    "  coverage of the global array (elements held once, missing, held by more than one rank).\n"
    "generate: writes a synthetic map shaped like E3SM's, the ones `strata run e3sm` builds:\n"
    "  --map d1|d2   F case columns (d1 lists each rank's runs shuffled), dims \"ncol\"\n"
    "  --map d3      F case levels x columns, dims \"ncol lev\"\n"
    "  --map cells   G case columns of levels, each cell's levels contiguous, dims \"lev ncol\"\n";

nlohmann::json describe_map(const PioMap& map) {
  std::vector<double> per_rank;
  std::vector<uint64_t> lengths;
  for (int r = 0; r < map.npes; ++r) {
    const auto blocks = pio_map_blocks(map, 0, r, map.npes);
    per_rank.push_back(static_cast<double>(blocks.size()));
    for (const Block& b : blocks) lengths.push_back(b.elements());
  }
  const uint64_t total = map.elements();
  std::vector<uint8_t> held(total, 0);
  uint64_t padding = 0, twice = 0;
  for (const auto& offs : map.offsets) {
    for (uint64_t o : offs) {
      if (o == 0) {
        ++padding;
      } else if (held[o - 1]++ == 1) {
        ++twice;
      }
    }
  }
  const uint64_t covered =
      static_cast<uint64_t>(std::count_if(held.begin(), held.end(), [](uint8_t h) { return h > 0; }));
  std::sort(per_rank.begin(), per_rank.end());
  std::sort(lengths.begin(), lengths.end());
  auto median = [](const auto& v) { return v.empty() ? 0.0 : static_cast<double>(v[v.size() / 2]); };
  const uint64_t sum = std::accumulate(lengths.begin(), lengths.end(), uint64_t{0});
  nlohmann::json hist = nlohmann::json::object();
  const std::pair<uint64_t, const char*> buckets[] = {
      {1, "1"}, {4, "2-4"}, {16, "5-16"}, {64, "17-64"}, {~0ULL, ">64"}};
  for (const auto& [hi, name] : buckets) hist[name] = 0;
  for (uint64_t l : lengths) {
    for (const auto& [hi, name] : buckets) {
      if (l <= hi) {
        hist[name] = hist[name].get<uint64_t>() + 1;
        break;
      }
    }
  }
  return {{"npes", map.npes},
          {"dims", map.dims},
          {"elements", total},
          {"blocks", lengths.size()},
          {"blocks_per_rank",
           {{"min", per_rank.empty() ? 0 : per_rank.front()},
            {"median", median(per_rank)},
            {"max", per_rank.empty() ? 0 : per_rank.back()}}},
          {"block_length",
           {{"min", lengths.empty() ? 0 : lengths.front()},
            {"median", median(lengths)},
            {"mean", lengths.empty() ? 0.0 : static_cast<double>(sum) / static_cast<double>(lengths.size())},
            {"max", lengths.empty() ? 0 : lengths.back()},
            {"histogram", hist}}},
          {"coverage",
           {{"held", covered},
            {"missing", total - covered},
            {"held_twice", twice},
            {"padding", padding},
            {"fraction", total ? static_cast<double>(covered) / static_cast<double>(total) : 0.0}}}};
}

std::string describe_table(const std::string& file, const nlohmann::json& j) {
  std::string dims;
  for (const auto& d : j["dims"]) dims += (dims.empty() ? "" : " ") + std::to_string(d.get<uint64_t>());
  char buf[1024];
  const auto& br = j["blocks_per_rank"];
  const auto& bl = j["block_length"];
  const auto& c = j["coverage"];
  std::snprintf(buf, sizeof buf,
                "map %s: %d ranks, dims \"%s\" (%llu elements)\n"
                "blocks: %llu in all; per rank min %.0f, median %.0f, max %.0f\n"
                "block length (elements): min %llu, median %.0f, mean %.1f, max %llu; "
                "1: %llu, 2-4: %llu, 5-16: %llu, 17-64: %llu, >64: %llu\n"
                "coverage: %llu of %llu elements held (%.1f %%), %llu missing, %llu held twice, %llu padding entries\n",
                file.c_str(), j["npes"].get<int>(), dims.c_str(), j["elements"].get<unsigned long long>(),
                j["blocks"].get<unsigned long long>(), br["min"].get<double>(), br["median"].get<double>(),
                br["max"].get<double>(), bl["min"].get<unsigned long long>(), bl["median"].get<double>(),
                bl["mean"].get<double>(), bl["max"].get<unsigned long long>(),
                bl["histogram"]["1"].get<unsigned long long>(), bl["histogram"]["2-4"].get<unsigned long long>(),
                bl["histogram"]["5-16"].get<unsigned long long>(), bl["histogram"]["17-64"].get<unsigned long long>(),
                bl["histogram"][">64"].get<unsigned long long>(), c["held"].get<unsigned long long>(),
                j["elements"].get<unsigned long long>(), 100.0 * c["fraction"].get<double>(),
                c["missing"].get<unsigned long long>(), c["held_twice"].get<unsigned long long>(),
                c["padding"].get<unsigned long long>());
  return buf;
}

}  // namespace

int decomp_command(const std::vector<std::string>& args, const Environment&) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    if (rank == 0) std::fputs(kHelp, stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string sub = args[0];
  OptionSet o;
  o.add("json", "OUT", "describe: also write the description as JSON");
  o.add("output", "FILE", "generate: the map file to write");
  o.add("map", "d1|d2|d3|cells", "generate: which map", "d2");
  o.add("ncol", "N", "generate: columns (cells)", "1024");
  o.add("lev", "N", "generate: levels of d3 or cells", "72");
  o.add("npes", "P", "generate: ranks", "16");
  o.add("max-run", "N", "generate: longest run of neighbouring columns one rank owns", "16");
  o.add("seed", "S", "generate: seed", "1");
  std::vector<std::string> rest;
  collectively(MPI_COMM_WORLD, [&] {
    if (sub != "describe" && sub != "generate") {
      throw_usage("unknown decomp command \"" + sub + "\" (describe or generate; see strata decomp --help)");
    }
    rest = o.parse({args.begin() + 1, args.end()});
  });
  if (o.help_requested()) {
    if (rank == 0) std::fputs((std::string(kHelp) + "\n" + o.help_text()).c_str(), stdout);
    return 0;
  }
  collectively(MPI_COMM_WORLD, [&] {
    if (rank != 0) return;
    if (sub == "describe") {
      if (rest.size() != 1) throw_usage("strata decomp describe needs one map FILE");
      const PioMap map = read_pio_map(rest[0]);
      const nlohmann::json j = describe_map(map);
      std::fputs(describe_table(rest[0], j).c_str(), stdout);
      if (o.given("json")) {
        std::ofstream out(o.get("json"));
        out << j.dump(2) << "\n";
        if (!out) throw_system("cannot write \"" + o.get("json") + "\"", errno);
      }
      return;
    }
    if (!rest.empty()) throw_usage("unexpected argument \"" + rest[0] + "\" (see strata decomp --help)");
    if (!o.given("output")) throw_usage("strata decomp generate needs --output FILE");
    ColumnMapSpec spec;
    spec.columns = parse_count(o.get("ncol"), "--ncol");
    spec.npes = static_cast<int>(parse_count(o.get("npes"), "--npes"));
    spec.max_run = parse_count(o.get("max-run"), "--max-run");
    spec.seed = parse_count(o.get("seed"), "--seed");
    if (spec.columns == 0 || spec.npes == 0 || spec.max_run == 0) {
      throw_usage("--ncol, --npes and --max-run must be greater than zero");
    }
    const std::string which = o.get("map");
    const uint64_t lev = parse_count(o.get("lev"), "--lev");
    if (which == "d1") {
      spec.shuffled = true;
    } else if (which == "d3") {
      spec.levels = lev;
    } else if (which == "cells") {
      spec.levels = lev;
      spec.levels_fastest = true;
      spec.shuffled = true;
    } else if (which != "d2") {
      throw_usage("--map must be d1, d2, d3 or cells (got \"" + which + "\")");
    }
    if (spec.levels == 0 && which != "d1" && which != "d2") throw_usage("--lev must be greater than zero");
    const PioMap map = column_map(spec);
    write_pio_map(map, o.get("output"));
    std::printf("wrote %s: %d ranks, %llu elements\n", o.get("output").c_str(), map.npes,
                static_cast<unsigned long long>(map.elements()));
  });
  return 0;
}

}  // namespace strata::cli
