"""What a strata binary offers, from `strata info --catalogue --json`: kernels with their options,
run options, backends with their capabilities, layouts and hints. Nothing here parses help text."""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .launch import run_environment


class CatalogueError(RuntimeError):
    """The binary could not say what it offers."""


@dataclass(frozen=True)
class StrataCatalogue:
    """Kernels, backends and each kernel's options, as one strata binary reports them."""

    kernels: tuple[str, ...]
    backends: tuple[str, ...]
    # Every option `strata run KERNEL` takes: the run options of its kind and its own.
    kernel_options: dict[str, tuple[str, ...]]
    # Application kernels (MSLIO, PACE3D) choose a mode, not a backend: kernel -> (option, modes).
    kernel_modes: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def from_binary(strata: Path) -> StrataCatalogue:
        """Asks `strata info --catalogue --json` (cached per binary and its mtime)."""
        path = strata.resolve()
        return _catalogue(path, path.stat().st_mtime_ns)

    @staticmethod
    def from_json(doc: dict[str, Any]) -> StrataCatalogue:
        kernels = tuple(k["name"] for k in doc["kernels"])
        backends = tuple(b["name"] for b in doc["backends"])
        options: dict[str, tuple[str, ...]] = {}
        modes: dict[str, tuple[str, tuple[str, ...]]] = {}
        for k in doc["kernels"]:
            run = [o["name"] for o in doc["run_options"] if k["kind"] in o["kinds"]]
            names = set(run) | {o["name"] for o in k["options"]}
            if k["kind"] == "application":
                modes[k["name"]] = (k["selector"], tuple(m["name"] for m in k["modes"]))
                names.add(k["selector"])
            options[k["name"]] = tuple(sorted(names))
        return StrataCatalogue(kernels, backends, options, modes, raw=doc)

    def backend(self, name: str) -> dict[str, Any]:
        """The backend's row: summary, file_extension, layouts, mpi_io, options, hints."""
        for b in self.raw["backends"]:
            if b["name"] == name:
                return b
        raise KeyError(name)

    def backends_with(self, layout: str) -> tuple[str, ...]:
        """The backends that can write `layout` (shared, file-per-process, file-per-node)."""
        return tuple(b["name"] for b in self.raw["backends"] if layout in b["layouts"])


@functools.lru_cache(maxsize=8)
def _catalogue(strata: Path, mtime_ns: int) -> StrataCatalogue:
    proc = subprocess.run(
        [str(strata), "info", "--catalogue", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=run_environment(),
    )
    if proc.returncode != 0:
        raise CatalogueError(f"{strata} info --catalogue --json failed ({proc.returncode}): {proc.stderr.strip()}")
    try:
        return StrataCatalogue.from_json(json.loads(proc.stdout))
    except (ValueError, KeyError) as e:
        raise CatalogueError(f"{strata} info --catalogue --json: not a catalogue: {e}") from e
