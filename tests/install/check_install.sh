#!/usr/bin/env bash
# Installs the build into a fresh prefix and builds docs/examples/three_variables.c against the
# installed copy twice, as a user would: with `pkg-config --cflags --libs strata` and plain `cc`,
# and with find_package(Strata) in a CMake project of its own. Runs both on 3 ranks and checks
# what they wrote, byte for byte, against the values the example declares. Where mpifort works,
# the Fortran example is built from the installed module source the same way, and run.
#
# check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR C_COMPILER CMAKE GENERATOR MPIEXEC [MPIEXEC ARGS...]
set -euo pipefail
build=$1 src=$2 work=$3 cc=$4 cmake=$5 generator=$6
shift 6
ranks=3
preflags=${STRATA_MPIEXEC_PREFLAGS---oversubscribe}  # cmake/StrataMPI.cmake
# The Fortran wrapper of the MPI the build uses (STRATA_MPIFORT, from CMake), else mpifort.
mpifort=${STRATA_MPIFORT:-mpifort}
fail() { echo "check_install: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/strata/strata.h include/strata/strata.hpp include/strata/error.hpp include/strata/hints.hpp; do
  [[ -f $prefix/$f ]] || fail "$f is not installed"
done
lib=$(find "$prefix" -name libstrata.a | head -n 1)
[[ -n $lib ]] || fail "libstrata.a is not installed"
pc=$(find "$prefix" -name strata.pc | head -n 1)
[[ -n $pc ]] || fail "strata.pc is not installed"
config=$(find "$prefix" -name StrataConfig.cmake | head -n 1)
[[ -n $config ]] || fail "StrataConfig.cmake is not installed"
# Nothing installed may point back into the source or build tree.
if grep -rlF -e "$src/" -e "$build/" "$prefix" --include='*.cmake' --include='*.pc'; then
  fail "installed files name the source or build tree (above)"
fi
# The installed program reaches nothing of the source or build tree: no such path in it (its debug
# information aside, which names the sources it was compiled from), and strata replay's converter
# installed beside it (PREFIX/share/strata/python).
stripped=$work/strata.stripped
objcopy --strip-debug "$prefix/bin/strata" "$stripped"
if grep -qaF -e "$src" -e "$build" "$stripped"; then
  fail "the installed program names the source or build tree: $(grep -aoF -e "$src" -e "$build" "$stripped" | head -n 1)"
fi
[[ -f $prefix/share/strata/python/strata/replay.py ]] || fail "strata replay's converter (strata/replay.py) is not installed"
[[ -f $prefix/share/strata/python/strata/templates/report.html.j2 ]] || fail "the report's templates are not installed"

# Private headers stay private: only the public API is installed.
[[ $(find "$prefix/include" -type f | wc -l) -eq 4 ]] || fail "headers other than include/strata/ were installed"

# 1. pkg-config and the C compiler, no MPI wrapper.
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs strata)
echo "pkg-config --cflags --libs strata: $flags"
# shellcheck disable=SC2086
"$cc" -o "$work/three_variables_pc" "$src/docs/examples/three_variables.c" $flags

# 2. find_package(Strata).
# The consumer finds the MPI the build used (STRATA_MPI_C_COMPILER, from CMake), not the default one.
"$cmake" -S "$src/tests/install/consumer" -B "$work/consumer" -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" \
  ${STRATA_MPI_C_COMPILER:+-DMPI_C_COMPILER="$STRATA_MPI_C_COMPILER"} \
  -DEXAMPLE="$src/docs/examples/three_variables.c" > "$work/consumer.log"
"$cmake" --build "$work/consumer" >> "$work/consumer.log"

# The file the example writes: per rank, x then y then z, 5 doubles each, value rank·100 + 10·v + i.
python3 - "$work/expected.dat" "$ranks" <<'PY'
import struct, sys
path, ranks = sys.argv[1], int(sys.argv[2])
with open(path, "wb") as f:
    for r in range(ranks):
        for v in range(3):
            for i in range(5):
                f.write(struct.pack("<d", r * 100 + v * 10 + i))
PY
for program in "$work/three_variables_pc" "$work/consumer/three_variables"; do
  out=$work/$(basename "$(dirname "$program")").$(basename "$program").dat
  "$@" -n "$ranks" $preflags "$program" "$out" > "$work/run.log" 2>&1 || { cat "$work/run.log"; fail "$program failed"; }
  cat "$work/run.log"
  grep -q "file content checked" "$work/run.log" || fail "$program did not check its file"
  cmp "$out" "$work/expected.dat" || fail "$program wrote other bytes than expected"
  echo "ok: $program on $ranks ranks"
done

# 3. Fortran: the installed module source and the S3D example, built with mpifort and the
# pkg-config flags (docs/fortran.md), then run: it reads its last checkpoint back and checks it.
module=$prefix/share/strata/fortran/strata.f90
[[ -f $module ]] || fail "share/strata/fortran/strata.f90 is not installed"
if command -v "$mpifort" > /dev/null && command -v gfortran > /dev/null; then
  # shellcheck disable=SC2046
  (cd "$work" && "$mpifort" -fwrapv "$module" "$src/docs/examples/s3d_fortran.f90" $(pkg-config --libs strata) \
    -o s3d_fortran) || fail "the Fortran example does not build against the installed copy"
  "$@" -n "$ranks" $preflags "$work/s3d_fortran" "$work/ckpt" 12x8x8 1 > "$work/run.log" 2>&1 \
    || { cat "$work/run.log"; fail "s3d_fortran failed"; }
  grep -q "and checked" "$work/run.log" || fail "s3d_fortran did not check its checkpoint"
  echo "ok: the Fortran example built with the installed module on $ranks ranks"
else
  echo "skipped: the Fortran example (no mpifort with its Fortran compiler)"
fi
