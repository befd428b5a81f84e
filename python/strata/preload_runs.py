"""Runs an unmodified MPI program with and without Strata's drop-in layer (libstrata_preload.so)
and compares what it wrote: the proof of issue 29 (tests/python/test_preload.py,
tests/preload/test_peers.py) and its benchmark (bench/preload.py) share this.

A launch is `mpirun -n N [component's MCA settings] PROGRAM ARGS`, with the layer added through
LD_PRELOAD (or `strata exec --`) and its report (STRATA_PRELOAD_REPORT, written by rank 0 at
MPI_Finalize: docs/preload.md) read back. Components: OMPIO (with its write data sieving off, as
every fair OMPIO baseline here: ../shared/MPI-IO-NOTES.md) and ROMIO (`--mca io romio321`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COMPONENTS: dict[str, list[str]] = {
    "ompio": ["--mca", "fbtl_posix_write_datasieving", "0"],
    "romio": ["--mca", "io", "romio321"],
}
LIBRARY_NAME = "libstrata_preload.so"
BASE_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def library_path(root: Path) -> Path:
    return root / "build" / "lib" / LIBRARY_NAME


def built_peers(build_dir: Path, pattern: str) -> list[Path]:
    """What `make peers` built in `build_dir` matching `pattern`, sorted; E3SM-IO's second build
    against HDF5 1.14 (bench/peers.py names it e3sm-io-*-hdf5-114: the multi-dataset peer, linked to
    another HDF5) is left out: it is not the program the drop-in's proof and benchmark run."""
    return sorted(p for p in build_dir.glob(pattern) if not p.relative_to(build_dir).parts[0].endswith("-hdf5-114"))


def library_in_tree(root: Path) -> bool:
    """Whether this source tree has the drop-in layer (src/preload): then the library must be built,
    and a test that needs it fails, rather than skips, when it is not."""
    return (root / "src" / "preload").is_dir()


@dataclass
class Launch:
    """One program run: its exit status, output and (with the preload) the layer's report."""

    command: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    report: dict[str, Any] | None = None
    timed_out: bool = False

    def why(self) -> str:
        tail = "\n".join((self.stdout + "\n" + self.stderr).strip().splitlines()[-25:])
        return f"$ {' '.join(self.command)}\nexit {self.returncode}{' (timed out)' if self.timed_out else ''}\n{tail}"


@dataclass
class Runner:
    """Launches programs for one proof: ranks, component, where the library is."""

    root: Path
    mpirun: str = field(default_factory=lambda: shutil.which("mpirun") or "mpirun")

    def launch(
        self,
        program: list[str],
        ranks: int,
        component: str,
        preload: bool,
        timeout: float = 120,
        env: dict[str, str] | None = None,
        via_exec: bool = False,
        cwd: Path | None = None,
        mode: str | None = "engine",
    ) -> Launch:
        """Runs `program` on `ranks` ranks under `component`, with the layer when `preload`
        (LD_PRELOAD, or `strata exec --` when `via_exec`). `mode` is STRATA_PRELOAD's: "engine"
        (the default here: a proof must see the engine write, not the cost model's choice of
        MPI-IO for a small flush), None for the layer's own default (the cost model decides), or
        "mpiio" / "off"."""
        import time

        full_env = dict(BASE_ENV)
        exports: list[str] = []
        for key, value in (env or {}).items():
            full_env[key] = value
            exports += ["-x", key]
        report_file = None
        prefix: list[str] = []
        if preload:
            fd, name = tempfile.mkstemp(prefix="preload-report.", suffix=".json")
            os.close(fd)
            os.unlink(name)
            report_file = Path(name)
            full_env["STRATA_PRELOAD_REPORT"] = str(report_file)
            exports += ["-x", "STRATA_PRELOAD_REPORT"]
            if mode:
                full_env["STRATA_PRELOAD"] = mode
                exports += ["-x", "STRATA_PRELOAD"]
            if via_exec:
                prefix = [str(self.root / "build" / "bin" / "strata"), "exec", "--"]
            else:
                full_env["LD_PRELOAD"] = str(library_path(self.root))
                exports += ["-x", "LD_PRELOAD"]
        # A session directory of its own (tests run side by side: MpiFlavour.session_variable)
        session = tempfile.mkdtemp(prefix="strata-ompi.")
        full_env["OMPI_MCA_orte_tmpdir_base"] = session
        cmd = [self.mpirun, "-n", str(ranks), "--oversubscribe", *COMPONENTS[component], *exports, *prefix, *program]
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout, cwd=cwd)
            out = Launch(cmd, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)
        except subprocess.TimeoutExpired as e:
            out = Launch(cmd, -9, _text(e.stdout), _text(e.stderr), time.monotonic() - started, timed_out=True)
        finally:
            shutil.rmtree(session, ignore_errors=True)
        if report_file is not None:
            if report_file.exists():
                try:
                    out.report = json.loads(report_file.read_text())
                except json.JSONDecodeError as e:
                    out.report = {"unreadable": f"{report_file}: {e}"}
                report_file.unlink()
        return out


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode(errors="replace")


def engine_calls(report: dict[str, Any] | None) -> int:
    return int((report or {}).get("engine_calls", 0))


def passthrough_reasons(report: dict[str, Any] | None) -> dict[str, int]:
    """The report's passed-through calls by reason, wherever the report keeps them: a mapping
    reason -> count under a key naming reasons (docs/preload.md)."""
    found: dict[str, int] = {}

    def visit(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            if "reason" in key.lower() and all(isinstance(v, int | float) for v in node.values()):
                for k, v in node.items():
                    found[k] = found.get(k, 0) + int(v)
                return
            for k, v in node.items():
                visit(v, k)

    visit(report or {})
    return found


def compare_files(a: Path, b: Path, hdf5: bool = False) -> str | None:
    """None when the files are the same; else what differs. HDF5 files store object modification
    times: they must match under h5diff and differ in no more bytes than time stamps and the
    like hold — 16 per object (two plain runs of E3SM-IO's HDF5 path, 400-odd datasets, differ
    in about 5 000 bytes), at least 64."""
    if not a.exists() or not b.exists():
        return f"missing output: {a if not a.exists() else b}"
    if a.stat().st_size != b.stat().st_size:
        return f"sizes differ: {a.stat().st_size} vs {b.stat().st_size} bytes ({a.name}, {b.name})"
    proc = subprocess.run(["cmp", "-l", str(a), str(b)], capture_output=True, text=True)
    if proc.returncode == 0:
        return None
    differing = proc.stdout.splitlines()
    first = differing[0].split() if differing else ["?"]
    if hdf5:
        h5 = subprocess.run(["h5diff", str(a), str(b)], capture_output=True, text=True)
        if h5.returncode != 0:
            return f"h5diff finds differences:\n{h5.stdout[-2000:]}{h5.stderr[-500:]}"
        listed = subprocess.run(["h5ls", "-r", str(a)], capture_output=True, text=True)
        objects = len(listed.stdout.splitlines()) if listed.returncode == 0 else 0
        allowed = max(64, 16 * objects)
        if len(differing) <= allowed:
            return None
        return (
            f"h5diff agrees but {len(differing)} bytes differ (more than the {allowed} that time stamps of "
            f"{objects} objects explain), first at byte {first[0]}"
        )
    return f"{len(differing)} bytes differ, first at byte {first[0]} ({a.name} vs {b.name})"
