#!/usr/bin/env bash
# Build HDF5 1.14.5 (parallel, against Open MPI) once, into an ignored folder, for `make
# build-hdf5-114` (docs/multidataset.md): H5Dwrite_multi / H5Dread_multi, which Debian 12's HDF5
# 1.10.8 lacks. The source is Debian's source package of the next release (trixie), fetched with a
# private apt configuration (its own sources file, lists and cache under the build folder): the
# machine's apt setup is neither read for sources nor changed.
#   usage: scripts/build-hdf5-114.sh [PREFIX_ROOT]     (default: build-deps/ in the repository)
# Installs into PREFIX_ROOT/hdf5-1.14.5 (bin/h5cc, lib/libhdf5.so, lib/cmake/...); a stamp,
# PREFIX_ROOT/hdf5-1.14.5.built, skips everything next time (delete it, or the folder, to rebuild).
# 10 to 25 minutes on 2 cores (JOBS, default 2; niced); the log is PREFIX_ROOT/hdf5-1.14.5.log.
set -euo pipefail

case "${1:-}" in
  -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=$(mkdir -p "${1:-$here/build-deps}" && cd "${1:-$here/build-deps}" && pwd)
version=1.14.5
prefix="$root/hdf5-$version"
stamp="$root/hdf5-$version.built"
log="$root/hdf5-$version.log"
jobs="${JOBS:-2}"

if [ -f "$stamp" ] && [ -f "$prefix/lib/libhdf5.so" ]; then
  echo "hdf5-$version: already built in $prefix"
  exit 0
fi
for tool in apt-get mpicc.openmpi cmake ninja; do
  command -v "$tool" >/dev/null || { echo "hdf5-$version: needs $tool (make setup installs it)" >&2; exit 1; }
done

# 1. The source: Debian's hdf5 source package of trixie, through a private apt configuration.
apt_dir="$root/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$root/src"
cat > "$apt_dir/sources.list" <<'EOF'
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
EOF
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=-"
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o "APT::Sandbox::User=root" -qq)
orig=$(ls "$root/src"/hdf5_"$version"*.orig.tar.* 2>/dev/null | head -n1 || true)
if [ -z "$orig" ]; then
  echo "hdf5-$version: fetching Debian's source package (trixie) into $root/src"
  apt-get "${apt_opts[@]}" update
  (cd "$root/src" && apt-get "${apt_opts[@]}" source --download-only "hdf5/trixie")
  orig=$(ls "$root/src"/hdf5_"$version"*.orig.tar.* 2>/dev/null | head -n1 || true)
  [ -n "$orig" ] || { echo "hdf5-$version: trixie's hdf5 source is not $version (see $root/src)" >&2; exit 1; }
fi

# 2. Unpack and build: parallel, C only (HDF5 refuses C++ with parallel), shared, no tests/examples.
srcdir="$root/src/hdf5-$version"
rm -rf "$srcdir" "$root/build-hdf5-$version" "$prefix"
mkdir -p "$srcdir"
tar xf "$orig" -C "$srcdir" --strip-components=1
echo "hdf5-$version: building into $prefix (log $log; 10 to 25 minutes on 2 cores)"
started=$(date +%s)
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
{
  nice cmake -S "$srcdir" -B "$root/build-hdf5-$version" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_C_COMPILER=mpicc.openmpi "${launcher[@]}" \
    -DHDF5_ENABLE_PARALLEL=ON -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF \
    -DBUILD_TESTING=OFF -DHDF5_BUILD_EXAMPLES=OFF -DHDF5_BUILD_CPP_LIB=OFF \
    -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_JAVA=OFF -DHDF5_BUILD_HL_LIB=ON -DHDF5_BUILD_TOOLS=ON \
    -DHDF5_ENABLE_Z_LIB_SUPPORT=ON -DHDF5_ENABLE_SZIP_SUPPORT=OFF \
    -DHDF5_BUILD_DOC=OFF -DCMAKE_INSTALL_RPATH="$prefix/lib" -DCMAKE_INSTALL_RPATH_USE_LINK_PATH=ON
  nice cmake --build "$root/build-hdf5-$version" -j "$jobs"
  cmake --install "$root/build-hdf5-$version"
} > "$log" 2>&1 || { tail -n 30 "$log" >&2; echo "hdf5-$version: build failed (log $log)" >&2; exit 1; }
[ -f "$prefix/lib/libhdf5.so" ] || { echo "hdf5-$version: no $prefix/lib/libhdf5.so (log $log)" >&2; exit 1; }
rm -rf "$root/build-hdf5-$version" "$srcdir"
echo "hdf5-$version $(date -u +%FT%TZ) from $(basename "$orig")" > "$stamp"
echo "hdf5-$version: built in $(( $(date +%s) - started )) s into $prefix"
