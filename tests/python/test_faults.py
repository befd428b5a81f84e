"""Injected file-system failures (libstrata_fault.so, preloaded) give one collective error:
the same non-zero status on every rank, one readable message naming the operation, the path
and the system's message, and no hang — for every backend, at 2, 3 and 8 ranks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import BASE_ENV, ROOT, run_ranks
from test_bad_input import RUNTIME, assert_clean_failure

SHIM = ROOT / "build" / "lib" / "libstrata_fault.so"
# Small buffers so that every rank writes in several rounds (the fault hits round 3), and one
# aggregator per rank so that rank 1 is one.
HINTS = {
    "strata": "cb_buffer_size=16K,strata_aggregators={np},strata_direct_threshold=0",
    "mpiio-coll": "cb_buffer_size=16K,cb_nodes={np}",
    "hdf5": "cb_buffer_size=16K,cb_nodes={np}",
    "pnetcdf": "cb_buffer_size=16K,cb_nodes={np}",
}
FAULTS = {
    # name: (STRATA_FAULT, words the error must contain)
    "enospc-round3": ("op=write,nth=3,count=0,errno=ENOSPC,rank=1", ["No space left on device"]),
    "eio-sync": ("op=sync,errno=EIO", ["Input/output error"]),
    "open-rank1": ("op=open,errno=EACCES,rank=1", []),
}
CASES = [(f, b, np) for f in FAULTS for b in ["strata", "mpiio-coll", "mpiio-ind", "posix", "hdf5", "pnetcdf"]
         for np in [3]]
CASES += [(f, b, np) for f in FAULTS for b in ["strata", "mpiio-coll"] for np in [2, 8]]


def faulty_run(tmp_path: Path, fault: str, backend: str, np: int):
    target = tmp_path / "faulty.out"
    spec = f"{FAULTS[fault][0]},path={target}"
    args = ["run", "ior", "--block-size", "64K", "--transfer-size", "4K", "--backend", backend, "--write",
            "--fsync", "--output", str(target)]
    if backend in HINTS:
        args += ["--hints", HINTS[backend].format(np=np)]
    env = {"LD_PRELOAD": str(SHIM), "STRATA_FAULT": spec}
    return run_ranks(np, args, env=env, timeout=90), target


@pytest.mark.parametrize("fault,backend,np", CASES, ids=[f"{f}-{b}-np{n}" for f, b, n in CASES])
def test_injected_fault_is_collective(tmp_path: Path, fault: str, backend: str, np: int) -> None:
    assert SHIM.exists(), f"{SHIM} is missing: run `make build`"
    outcome, target = faulty_run(tmp_path, fault, backend, np)
    assert "strata-fault:" in outcome.stderr, f"the fault never fired:\n{outcome.stderr}"
    assert_clean_failure(outcome, RUNTIME, *FAULTS[fault][1])
    error = next(line for line in outcome.stderr.splitlines() if line.startswith("strata: error:"))
    # The error names the file (or the output) and which rank failed first.
    assert target.name in error, error
    if np > 1:
        assert "(rank " in error, error


def test_shim_rejects_a_bad_spec() -> None:
    env = dict(BASE_ENV, LD_PRELOAD=str(SHIM), STRATA_FAULT="op=scribble")
    proc = subprocess.run(["true"], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "bad STRATA_FAULT" in proc.stderr
