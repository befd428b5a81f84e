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

.PHONY: all setup build test unit-test mpi-test python-test demo bench clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	$(VENV)/bin/ruff check bench python tests/python
	$(PY) -m pytest -q tests/python

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

bench: build
	$(PY) bench/compare_backends.py --preset bench
	$(PY) bench/engine_vs_mpiio.py
	$(PY) bench/tiers_compare.py
	$(PY) bench/multidataset.py

clean:
	rm -rf $(BUILD) demo-output bench-output results/demo
