#!/usr/bin/env bash
# The Fortran example (docs/examples/s3d_fortran.f90, `use strata`) writes S3D-IO's checkpoints
# byte for byte as the s3d kernel does: both write the same grid and steps on NP ranks, and
# every checkpoint file is compared; the kernel then reads the Fortran files back and verifies.
# usage: s3d_fortran_matches_kernel.sh MPIEXEC STRATA S3D_FORTRAN DIR NP GRID STEPS
set -euo pipefail
mpiexec=$1 strata=$2 fortran=$3 dir=$4 np=$5 grid=$6 steps=$7
preflags=${STRATA_MPIEXEC_PREFLAGS---oversubscribe}  # cmake/StrataMPI.cmake
rm -rf "$dir" && mkdir -p "$dir"
timeout 60 "$mpiexec" -n "$np" $preflags "$fortran" "$dir/fortran" "$grid" "$steps"
timeout 60 "$mpiexec" -n "$np" $preflags "$strata" run s3d --grid "$grid" --steps "$steps" --interval 1 \
  --seed 1 --backend posix --quiet --output "$dir/kernel"
for ((s = 1; s <= steps; s++)); do
  suffix=$(printf '.step%06d' "$s")
  cmp "$dir/kernel$suffix" "$dir/fortran$suffix" || { echo "FAIL: checkpoint $s differs from the kernel's"; exit 1; }
  echo "ok: checkpoint $s identical to the s3d kernel's"
done
# The kernel's own verification of the Fortran files (reading them as its output).
for ((s = 1; s <= steps; s++)); do
  suffix=$(printf '.step%06d' "$s")
  mv "$dir/fortran$suffix" "$dir/kernel$suffix"
done
timeout 60 "$mpiexec" -n "$np" $preflags "$strata" run s3d --grid "$grid" --steps "$steps" --interval 1 \
  --seed 1 --backend posix --read --verify --quiet --output "$dir/kernel"
echo "ok: the s3d kernel read the Fortran checkpoints back and verified them"
rm -rf "$dir"
