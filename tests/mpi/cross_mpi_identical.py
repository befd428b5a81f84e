#!/usr/bin/env python3
"""The same runs under two MPI libraries write the same files: every raw backend's output byte for
byte (cmp), every HDF5 file equal object by object (h5diff), and the run records strata run leaves
beside them equal but for the time and the folder. Run by `make test-mpich` with the
Open MPI build and the MPICH build; each build's launcher is the one its CMake cache names, and
what differs between the libraries (flags, environment) is strata/mpi_stack.py.

usage: cross_mpi_identical.py BUILD_A BUILD_B WORKDIR [--quick]
Each case runs with the same seed in both builds, every backend both builds have (a backend one
build lacks, e.g. pnetcdf under MPICH, is listed as skipped); exit status 1 on any difference.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from strata.mpi_stack import mpi_stack  # noqa: E402

# (name, ranks, kernel arguments)
CASES = [
    ("ior", 4, ["ior", "--block-size", "32K", "--transfer-size", "8K", "--segments", "4"]),
    ("array1d", 5, ["array1d", "--dist", "random", "--size", "40K"]),
    ("blocks", 4, ["blocks", "--vars", "3", "--shape", "10x9x7", "--tiles-per-rank", "3"]),
    ("hacc", 3, ["hacc", "--particles", "500", "--layout", "soa"]),
    ("e3sm-f", 3, ["e3sm", "--case", "f", "--vars", "24", "--ncol", "96", "--lev", "6"]),
    ("e3sm-map", 5, ["e3sm", "--maps", str(ROOT / "tests" / "data" / "pio_holes_5ranks.dat"), "--map-vars", "2"]),
]
QUICK = {"blocks", "e3sm-f"}
# (variant, backend arguments, how the files compare); the layouts a variant writes
VARIANTS = [
    ("posix", ["--backend", "posix"], "cmp"),
    ("posix-fpp", ["--backend", "posix", "--file-per-process"], "cmp"),
    ("mpiio-ind", ["--backend", "mpiio-ind"], "cmp"),
    ("mpiio-coll", ["--backend", "mpiio-coll"], "cmp"),
    ("strata", ["--backend", "strata"], "cmp"),
    ("strata-fpp", ["--backend", "strata", "--file-per-process"], "cmp"),
    ("hdf5", ["--backend", "hdf5"], "h5diff"),
    ("strata-hdf5", ["--backend", "strata", "--container", "hdf5"], "h5diff"),
    ("pnetcdf", ["--backend", "pnetcdf"], "cmp"),
]


class Build:
    def __init__(self, path: Path):
        self.path = path
        self.strata = path / "bin" / "strata"
        if not self.strata.exists():
            sys.exit(f"cross-mpi: no {self.strata} (build it first)")
        cache = (path / "CMakeCache.txt").read_text()
        m = re.search(r"^MPIEXEC_EXECUTABLE:\w+=(.*)$", cache, re.M)
        self.stack = mpi_stack(m.group(1) if m else None)
        info = json.loads(
            subprocess.run(
                [str(self.strata), "info", "--catalogue", "--json"],
                capture_output=True,
                text=True,
                env=self.stack.environment(),
                check=True,
            ).stdout
        )
        self.backends = {b["name"] for b in info["backends"]}

    def run(self, ranks: int, args: list[str], out: Path) -> None:
        cmd = self.stack.command(
            ranks, [str(self.strata), "run", *args, "--seed", "9", "--quiet", "--output", str(out)]
        )
        proc = subprocess.run(cmd, capture_output=True, text=True, env=self.stack.environment(), timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")


def outputs(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file())


def run_record(path: Path) -> dict:
    """A run record (OUTPUT.strata-run.json, which strata verify reads) without what names the run
    rather than the output: when it ran and the folder each build's run wrote into."""
    record = json.loads(path.read_text())
    for key in ("timestamp", "cwd"):
        record.pop(key, None)
    return json.loads(json.dumps(record).replace(str(path.parent), "DIR"))


def same(kind: str, a: Path, b: Path) -> str:
    """'' when the two files are equal, else what differs."""
    if a.name.endswith(".strata-run.json"):
        ra, rb = run_record(a), run_record(b)
        return (
            ""
            if ra == rb
            else f"run records differ in {sorted(k for k in ra.keys() | rb.keys() if ra.get(k) != rb.get(k))}"
        )
    if kind == "cmp" or a.suffix not in (".h5",):
        return "" if filecmp.cmp(a, b, shallow=False) else "bytes differ"
    proc = subprocess.run(["h5diff", str(a), str(b)], capture_output=True, text=True)
    return "" if proc.returncode == 0 else f"h5diff: {(proc.stdout + proc.stderr).strip()[:500]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_a", type=Path)
    ap.add_argument("build_b", type=Path)
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--quick", action="store_true", help=f"only the cases {', '.join(sorted(QUICK))}")
    a = ap.parse_args()
    if shutil.which("h5diff") is None:
        sys.exit("cross-mpi: h5diff is missing (hdf5-tools: make setup)")
    builds = [Build(a.build_a), Build(a.build_b)]
    print(
        f"cross-mpi: {builds[0].stack.name} ({builds[0].path.name}) against "
        f"{builds[1].stack.name} ({builds[1].path.name})"
    )
    failures = compared = 0
    for name, ranks, kernel in CASES:
        if a.quick and name not in QUICK:
            continue
        for variant, backend_args, kind in VARIANTS:
            backend = backend_args[1]
            if any(backend not in b.backends for b in builds):
                print(f"skipped: {name} {variant} (backend {backend} is not in both builds)")
                continue
            dirs = []
            for i, build in enumerate(builds):
                d = a.workdir / name / variant / f"{i}-{build.stack.name}"
                shutil.rmtree(d, ignore_errors=True)
                d.mkdir(parents=True)
                build.run(ranks, [*kernel, *backend_args], d / ("out.h5" if kind == "h5diff" else "out"))
                dirs.append(d)
            files = [outputs(d) for d in dirs]
            if files[0] != files[1] or not files[0]:
                print(f"FAIL: {name} {variant}: the builds wrote different files: {files[0]} / {files[1]}")
                failures += 1
                continue
            bad = [f"{f}: {why}" for f in files[0] if (why := same(kind, dirs[0] / f, dirs[1] / f))]
            compared += len(files[0])
            if bad:
                print(f"FAIL: {name} {variant} on {ranks} ranks: " + "; ".join(bad))
                failures += 1
            else:
                how = "byte-identical" if kind == "cmp" else "h5diff-equal"
                records = sum(f.endswith(".strata-run.json") for f in files[0])
                data = f"{len(files[0]) - records} file(s) {how}"
                print(f"ok: {name} {variant} on {ranks} ranks: {data}" + (", the run record equal" if records else ""))
            shutil.rmtree(a.workdir / name / variant, ignore_errors=True)
    print(f"cross-mpi: {compared} files compared, {failures} difference(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
