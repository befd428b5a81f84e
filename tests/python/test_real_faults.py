"""Real faults, not injected ones (issue 17), on every backend, under OMPIO and ROMIO, at 1, 2, 3
and 5 ranks:

  full       the output's file system fills up (a 2 MiB tmpfs mounted by the test)
  read-only  the output directory is on a read-only file system
  removed    the output directory is removed between the write and the read
  truncated  another process truncates the file before the read
  killed     one rank is killed with SIGKILL while the job writes

Each cell must end with a non-zero status on every rank, a message on rank 0 that names the
cause, and no hang (every launch runs under a time limit, and the watchdog's is short). For the
engine, the output committed before the fault stays whole: `strata verify` is clean and it reads
back verified.

The Open MPI 4.1 OMPIO component waits forever in a collective write that a full disk fails
(mpiio-coll, hdf5 and pnetcdf at 3 ranks or more): after the error grace (STRATA_ERROR_GRACE,
default 15 s) a rank that holds an error its peers never came to agree on, or that made no progress
while its file system is full, ends the job with that error, which must name the full file system.
Every cell runs with default settings (no STRATA_TIMEOUT) and must end within FULL_LIMIT_S.
Backends that do not use MPI-IO (the
catalogue's `mpi_io`: posix and the engine) run under the default component only: the other
changes nothing they call.

The cells are independent launches, and so are a cell's faults (each in a folder of its own): one
fixture runs them, then one test per cell and fault reads its outcome. To stay within the suite's
time budget the fixture runs them in two lanes side by side: the OMPIO full disks that wait out
the grace (six with every backend built; 15 s each, mostly waiting), three at a time, and every
other fault, four at a time, the longest first. Only the schedule tells them apart; every cell
runs with default settings and is checked alike."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import BASE_ENV, MPI, STRATA, built_backends, catalogue, launch, run_ranks

pytestmark = pytest.mark.timeout(900)

SMALL = ["--dist", "uniform", "--size", "40000"]  # fits everywhere
BIG = ["--dist", "uniform", "--size", "4000000"]  # 3.8 MiB a rank: more than the 2 MiB tmpfs holds
RANKS = (1, 2, 3, 5)
FAULTS = ("full", "read-only", "removed", "truncated", "killed")
FULL_LIMIT_S = 60  # a full disk's write ends within this, with default settings (the error grace ends OMPIO's hang)
CAUSES = {
    "full": r"No space left on device|is full",
    "read-only": r"Read-only file system|Permission denied",
    "removed": r"No such file or directory",
    "truncated": r"shorter than the (decomposition|data declared)|truncated file",  # HDF5 names it itself
    "killed": r"exited on signal 9 \(Killed\)",
}


def cells() -> list[tuple[str, str, int]]:
    out = []
    for backend in built_backends():
        components = ("ompio", "romio") if catalogue().backend(backend)["mpi_io"] else ("ompio",)
        out += [(backend, c, n) for c in components for n in RANKS]
    return out


def cell_id(cell: tuple[str, str, int]) -> str:
    return f"{cell[0]}-{cell[1]}-{cell[2]}"


@dataclass
class Result:
    """One fault's outcome in one cell: what the launch said, and what went wrong in it."""

    statuses: dict[int, int] = field(default_factory=dict)  # per rank, as far as reported
    launcher_status: int = 0
    stderr: str = ""
    problems: list[str] = field(default_factory=list)


def mount_tmpfs(where: Path, options: str) -> str | None:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    return None if done.returncode == 0 else (done.stderr.strip() or "mount failed")


def strata_args(backend: str, target: Path, sizes: list[str], *extra: str) -> list[str]:
    return ["run", "array1d", *sizes, "--backend", backend, "--output", str(target), "--quiet", *extra]


