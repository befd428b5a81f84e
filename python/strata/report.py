"""The HTML report: DIR/index.html with the plots (PNG files beside it), the tables and the environment.

Computed first (report_data: the campaign's statistics, its paper checks, its runs and environments,
the plots written), then rendered (templates/report.html.j2, autoescaped)."""

from __future__ import annotations

import json
import math
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import paper_checks, plot
from .launch import find_strata
from .stats import CampaignStats, CellStats, Summary, campaign_stats, level_text, ratio_table
from .store import Store
from .templates import environment


def _f(value: float | None, digits: int = 1) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _interval(s: Summary) -> str:
    return "none (one launch)" if s.launches < 2 else f"[{_f(s.ci_low)}, {_f(s.ci_high)}] ({level_text(s)})"


def _kruskal_text(phase: str, cell: CellStats) -> str:
    k = cell.kruskal
    if k is None:
        return (
            f"{phase}: Kruskal–Wallis not applicable (fewer than two variants with two launches or "
            "more, or identical values)"
        )
    verdict = "the variants differ" if k.p < 0.01 else "no significant difference"
    launches = sum(c.bandwidth.launches for c in cell.configs if c.bandwidth.launches > 1)
    return (
        f"{phase}: Kruskal–Wallis H = {k.h:.2f}, p = {k.p:.3g} over {k.groups} variants' launch "
        f"medians ({launches} launches; {verdict} at p < 0.01)"
    )


def _cell_rows(cells: dict[str, CellStats], labels: list[str]) -> list[dict[str, Any]]:
    """One row per variant and phase of a cell, its numbers as the table shows them."""
    rows = []
    for label in labels:
        for phase, cell in cells.items():
            c = next((x for x in cell.configs if x.label == label), None)
            if c is None:
                continue
            s, b = c.bandwidth, c.breakdown
            rows.append(
                {
                    "label": label,
                    "phase": phase,
                    "shape": s.shape,
                    "median": _f(s.median),
                    "interval": _interval(s),
                    "mean": _f(s.mean),
                    "std": _f(s.std),
                    "ratio": _f(c.ratio, 2),
                    "time_ms": _f(c.time_s.median * 1e3, 2),
                    "breakdown_ms": " / ".join(_f(b[k] * 1e3, 2) for k in ("open_s", "xfer_s", "close_s")),
                    "runs": f"{c.runs_ok} / {c.runs_failed}",
                }
            )
    return rows


@dataclass
class CellSection:
    name: str
    slug: str
    rows: list[dict[str, Any]]
    tests: list[str]
    drains: list[dict[str, Any]] = field(default_factory=list)


def drain_rows(runs: list[Any]) -> dict[str, list[dict[str, Any]]]:
    """Burst-buffer writes (docs/drain.md), per cell: each variant's median time until the program
    could go on and until the data was durable on the target, from the runs' records
    (repetitions[i].write.engine.drain); variants whose writes did not drain are left out."""
    moments: dict[tuple[str, str], dict[str, list[float]]] = {}
    for r in runs:
        if r["status"] != "ok" or not r["record"]:
            continue
        for rep in json.loads(r["record"]).get("repetitions", []):
            d = ((rep.get("write") or {}).get("engine") or {}).get("drain")
            if not d:
                continue
            m = moments.setdefault((r["cell"], r["label"]), {"return_s": [], "durable_s": [], "fallback": []})
            m["return_s"].append(d.get("return_s", 0.0))
            m["durable_s"].append(d.get("durable_s", 0.0))
            m["fallback"].append(1.0 if d.get("fallback") else 0.0)
    out: dict[str, list[dict[str, Any]]] = {}
    for (cell, label), m in sorted(moments.items()):
        out.setdefault(cell, []).append(
            {
                "label": label,
                "writes": len(m["return_s"]),
                "return_ms": _f(statistics.median(m["return_s"]) * 1e3, 2),
                "durable_ms": _f(statistics.median(m["durable_s"]) * 1e3, 2),
                "fallbacks": int(sum(m["fallback"])),
            }
        )
    return out


@dataclass
class ReportData:
    """What the report shows, computed: the renderer (templates/report.html.j2) only lays it out."""

    stats: CampaignStats
    campaign: dict[str, Any] | None
    summary: str  # the ratio table, as text
    papers: list[paper_checks.Section]
    cells: list[CellSection]
    sweeps: list[Path]
    environments: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    sessions: list[dict[str, Any]]
    figures: dict[str, Any] = field(default_factory=dict)


def report_data(db_path: Path | str, out_dir: Path, name: str | None = None, baseline: str | None = None) -> ReportData:
    """Reads the results, computes the statistics and the paper checks, writes the plots into out_dir."""
    with Store(db_path, readonly=True) as store:
        cs: CampaignStats = campaign_stats(store, name, baseline)
        cid = cs.campaign_id
        campaign = store.campaign(cs.name)
        runs = store.runs(cid)
        envs = store.environments(cid)
        sessions = store.sessions(cid)
        # The paper checks ask a strata binary: STRATA_BIN, else the campaign's, else this tree's.
        stored = Path(campaign["strata"]) if campaign is not None else None
        usable = stored is not None and stored.exists() and not os.environ.get("STRATA_BIN")
        strata = stored if usable and stored is not None else find_strata()
        papers = paper_checks.sections(store, cs.name, cid, Path(db_path), strata)
        rank_times: dict[str, dict[tuple[str, str], list[float]]] = {}
        for r in store.rank_times(cid):
            rank_times.setdefault(r["cell"], {}).setdefault((r["label"], r["phase"]), []).append(r["time_s"])
    figures = plot.all_plots(cs, out_dir, rank_times)
    by_cell: dict[str, dict[str, CellStats]] = {}
    for c in cs.cells:
        by_cell.setdefault(c.cell, {})[c.phase] = c
    drains = drain_rows(runs)
    cells = [
        CellSection(
            cell,
            plot.slug(cell),
            _cell_rows(phases, cs.labels),
            [_kruskal_text(p, c) for p, c in phases.items()],
            drains.get(cell, []),
        )
        for cell, phases in by_cell.items()
    ]
    environments = []
    for e in envs:
        hints = json.loads(e["hints"] or "{}")
        environments.append({**dict(e), "hint_text": ", ".join(f"{k}={v}" for k, v in sorted(hints.items())) or "–"})
    return ReportData(
        stats=cs,
        campaign=dict(campaign) if campaign is not None else None,
        summary=ratio_table(cs),
        papers=papers,
        cells=cells,
        sweeps=list(figures["sweep"]),
        environments=environments,
        failures=[dict(r) for r in runs if r["status"] != "ok"],
        sessions=[dict(s) for s in sessions],
        figures=figures,
    )


def render_html(data: ReportData) -> str:
    return environment().get_template("report.html.j2").render(d=data, s=data.stats)


def write_report(db_path: Path | str, out: Path | str, name: str | None = None, baseline: str | None = None) -> Path:
    """Writes OUT/index.html and its PNGs from a results database; returns the index path."""
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    index = out_dir / "index.html"
    index.write_text(render_html(report_data(db_path, out_dir, name, baseline)))
    return index
