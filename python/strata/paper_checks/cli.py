"""Asking the strata binary: what Strata's C++ computes (the advisor's stripe counts, the cost
model, the fallback order) is asked of `strata advise --json` and `strata cost --json`, never
recomputed in Python."""

from __future__ import annotations

import json
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..launch import run_environment


class StrataCli:
    """Runs `strata advise` and `strata cost` (as singletons: they need no mpirun) and reads their JSON.
    A singleton spends its second mostly waiting for MPI to start, so batches run side by side."""

    PARALLEL = 8

    def __init__(self, binary: Path) -> None:
        self.binary = Path(binary)

    def _one(self, args: tuple[str, ...], tmp: Path, i: int) -> dict[str, Any]:
        out = tmp / f"out{i}.json"
        proc = subprocess.run(
            [str(self.binary), *args, "--json", str(out), "--quiet"],
            capture_output=True,
            text=True,
            env=run_environment(),
            timeout=120,
        )
        if proc.returncode != 0 or not out.exists():
            lines = [x for x in (proc.stderr or proc.stdout).splitlines() if x.strip()]
            raise RuntimeError(lines[-1] if lines else f"strata {args[0]} exited with {proc.returncode}")
        return json.loads(out.read_text())

    def many(self, calls: list[tuple[str, ...]]) -> list[dict[str, Any] | Exception]:
        """Each call's JSON, or the exception that says why there is none, in the calls' order."""
        with (
            tempfile.TemporaryDirectory(prefix="strata-paper-checks.") as tmp,
            ThreadPoolExecutor(max_workers=self.PARALLEL) as pool,
        ):
            futures = [pool.submit(self._one, args, Path(tmp), i) for i, args in enumerate(calls)]
            out: list[dict[str, Any] | Exception] = []
            for f in futures:
                try:
                    out.append(f.result())
                except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
                    out.append(e)
            return out

    def json(self, *args: str) -> dict[str, Any]:
        result = self.many([args])[0]
        if isinstance(result, Exception):
            raise RuntimeError(str(result)) from result
        return result

    def stripe_count(self, nodes: int, *extra: str) -> int:
        return int(self.json(*advise_call(nodes, *extra))["stripe_count"])


def advise_call(nodes: int, *extra: str, fs: str = "lustre") -> tuple[str, ...]:
    return ("advise", "--fs", fs, "--nodes", str(nodes), *extra)
