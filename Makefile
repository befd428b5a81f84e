# Strata — top-level commands. `make demo` and `make test` work on a fresh Debian 12 machine:
# both install what is missing (scripts/setup.sh), configure and build first.
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
VENV := .venv
PY := $(VENV)/bin/python
# Open MPI refuses to run as root without these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

.PHONY: all setup build test unit-test mpi-test python-test demo campaigns bench bench-peers peers test-preload \
	bench-preload clean test-asan test-slurm format format-check build-mpich test-mpich \
	build-hdf5-114 test-hdf5-114

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	$(VENV)/bin/ruff check bench python tests/python tests/preload examples/python
	$(PY) -m pytest -q tests/python

# One formatting rule: clang-format (.clang-format) for the C and C++, ruff format (ruff.toml) for
# the Python. `make format` rewrites the files in place; `make format-check` (run by CI, .ci/run)
# lists the files that differ and fails. Both take the files git knows, so build trees are never read.
FORMAT_CXX = git ls-files '*.c' '*.h' '*.cpp' '*.hpp'
FORMAT_PY = git ls-files '*.py'
format: setup
	$(FORMAT_CXX) | xargs clang-format -i
	$(FORMAT_PY) | xargs $(VENV)/bin/ruff format -q

format-check: setup
	@$(FORMAT_CXX) | xargs clang-format --dry-run --Werror 2>&1 | grep -E '^[^ ]+:[0-9]+:[0-9]+: error' \
	  | cut -d: -f1 | sort -u | sed 's/$$/: not formatted (make format)/' | tee /dev/stderr | (! grep -q .)
	$(FORMAT_PY) | xargs $(VENV)/bin/ruff format --check -q

