// strata exec -- PROGRAM ARGS...: runs an unmodified MPI program with the drop-in layer
// (libstrata_preload.so, docs/preload.md) preloaded. Runs before MPI_Init: under mpirun each
// rank's strata process becomes the program (execvp), which then initialises MPI itself.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"

namespace strata::cli {

namespace {

const char* kExecUsage =
    "usage: strata exec [--report PATH] [--hints K=V,...] [--budget SIZE] [--engine | --mpiio | --off] -- PROGRAM "
    "[ARGS...]\n"
    "\n"
    "Runs PROGRAM with libstrata_preload.so in LD_PRELOAD: its collective MPI-IO writes (its own, or\n"
    "HDF5's and PnetCDF's) go through Strata's engine, in place into the files it opens; every other\n"
    "call goes to MPI-IO untouched. Run it under mpirun: mpirun -np 16 strata exec -- ./e3sm_io ...\n"
    "\n"
    "options (each also an environment variable the library reads):\n"
    "  --report PATH   rank 0 writes what happened as JSON at MPI_Finalize (STRATA_PRELOAD_REPORT)\n"
    "  --hints LIST    engine hints for every file, key=value,... (STRATA_PRELOAD_HINTS)\n"
    "  --budget SIZE   gathered bytes per rank before a flush, e.g. 256m (STRATA_PRELOAD_BUDGET)\n"
    "  --engine        gathered writes always through the engine, whatever the cost model predicts\n"
    "                  (STRATA_PRELOAD=engine)\n"
    "  --mpiio         gather, then write through MPI-IO's own collective write (STRATA_PRELOAD=mpiio)\n"
    "  --off           pass every call to MPI-IO, still counted (STRATA_PRELOAD=off)\n"
    "\n"
    "The library is found beside this program (../lib, the build tree and the installed tree) or\n"
    "named by STRATA_PRELOAD_LIBRARY. See docs/preload.md.\n";

std::string self_directory() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

// The library: STRATA_PRELOAD_LIBRARY, else beside this program in the build tree
// (build/bin/strata -> build/lib) or the installed tree (PREFIX/bin -> PREFIX/LIBDIR).
std::string find_library() {
  if (const char* v = std::getenv("STRATA_PRELOAD_LIBRARY"); v != nullptr && *v != '\0') return v;
  const std::string dir = self_directory();
  for (const char* rel : {"../lib", "../" STRATA_INSTALL_LIBDIR}) {
    const std::filesystem::path p = std::filesystem::path(dir) / rel / "libstrata_preload.so";
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return std::filesystem::weakly_canonical(p, ec).string();
  }
  return "";
}

}  // namespace

int exec_command(int argc, char** argv) {
  int i = 0;
  auto value = [&](const char* option) -> const char* {
    if (i + 1 >= argc) {
      std::fprintf(stderr, "strata exec: error: %s needs a value\n", option);
      std::exit(2);
    }
    return argv[++i];
  };
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--help" || a == "-h") {
      std::fputs(kExecUsage, stdout);
      return 0;
    } else if (a == "--report") {
      setenv("STRATA_PRELOAD_REPORT", value("--report"), 1);
    } else if (a == "--hints") {
      setenv("STRATA_PRELOAD_HINTS", value("--hints"), 1);
    } else if (a == "--budget") {
      setenv("STRATA_PRELOAD_BUDGET", value("--budget"), 1);
    } else if (a == "--off") {
      setenv("STRATA_PRELOAD", "off", 1);
    } else if (a == "--engine") {
      setenv("STRATA_PRELOAD", "engine", 1);
    } else if (a == "--mpiio") {
      setenv("STRATA_PRELOAD", "mpiio", 1);
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "strata exec: error: unknown option %s (see strata exec --help)\n", a.c_str());
      return 2;
    } else {
      break;  // the program, without "--"
    }
  }
  if (i >= argc) {
    std::fputs(kExecUsage, stderr);
    return 2;
  }
  const std::string library = find_library();
  if (library.empty()) {
    std::fprintf(stderr,
                 "strata exec: error: libstrata_preload.so is not beside %s (../lib); build it (make build) or "
                 "name it with STRATA_PRELOAD_LIBRARY\n",
                 self_directory().c_str());
    return 2;
  }
  std::string preload = library;
  if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != '\0') preload += ":" + std::string(old);
  setenv("LD_PRELOAD", preload.c_str(), 1);
  std::vector<char*> args(argv + i, argv + argc);
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "strata exec: error: cannot run %s: %s\n", args[0], std::strerror(errno));
  return errno == ENOENT ? 127 : 126;
}

}  // namespace strata::cli
