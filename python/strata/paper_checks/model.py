"""The paper checks' data: a check, a table of checks, a paper's section; and the campaign's runs
they are computed from (a launch's value is the median of its repetitions, a configuration's the
median over its launches)."""

from __future__ import annotations

import json
import statistics
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..store import Store


@dataclass
class Check:
    item: str
    paper: str
    strata: str
    ok: bool | None  # None: a performance comparison or a value this campaign cannot measure
    note: str = ""


@dataclass
class Table:
    name: str  # "Table I", "Fig. 14", ...
    caption: str
    checks: list[Check] = field(default_factory=list)


@dataclass
class Section:
    paper: str
    scale_here: str
    scale_paper: str
    tables: list[Table] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.paper}: " + ", ".join(t.name for t in self.tables)

    def verdicts(self) -> list[bool]:
        return [c.ok for t in self.tables for c in t.checks if c.ok is not None]


# -- the campaign's measurements ----------------------------------------------------------------------


@dataclass
class Run:
    label: str
    kernel: str
    backend: str
    ranks: int
    params: dict[str, Any]  # the configuration's, as in the campaign file
    hints: dict[str, Any]
    record: dict[str, Any]
    verified: bool


def launch_median(record: dict[str, Any], phase: str, value: Callable[[dict[str, Any]], float | None]) -> float | None:
    values = [v for rep in record.get("repetitions", []) if phase in rep for v in [value(rep[phase])] if v is not None]
    return float(statistics.median(values)) if values else None


def median_over_launches(
    runs: Iterable[Run], value: Callable[[dict[str, Any]], float | None], phase: str = "write"
) -> float | None:
    """The median over launches of each launch's median (a launch is the unit of replication)."""
    per_launch = [m for r in runs for m in [launch_median(r.record, phase, value)] if m is not None]
    return float(statistics.median(per_launch)) if per_launch else None


def phase_time(p: dict[str, Any]) -> float | None:
    return p.get("time_s")


def phase_bandwidth(p: dict[str, Any]) -> float | None:
    return p.get("bandwidth_mib_s")


def load_runs(store: Store, campaign_id: int) -> list[Run]:
    out = []
    for r in store.runs(campaign_id):
        if r["status"] != "ok" or not r["record"]:
            continue
        out.append(
            Run(
                r["label"],
                r["kernel"],
                r["backend"],
                int(r["ranks"]),
                json.loads(r["params"] or "{}"),
                json.loads(r["hints"] or "{}"),
                json.loads(r["record"]),
                bool(r["verified"]),
            )
        )
    return out


def scale_of(runs: list[Run], campaign: str, campaign_toml: str = "") -> str:
    """Where the campaign measured: ranks, nodes, file system, host, and the scale profile — the
    file's [scale.NAME] whose NAME the campaign's name ends with (strata-bench run --scale NAME)."""
    if not runs:
        return "nothing measured"
    ranks = sorted({r.ranks for r in runs})
    nodes = sorted({int(r.record.get("nodes", 1)) for r in runs})
    fs = sorted({str(r.record.get("fs_type", "?")) for r in runs})
    hosts = sorted({str(r.record.get("host", "?")) for r in runs})
    try:
        profiles = tomllib.loads(campaign_toml).get("scale", {}) if campaign_toml else {}
    except tomllib.TOMLDecodeError:
        profiles = {}
    profile = next(
        (f"{name} (--scale {name})" for name in profiles if campaign.endswith(f"-{name}")),
        "the file as written (laptop)",
    )
    virtual = any(r.record.get("node_map", {}).get("virtual") for r in runs)
    return (
        f"{'/'.join(map(str, ranks))} ranks on {'/'.join(map(str, nodes))} {'virtual ' if virtual else ''}"
        f"node(s), {', '.join(fs)}, host {', '.join(hosts)}; profile {profile}"
    )
