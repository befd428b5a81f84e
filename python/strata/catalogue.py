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
class CampaignSwitch:
    """A `strata run` flag that is a campaign-wide switch (`fsync`): its row in
    src/run/run_options.cpp says so, and the harness follows from that row alone. It is a boolean
    key of [campaign] (default false), `--NAME` on every launch when true, and one of its labels
    in the statistics' conditions ("fsync not included")."""

    name: str
    help: str
    label_on: str
    label_off: str

    def label(self, on: bool) -> str:
        return self.label_on if on else self.label_off


@dataclass(frozen=True)
class SwitchState:
    """A campaign-wide switch as a campaign set it, with the label that says so."""

    name: str
    on: bool
    label: str


@dataclass(frozen=True)
class StrataCatalogue:
    """Kernels, backends and each kernel's options, as one strata binary reports them."""

    kernels: tuple[str, ...]
    backends: tuple[str, ...]
    # Every option `strata run KERNEL` takes: the run options of its kind and its own.
    kernel_options: dict[str, tuple[str, ...]]
    # Application kernels (MSLIO, PACE3D) choose a mode, not a backend: kernel -> (option, modes).
    kernel_modes: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # The run options that are campaign-wide switches, in the catalogue's order.
    switches: tuple[CampaignSwitch, ...] = ()
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
        switches = tuple(
            CampaignSwitch(o["name"], o["help"], o["campaign_switch"]["label_on"], o["campaign_switch"]["label_off"])
            for o in doc["run_options"]
            if "campaign_switch" in o
        )
        return StrataCatalogue(kernels, backends, options, modes, switches, raw=doc)

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
