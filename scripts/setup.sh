#!/usr/bin/env bash
# Install what Strata needs to build and test: Debian packages and a Python venv.
# Idempotent: when everything is present it only checks and returns (well under a second
# for the packages; the venv is rebuilt only when python/requirements.txt changes).
#   --with-slurm   also Slurm (slurm-wlm: slurmctld, slurmd, srun, sbatch) and munge, for
#                  `make test-slurm` (tests/slurm/run.sh); not needed to build or for `make test`.
#   --with-mpich   also MPICH (mpicc.mpich, mpiexec.mpich) and Debian's parallel HDF5 built for it,
#                  beside Open MPI, for `make build-mpich` / `make test-mpich` (docs/testing.md).
set -euo pipefail

with_slurm=0
with_mpich=0
for arg in "$@"; do
  case "$arg" in
    --with-slurm) with_slurm=1 ;;
    --with-mpich) with_mpich=1 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (allowed: --with-slurm, --with-mpich)" >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(
  build-essential cmake ninja-build pkg-config
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  libpnetcdf-dev pnetcdf-bin
  libhwloc-dev hwloc
  fio
  # `make format-check`: one formatting rule for the C++ (.clang-format)
  clang-format
  # the HTML report opened in a real headless browser (tests/python/browser.py, test_harness_run.py)
  chromium chromium-driver
  nlohmann-json3-dev
  libmemkind-dev
  libtomlplusplus-dev
  libgtest-dev
  libxxhash-dev
  python3-venv
  # Python's headers for the binding (python/CMakeLists.txt) when the venv is made from Debian's Python
  python3-dev
  # the Fortran module (use strata) and its example: Open MPI's mpifort calls gfortran
  gfortran
  # bench/peers.py builds IOR and E3SM-IO from their sources (make bench-peers)
  libtool autoconf automake
)
if [ "$with_slurm" -eq 1 ]; then
  packages+=(slurm-wlm munge)
fi
if [ "$with_mpich" -eq 1 ]; then
  # Debian's PnetCDF is built for Open MPI only: build-mpich builds the pnetcdf backend out.
  packages+=(mpich libmpich-dev libhdf5-mpich-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python venv for the harness (python/strata, the strata-bench command) and the Python tests,
# from pinned requirements.
venv="$here/.venv"
req="$here/python/requirements.txt"
stamp="$venv/.requirements.sha256"
if [ -f "$req" ]; then
  # The stamp covers the harness's pyproject too: a new entry point needs a new editable install.
  want=$(cat "$req" "$here/python/pyproject.toml" 2>/dev/null | sha256sum | cut -d' ' -f1)
  have=$(cat "$stamp" 2>/dev/null || true)
  if [ ! -x "$venv/bin/python" ] || [ "$want" != "$have" ]; then
    echo "setup: creating Python venv in .venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip >/dev/null
    # mpi4py is built from source (python/requirements.txt says why): at -O0 without debug
    # information its generated C (several MB) compiles several times faster than at Python's
    # default -O3 -g, and nothing here is bound by mpi4py's own speed.
    CFLAGS="${CFLAGS:-} -O0 -g0" "$venv/bin/pip" install -q -r "$req"
    if [ -f "$here/python/pyproject.toml" ]; then
      # quiet unless it fails: setuptools warns about every editable install
      if ! log=$("$venv/bin/pip" install -q -e "$here/python" 2>&1); then
        echo "$log" >&2
        exit 1
      fi
    fi
    echo "$want" > "$stamp"
  fi
fi