class Cell:
    """Runs every fault of one (backend, component, ranks) cell."""

    def __init__(self, backend: str, component: str, ranks: int, root: Path, read_only: Path):
        self.backend, self.component, self.ranks = backend, component, ranks
        self.dir = root / cell_id((backend, component, ranks))
        self.read_only = read_only
        self.io = component
        self.engine = backend == "strata"

    def launch(self, args: list[str], env: dict[str, str] | None = None, limit: int = 60) -> Result:
        """`strata ARGS` on this cell's ranks under mpirun's own time limit; every rank's status."""
        env = {"STRATA_FAULT_CELL": self.dir.name, **(env or {})}
        try:
            out = run_ranks(
                self.ranks, args, env=env, io=self.io, mpi_timeout=limit, timeout=limit + 30, allow_missing=True
            )
        except subprocess.TimeoutExpired:
            return Result(problems=[f"no answer within {limit + 30} s: a hang"])
        return Result(out.statuses, out.launcher_status, out.stderr)

    def ok(self, args: list[str], what: str, result: Result) -> bool:
        out = self.launch(args)
        if len(out.statuses) != self.ranks or set(out.statuses.values()) != {0}:
            result.problems.append(f"{what} failed: {out.statuses}\n{out.stderr[-2000:]}")
            return False
        return True

    def expect_error(self, fault: str, out: Result, grace_may_end_it: bool = False) -> Result:
        """A clean error: every rank the same non-zero status, one message naming the cause."""
        cause = re.compile(CAUSES[fault])
        if out.problems:
            return out
        if grace_may_end_it and "ends the job after STRATA_ERROR_GRACE" in out.stderr:
            # OMPIO's hang on a full disk, ended by the rank holding the error after the grace:
            # non-zero, its error naming the cause, and no watchdog needed.
            if out.launcher_status == 0:
                out.problems.append("the error grace ended the job but the launcher reported success")
            held = [line for line in out.stderr.splitlines() if "ends the job after STRATA_ERROR_GRACE" in line]
            if not all(line.startswith("strata: error:") and cause.search(line) for line in held):
                out.problems.append(f"the held error does not name a full disk:\n{out.stderr[-2000:]}")
            if "strata: watchdog:" in out.stderr:
                out.problems.append(f"the watchdog fired before the error grace ended the job:\n{out.stderr[-2000:]}")
            return out
        if len(out.statuses) != self.ranks:
            out.problems.append(f"only ranks {sorted(out.statuses)} reported a status")
        values = set(out.statuses.values())
        if len(values) != 1 or 0 in values:
            out.problems.append(f"expected the same non-zero status on every rank, got {out.statuses}")
        errors = [line for line in out.stderr.splitlines() if line.startswith("strata: error:")]
        if len(errors) != 1:
            out.problems.append(f"expected one error message (rank 0's), got {len(errors)}:\n{out.stderr[-2000:]}")
        elif not cause.search(errors[0]):
            out.problems.append(f"the message does not name the cause ({CAUSES[fault]}): {errors[0]}")
        return out

    def previous_output_kept(
        self, target: Path, before: dict[str, bytes], result: Result, sizes: list[str], seeds: tuple[str, ...] = ("1",)
    ) -> None:
        """The engine's committed output after a fault: unchanged files (or, after a kill, a complete
        newer one with one of `seeds`), `strata verify` clean, read back verified."""
        after = {p.name: p.read_bytes() for p in target.parent.iterdir() if not p.name.endswith(".strata-partial")}
        if len(seeds) == 1 and after != before:
            result.problems.append(f"the previous output changed: {sorted(before)} -> {sorted(after)}")
        if not self.ok(["verify", str(target)], "strata verify after the fault", result):
            return
        if not any(
            self.launch(strata_args("strata", target, sizes, "--read", "--verify", "--seed", s)).statuses
            == dict.fromkeys(range(self.ranks), 0)
            for s in seeds
        ):
            result.problems.append("the output kept after the fault does not read back verified")

    def full(self) -> Result:
        mount = self.dir / "full"
        refused = mount_tmpfs(mount, "size=2m")
        if refused:
            return Result(problems=[f"SKIP cannot mount a tmpfs here: {refused}"])
        try:
            target = mount / "o"
            result = Result()
            before: dict[str, bytes] = {}
            if self.engine:
                if not self.ok(strata_args("strata", target, SMALL), "the first (small) write", result):
                    return result
                before = {p.name: p.read_bytes() for p in mount.iterdir()}
            started = time.monotonic()
            out = self.launch(strata_args(self.backend, target, BIG), limit=FULL_LIMIT_S)
            if not out.problems and time.monotonic() - started > FULL_LIMIT_S:
                out.problems.append(f"the full disk took {time.monotonic() - started:.0f} s to end")
            out = self.expect_error("full", out, grace_may_end_it=self.component == "ompio")
            if self.engine and not out.problems:
                self.previous_output_kept(target, before, out, SMALL)
            return out
        finally:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)

    def read_only_dir(self) -> Result:
        return self.expect_error("read-only", self.launch(strata_args(self.backend, self.read_only / "o", SMALL)))

    def read_faults(self) -> dict[str, Result]:
        """One good write, copied twice: one copy's folder is removed, the other's file truncated."""
        good = self.dir / "good" / "o"
        good.parent.mkdir(parents=True)
        result = Result()
        if not self.ok(strata_args(self.backend, good, SMALL), "the write before the read faults", result):
            return {"removed": result, "truncated": result}
        removed, truncated = self.dir / "removed", self.dir / "truncated"
        shutil.copytree(good.parent, removed)
        shutil.copytree(good.parent, truncated)
        shutil.rmtree(removed)
        data = truncated / "o"
        os.truncate(data, data.stat().st_size // 2)
        read = ["--read", "--verify"]
        return {
            "removed": self.expect_error(
                "removed", self.launch(strata_args(self.backend, removed / "o", SMALL, *read))
            ),
            "truncated": self.expect_error("truncated", self.launch(strata_args(self.backend, data, SMALL, *read))),
        }

    def killed(self) -> Result:
        """The last rank gets SIGKILL once the output has its first bytes, during 200 repetitions
        of a 3.8 MiB-a-rank write (for the engine: over an output committed before, seed 1; the
        killed job writes seed 2)."""
        target = self.dir / "killed" / "o"
        target.parent.mkdir(parents=True)
        result = Result()
        before: dict[str, bytes] = {}
        if self.engine:
            if not self.ok(strata_args("strata", target, BIG), "the write before the kill", result):
                return result
            before = {p.name: p.read_bytes() for p in target.parent.iterdir()}
        marker = f"{self.dir.name}-killed"
        env = MPI.environment(BASE_ENV, {"STRATA_FAULT_CELL": marker}, timeout=60)
        cmd = launch(
            self.ranks,
            [str(STRATA), *strata_args(self.backend, target, BIG, "--repetitions", "200", "--seed", "2")],
            io=self.io,
            exports=["STRATA_FAULT_CELL"],
            timeout=60,
        )
        with MPI.own_session(env) as env:  # cells run side by side
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            victim = None
            started = time.monotonic()
            while proc.poll() is None and victim is None and time.monotonic() - started < 40:
                if new_bytes(target.parent, before):
                    pids = rank_pids(marker)
                    if len(pids) == self.ranks:
                        victim = pids[self.ranks - 1]
                        os.kill(victim, signal.SIGKILL)
                        break
                time.sleep(0.005)
            try:
                _, err = proc.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
                return Result(problems=["the job did not end within 90 s of the kill: a hang"])
        out = Result(launcher_status=proc.returncode, stderr=err)
        if victim is None:
            out.problems.append(f"the job ended before a rank could be killed (status {proc.returncode})")
            return out
        if proc.returncode == 0:
            out.problems.append("the job reported success after a rank was killed")
        if not re.search(CAUSES["killed"], err):
            out.problems.append(f"no message names the killed rank:\n{err[-2000:]}")
        if self.engine and not out.problems:
            self.previous_output_kept(target, before, out, BIG, seeds=("1", "2"))
        return out

    def run(self, part: str) -> dict[str, Result]:
        """One part of the cell (PARTS): each in a folder of its own, so parts run side by side."""
        self.dir.mkdir(parents=True, exist_ok=True)
        if part == "full":
            return {"full": self.full()}
        if part == "read-only":
            return {"read-only": self.read_only_dir()}
        if part == "read":
            return self.read_faults()
        return {"killed": self.killed()}


def new_bytes(folder: Path, before: dict[str, bytes]) -> bool:
    """A file that was not in `before` holds bytes (the write has begun)."""
    for p in folder.iterdir():
        try:
            if p.name not in before and p.stat().st_size > 0:
                return True
        except FileNotFoundError:  # removed between two repetitions
            continue
    return False


def rank_pids(marker: str) -> dict[int, int]:
    """rank -> pid of the strata processes launched with STRATA_FAULT_CELL=marker."""
    found: dict[int, int] = {}
    want = f"STRATA_FAULT_CELL={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "exe") != str(STRATA.resolve()):
                continue
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if want not in env:
            continue
        for item in env:
            if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                found[int(item.split(b"=", 1)[1])] = int(entry.name)
    return found


def waits_out_the_grace(cell: tuple[str, str, int]) -> bool:
    """OMPIO's hang on a full disk (the module's docstring): these cells' `full` part waits out the
    error grace. Only the schedule reads this; every cell is checked alike."""
    backend, component, ranks = cell
    return component == "ompio" and backend in ("mpiio-coll", "hdf5", "pnetcdf") and ranks >= 3


# What Cell.run runs, each part a task of its own: the faults, `read` both read faults.
PARTS = ("full", "read-only", "read", "killed")
# Two lanes of threads, each thread running one launch at a time: the full disks that wait out the
# grace, and the rest (the longest parts first, so that no long one is left for the end).
WAITING_LANE, BUSY_LANE = 3, 4


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Result]]]:
    root = tmp_path_factory.mktemp("faults")
    read_only = root / "read-only"
    refused = mount_tmpfs(read_only, "size=1m,ro")
    if refused:  # unprivileged: a folder without write permission
        read_only.chmod(0o555)
    results: dict[str, dict[str, Result]] = {cell_id(c): {} for c in cells()}
    lock = threading.Lock()

    def run_part(cell: tuple[str, str, int], part: str) -> None:
        outcome = Cell(*cell, root=root, read_only=read_only).run(part)
        with lock:
            results[cell_id(cell)].update(outcome)

    tasks = [(cell, part) for cell in cells() for part in PARTS]
    waiting = [t for t in tasks if t[1] == "full" and waits_out_the_grace(t[0])]
    busy = sorted(
        (t for t in tasks if t not in waiting), key=lambda t: (t[0][0] != "strata", t[1] != "killed", -t[0][2])
    )
    try:
        with ThreadPoolExecutor(WAITING_LANE) as slow, ThreadPoolExecutor(BUSY_LANE) as fast:
            runs = [slow.submit(run_part, *t) for t in waiting] + [fast.submit(run_part, *t) for t in busy]
            for r in runs:
                r.result()
        yield results
    finally:
        if not refused:
            subprocess.run(["umount", "-l", str(read_only)], capture_output=True)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("cell", cells(), ids=cell_id)
def test_a_real_fault_is_an_error_naming_its_cause(
    matrix: dict[str, dict[str, Result]], cell: tuple[str, str, int], fault: str
) -> None:
    result = matrix[cell_id(cell)][fault]
    skipped = [p for p in result.problems if p.startswith("SKIP ")]
    if skipped:
        pytest.skip(skipped[0][5:])
    assert not result.problems, "\n".join(result.problems)


def test_the_matrix_covers_every_backend_component_and_rank_count() -> None:
    covered = {(b, c) for b, c, _ in cells()}
    for backend in built_backends():
        assert (backend, "ompio") in covered
        if catalogue().backend(backend)["mpi_io"]:
            assert (backend, "romio") in covered
    assert {n for _, _, n in cells()} == set(RANKS)