# AddressSanitizer + UndefinedBehaviorSanitizer: a separate build (build-asan) of the library and
# the unit tests, run with leak detection, then 20 seeded engine phases on 2 ranks.
# tests/asan/lsan.supp lists only leaks inside Open MPI,
# hwloc, HDF5 and PnetCDF (never Strata's code); see docs/testing.md. Not part of `make test`.
ASAN_BUILD ?= build-asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/asan/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Under mpirun: Open MPI is built without frame pointers, so only the slow unwinder reaches the
# library frames the suppressions name (too slow for the unit tests, which need no MPI launch).
ASAN_MPI_ENV := $(subst detect_leaks=1,detect_leaks=1:fast_unwind_on_malloc=0,$(ASAN_ENV))
$(ASAN_BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_FLAGS="$(ASAN_FLAGS)" -DCMAKE_CXX_FLAGS="$(ASAN_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"

test-asan: setup $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target strata_unit_tests engine_property
	$(ASAN_ENV) $(ASAN_BUILD)/bin/strata_unit_tests
	mkdir -p $(ASAN_BUILD)/out
	$(ASAN_MPI_ENV) timeout 300 mpirun -n 2 --oversubscribe -x ASAN_OPTIONS -x LSAN_OPTIONS -x UBSAN_OPTIONS \
	  $(ASAN_BUILD)/bin/engine_property 20 1 $(CURDIR)/$(ASAN_BUILD)/out

# The harness's Slurm launcher against a real Slurm: installs slurm-wlm and munge, starts a one-node
# slurmctld + slurmd on this machine from a generated slurm.conf, runs tests/slurm/campaign.toml inside
# an allocation (salloc + srun) and as a submitted sbatch script, checks the results in SQLite, stops
# the daemons (tests/slurm/run.sh; docs/testing.md). Needs root. About 1.5 min; not part of `make test`.
test-slurm: build
	@bash scripts/setup.sh --with-slurm
	timeout 900 bash tests/slurm/run.sh

# Other stacks beside the default (Debian's Open MPI 4.1, HDF5 1.10.8, PnetCDF 1.12): docs/testing.md.
# ccache, where installed, keeps their rebuilds cheap. None of them is part of `make test`.
CCACHE_LAUNCHER := $(if $(shell command -v ccache),-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# What every build of another stack leaves out: the Python binding (written into the source tree,
# where the default build's lives; the venv's mpi4py is built for Open MPI).
OTHER_STACK_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CCACHE_LAUNCHER) -DSTRATA_WITH_PYTHON=OFF

# MPICH 4.0 (Debian's mpich, with its own parallel HDF5 1.10.8; PnetCDF is built out: Debian's is
# for Open MPI only). The wrappers and the launcher are named explicitly: update-alternatives
# decides what plain mpicc is. cmake/StrataMPI.cmake holds what differs between the two MPIs.
MPICH_BUILD ?= build-mpich
$(MPICH_BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(MPICH_BUILD) $(OTHER_STACK_FLAGS) \
	  -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich -DMPI_Fortran_COMPILER=mpifort.mpich \
	  -DMPIEXEC_EXECUTABLE=$$(command -v mpiexec.mpich) -DHDF5_C_COMPILER_EXECUTABLE=$$(command -v h5pcc.mpich) \
	  -DSTRATA_WITH_PNETCDF=OFF

build-mpich:
	@bash scripts/setup.sh --with-mpich
	@$(MAKE) --no-print-directory $(MPICH_BUILD)/build.ninja
	cmake --build $(MPICH_BUILD) -j $(JOBS)

# Under mpiexec.mpich: the unit tests and every MPI test of that build (ctest), the Python tests
# that launch MPI (tests/python/mpi_stack_tests.txt lists them), then the same runs under both
# MPIs compared file by file (tests/mpi/cross_mpi_identical.py). About 8 minutes on 2 cores.
MPICH_PYTESTS := $(shell grep -v '^\#' tests/python/mpi_stack_tests.txt 2>/dev/null)
test-mpich: build-mpich build
	cd $(MPICH_BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	STRATA_BIN=$(CURDIR)/$(MPICH_BUILD)/bin/strata STRATA_MPIEXEC=$$(command -v mpiexec.mpich) \
	  $(PY) -m pytest -q $(MPICH_PYTESTS)
	timeout 900 $(PY) tests/mpi/cross_mpi_identical.py $(CURDIR)/$(BUILD) $(CURDIR)/$(MPICH_BUILD) \
	  $(CURDIR)/$(MPICH_BUILD)/cross-mpi

# HDF5 1.14.5, parallel, against Open MPI (Debian's trixie source package, fetched with a private
# apt configuration), built once behind a stamp into build-deps/ (scripts/build-hdf5-114.sh; 10 to 25
# minutes on 2 cores), and Strata against it into build-hdf5-114/, where the hdf5-multi backend
# (H5Dwrite_multi / H5Dread_multi) is built in. `make test-hdf5-114` checks it (docs/multidataset.md).
HDF5_114_BUILD ?= build-hdf5-114
HDF5_114 := $(CURDIR)/build-deps/hdf5-1.14.5
$(HDF5_114_BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(HDF5_114_BUILD) $(OTHER_STACK_FLAGS) \
	  -DMPI_C_COMPILER=mpicc.openmpi -DMPI_CXX_COMPILER=mpicxx.openmpi -DMPI_Fortran_COMPILER=mpifort.openmpi \
	  -DMPIEXEC_EXECUTABLE=$$(command -v mpirun.openmpi) \
	  -DHDF5_ROOT=$(HDF5_114)

build-hdf5-114: setup
	@nice bash scripts/build-hdf5-114.sh $(CURDIR)/build-deps
	@$(MAKE) --no-print-directory $(HDF5_114_BUILD)/build.ninja
	cmake --build $(HDF5_114_BUILD) -j $(JOBS)

# The hdf5-multi backend at 1 to 16 ranks on the E3SM F and G cases and the multidataset kernels,
# verified and read by h5py (tests/python/test_hdf5_multi.py), and that build's multidataset tests.
test-hdf5-114: build-hdf5-114
	cd $(HDF5_114_BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300 -R 'hdf5-multi|catalogue'
	STRATA_BIN=$(CURDIR)/$(HDF5_114_BUILD)/bin/strata $(PY) -m pytest -q tests/python/test_hdf5_multi.py

# The demo campaign (examples/demo.toml): every kernel through every backend, 3 launches each,
# shuffled; results, plots and the HTML report in results/demo. A failed run fails the target,
# after the report and the table have been written.
DEMO_DB := results/demo/results.sqlite
demo: build
	@status=0; \
	$(VENV)/bin/strata-bench run examples/demo.toml --force || status=$$?; \
	$(VENV)/bin/strata-bench compare $(DEMO_DB) || status=1; \
	$(VENV)/bin/strata-bench report $(DEMO_DB) -o $(CURDIR)/results/demo || status=1; \
	exit $$status

# The four papers' studies (docs/campaigns.md): each campaign at laptop scale, then its report
# with the paper checks. About 15 minutes on 2 cores.
campaigns: build
	@status=0; \
	for c in mslio striping tapioca multidataset; do \
	  $(VENV)/bin/strata-bench run campaigns/$$c.toml --force || status=$$?; \
	  $(VENV)/bin/strata-bench report $(CURDIR)/results/$$c/results.sqlite -o $(CURDIR)/results/$$c || status=1; \
	done; \
	exit $$status

bench: build
	$(PY) bench/engine_speed.py
	$(PY) bench/compare_backends.py --preset bench
	$(PY) bench/engine_vs_mpiio.py
	$(PY) bench/tiers_compare.py
	$(PY) bench/multidataset.py
	$(PY) bench/soak.py

# IOR and E3SM-IO, built once from the peers' archives into build-peers/ behind a stamp (about 8
# minutes on 2 cores the first time): what bench-peers, test-preload and bench-preload run.
PEERS_DIR ?= $(firstword $(wildcard $(abspath ../shared/peers) $(abspath ../../shared/peers)) $(abspath ../shared/peers))
peers: setup
	$(PY) bench/peers.py --build-only --peers $(PEERS_DIR)

# Strata's backends and engine against IOR and E3SM-IO (docs/peers.md). PEERS_ARGS=--quick for a
# smoke run.
bench-peers: build peers
	$(PY) bench/peers.py --peers $(PEERS_DIR) $(PEERS_ARGS)

# The drop-in layer's proof on the peers (docs/testing.md): E3SM-IO's PnetCDF and HDF5 paths, IOR
# patterns, more fuzzer seeds, with and without libstrata_preload.so, under OMPIO and ROMIO; then
# the quick part that `make test` runs too. About 10 minutes on 2 cores.
test-preload: build peers
	$(PY) -m pytest -q -rs tests/preload/test_peers.py tests/python/test_preload.py

# The drop-in layer's benchmark (issue 29's targets): each program's own write time with and
# without the preload, interleaved, 5 rounds. PRELOAD_ARGS=--quick for a smoke run.
bench-preload: build peers
	$(PY) bench/preload.py $(PRELOAD_ARGS)

clean:
	rm -rf $(BUILD) demo-output bench-output results/demo python/strata/_phase*.so
