#!/usr/bin/env bash
# Writes one decomposition with every raw backend in $RAW_BACKENDS (and those in $ROMIO_BACKENDS
# under ROMIO too) and with the serial reference writer, then checks every output is
# byte-identical. A shared file is also read back and verified by another rank count
# (--writer-ranks NP; the engine's also through its index alone), and written and read back so by
# each container backend in $CONTAINERS: elements no writer owned are never checked. The three
# lists (comma-separated) come from the backend table (strata info --tests).
# usage: identical_outputs.sh MPIEXEC STRATA REFERENCE DIR NP shared|fpp KERNEL [kernel args]
# The launcher's flags come from cmake/StrataMPI.cmake: STRATA_MPIEXEC_PREFLAGS (before the
# program) and STRATA_MPI_ROMIO_FLAGS (select ROMIO; empty where it is the only MPI-IO).
set -euo pipefail
mpiexec=$1 strata=$2 reference=$3 dir=$4 np=$5 layout=$6 kernel=$7
shift 7
: "${RAW_BACKENDS:?the raw backends, from strata info --tests}" "${ROMIO_BACKENDS?}" "${CONTAINERS?}"
preflags=${STRATA_MPIEXEC_PREFLAGS---oversubscribe}
romio=${STRATA_MPI_ROMIO_FLAGS-}
rm -rf "$dir" && mkdir -p "$dir"
fpp=()
[ "$layout" = fpp ] && fpp=(--file-per-process)
readers=$((np > 2 ? np - 1 : np + 1))  # another rank count

"$reference" "$np" "$dir/reference" "${fpp[@]}" "$kernel" "$@"

variants=()
for backend in ${RAW_BACKENDS//,/ }; do
  variants+=("$backend:")
done
if [ -n "$romio" ]; then
  for backend in ${ROMIO_BACKENDS//,/ }; do
    variants+=("$backend:$romio")
  done
fi
for v in "${variants[@]}"; do
  backend=${v%%:*}
  mca=${v#*:}
  name="$backend${mca:+-romio}"
  # shellcheck disable=SC2086
  timeout 100 "$mpiexec" $mca -n "$np" $preflags "$strata" run "$kernel" "$@" --backend "$backend" \
    "${fpp[@]}" --quiet --output "$dir/$name"
  if [ "$layout" = fpp ]; then
    for ((r = 0; r < np; r++)); do
      suffix=$(printf '.%08d' "$r")
      cmp "$dir/reference$suffix" "$dir/$name$suffix" || { echo "FAIL: $name rank $r differs from the reference"; exit 1; }
    done
  else
    cmp "$dir/reference" "$dir/$name" || { echo "FAIL: $name differs from the reference"; exit 1; }
  fi
  echo "ok: $name identical to the serial reference"
  if [ "$layout" = shared ] && [ -z "$mca" ]; then  # each backend's read path once
    # shellcheck disable=SC2086
    timeout 100 "$mpiexec" $mca -n "$readers" $preflags "$strata" run "$kernel" "$@" --backend "$backend" \
      --writer-ranks "$np" --read --verify --quiet --output "$dir/$name"
    echo "ok: $name read back and verified by $readers ranks"
  fi
done
if [ "$layout" = shared ]; then
  timeout 100 "$mpiexec" -n "$readers" $preflags "$strata" run "$kernel" "$@" --backend strata \
    --read --verify --quiet --output "$dir/strata"
  echo "ok: strata read back through its index alone by $readers ranks"
  # The engine's strategy follows the machine's measured figures: force the aggregated one, whose
  # whole spans fill the holes with zeros (the index must still say no rank owned them).
  timeout 100 "$mpiexec" -n "$np" $preflags "$strata" run "$kernel" "$@" --backend strata --quiet \
    --hints strata_strategy=aggregate,strata_spans=true --output "$dir/strata-spans"
  cmp "$dir/reference" "$dir/strata-spans" || { echo "FAIL: strata (aggregated, whole spans) differs from the reference"; exit 1; }
  timeout 100 "$mpiexec" -n "$readers" $preflags "$strata" run "$kernel" "$@" --backend strata \
    --read --verify --quiet --output "$dir/strata-spans"
  echo "ok: strata aggregated in whole spans, identical, and read back through its index alone by $readers ranks"
  for backend in ${CONTAINERS//,/ }; do
    timeout 100 "$mpiexec" -n "$np" $preflags "$strata" run "$kernel" "$@" --backend "$backend" --quiet \
      --output "$dir/$backend"
    timeout 100 "$mpiexec" -n "$readers" $preflags "$strata" run "$kernel" "$@" --backend "$backend" \
      --writer-ranks "$np" --read --verify --quiet --output "$dir/$backend"
    echo "ok: $backend written by $np ranks, read back and verified by $readers"
  done
fi
rm -rf "$dir"
