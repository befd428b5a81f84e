#!/usr/bin/env bash
# mpirun with a session directory of its own. Open MPI 4.1 keeps every job's session files under
# one shared $TMPDIR/ompi.<host>.<uid>; when ctest starts two jobs at once, one job's cleanup can
# remove that folder while the other creates its own inside it, and the second job dies in
# orte_init ("orte_session_dir failed", open-mpi/ompi#8510). A private base removes the race.
set -u
base=$(mktemp -d "${TMPDIR:-/tmp}/strata-ompi.XXXXXX") || exit 1
OMPI_MCA_orte_tmpdir_base="$base" "${STRATA_REAL_MPIEXEC:-mpirun}" "$@"
status=$?
rm -rf "$base"
exit $status
