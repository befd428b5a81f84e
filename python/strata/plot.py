"""Plots of a campaign's statistics, as PNG files (matplotlib's Agg backend: no display needed).

- bandwidth by variant (median of the launch medians) with its confidence interval over launches as error bars
  (none for a single launch), per cell;
- a line over each swept parameter (ranks or a kernel parameter), per kernel;
- a violin of the time samples (per rank when the records carry per-rank times, else per
  repetition), per cell;
- the time breakdown (open, transfer, close medians) as stacked bars, per cell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .stats import CampaignStats, CellStats, ConfigStats, _natural, level_text  # noqa: E402

PHASE_COLOURS = {"write": "#3b6ea5", "read": "#e08a2c"}
BREAKDOWN_COLOURS = {"open_s": "#8fb3d9", "xfer_s": "#3b6ea5", "close_s": "#f2b45c"}
DPI = 90


def _save(fig: plt.Figure, path: Path, title: str | None = None) -> Path:
    """Titles (optionally), lays out, writes and closes a figure."""
    if title is not None:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:80]


def _cells(cs: CampaignStats) -> dict[str, dict[str, CellStats]]:
    out: dict[str, dict[str, CellStats]] = {}
    for c in cs.cells:
        out.setdefault(c.cell, {})[c.phase] = c
    return out


def _err(configs: Sequence[ConfigStats]) -> np.ndarray:
    lows = [max(c.bandwidth.median - c.bandwidth.ci_low, 0.0) for c in configs]
    highs = [max(c.bandwidth.ci_high - c.bandwidth.median, 0.0) for c in configs]
    return np.nan_to_num(np.array([lows, highs]))  # one launch: no interval, no error bar


def bandwidth_bars(cell: str, phases: dict[str, CellStats], labels: Sequence[str], baseline: str, path: Path) -> Path:
    present = [lb for lb in labels if any(any(c.label == lb for c in p.configs) for p in phases.values())]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.0 * len(present) + 2), 4.2))
    x = np.arange(len(present))
    width = 0.8 / max(len(phases), 1)
    for i, (phase, cs) in enumerate(phases.items()):
        configs = {c.label: c for c in cs.configs}
        sel = [configs[lb] for lb in present if lb in configs]
        pos = [x[present.index(c.label)] + (i - (len(phases) - 1) / 2) * width for c in sel]
        levels = sorted({level_text(c.bandwidth) for c in sel})
        shapes = sorted({c.bandwidth.shape for c in sel})
        ax.bar(
            pos,
            [c.bandwidth.median for c in sel],
            width,
            yerr=_err(sel),
            capsize=3,
            color=PHASE_COLOURS.get(phase),
            label=f"{phase} (median of launch medians, {'/'.join(levels)} CI; n = {', '.join(shapes)})",
        )
    ax.set_xticks(
        x, [f"{lb}\n(baseline)" if lb == baseline else lb for lb in present], rotation=20, ha="right", fontsize=8
    )
    ax.set_ylabel("bandwidth [MiB/s]")
    ax.set_title(cell, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def swept_parameters(cs: CampaignStats) -> dict[str, list[str]]:
    """Per kernel, the parameters (and 'ranks') that take more than one value."""
    values: dict[str, dict[str, set[str]]] = {}
    for c in cs.cells:
        d = values.setdefault(c.kernel, {})
        d.setdefault("ranks", set()).add(str(c.ranks))
        for k, v in c.params.items():
            d.setdefault(k, set()).add(v)
        for k in d:
            if k != "ranks" and k not in c.params:
                d[k].add("(unset)")
    return {k: sorted(p for p, vs in d.items() if len(vs) > 1) for k, d in values.items()}


def sweep_lines(cs: CampaignStats, kernel: str, param: str, path: Path) -> Path:
    phases = [p for p in ("write", "read") if any(c.kernel == kernel and c.phase == p for c in cs.cells)]
    fig, axes = plt.subplots(1, len(phases), figsize=(5.2 * len(phases), 4.0), squeeze=False)
    for ax, phase in zip(axes[0], phases, strict=True):
        lines: dict[str, list[tuple[str, ConfigStats]]] = {}
        for cell in cs.cells:
            if cell.kernel != kernel or cell.phase != phase:
                continue
            value = str(cell.ranks) if param == "ranks" else cell.params.get(param, "(unset)")
            others = {k: v for k, v in cell.params.items() if k != param}
            if param != "ranks":
                others["ranks"] = str(cell.ranks)
            rest = " ".join(f"{k}={v}" for k, v in sorted(others.items()) if k != "seed")
            for c in cell.configs:
                lines.setdefault(
                    f"{c.label} {rest}".strip() if len(_distinct_rests(cs, kernel, param)) > 1 else c.label, []
                ).append((value, c))
        xs = sorted({v for pts in lines.values() for v, _ in pts}, key=_natural)
        for name, pts in lines.items():
            pts.sort(key=lambda p: _natural(p[0]))
            ax.errorbar(
                [xs.index(v) for v, _ in pts],
                [c.bandwidth.median for _, c in pts],
                yerr=_err([c for _, c in pts]),
                marker="o",
                capsize=3,
                label=name,
            )
        ax.set_xticks(range(len(xs)), xs)
        ax.set_xlabel(param)
        ax.set_ylabel(f"{phase} bandwidth [MiB/s]")
        ax.set_title(f"{kernel}: {phase} over {param}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, path)


def _distinct_rests(cs: CampaignStats, kernel: str, param: str) -> set[str]:
    rests = set()
    for cell in cs.cells:
        if cell.kernel == kernel:
            others = {k: v for k, v in cell.params.items() if k != param}
            if param != "ranks":
                others["ranks"] = str(cell.ranks)
            rests.add(repr(sorted(others.items())))
    return rests


def time_violins(
    cell: str,
    phases: dict[str, CellStats],
    labels: Sequence[str],
    path: Path,
    rank_times: dict[tuple[str, str], list[float]] | None = None,
) -> Path:
    """Distribution of times per variant; per-rank times when given, else one time per repetition."""
    fig, axes = plt.subplots(1, len(phases), figsize=(5.5 * len(phases), 4.0), squeeze=False)
    what = "per-rank" if rank_times else "per-repetition"
    for ax, (phase, cs) in zip(axes[0], phases.items(), strict=True):
        configs = {c.label: c for c in cs.configs}
        present = [lb for lb in labels if lb in configs]
        data = [np.asarray((rank_times or {}).get((lb, phase)) or configs[lb].times) * 1e3 for lb in present]
        spread = [i for i, d in enumerate(data) if np.unique(d).size > 1]
        if spread:
            parts = ax.violinplot([data[i] for i in spread], positions=spread, showmedians=True, widths=0.8)
            for body in parts["bodies"]:  # type: ignore[attr-defined]
                body.set_facecolor(PHASE_COLOURS.get(phase))
                body.set_alpha(0.5)
        for i, d in enumerate(data):
            jitter = (np.random.default_rng(i).random(d.size) - 0.5) * 0.15
            ax.scatter(i + jitter, d, s=8, color="black", alpha=0.6, zorder=3)
        ax.set_xticks(range(len(present)), present, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel(f"{phase} time [ms]")
        ax.set_title(f"{phase}: {what} times", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    return _save(fig, path, title=cell)


def time_breakdown(cell: str, phases: dict[str, CellStats], labels: Sequence[str], path: Path) -> Path:
    fig, axes = plt.subplots(1, len(phases), figsize=(5.5 * len(phases), 4.0), squeeze=False)
    for ax, (phase, cs) in zip(axes[0], phases.items(), strict=True):
        configs = {c.label: c for c in cs.configs}
        present = [lb for lb in labels if lb in configs]
        bottom = np.zeros(len(present))
        for part, name in (("open_s", "open"), ("xfer_s", "transfer"), ("close_s", "close")):
            heights = np.array([configs[lb].breakdown[part] * 1e3 for lb in present])
            ax.bar(range(len(present)), heights, bottom=bottom, color=BREAKDOWN_COLOURS[part], label=name)
            bottom += heights
        ax.set_xticks(range(len(present)), present, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel(f"{phase} time [ms] (medians)")
        ax.set_title(f"{phase}: time breakdown", fontsize=9)
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    return _save(fig, path, title=cell)


def all_plots(
    cs: CampaignStats, out: Path, rank_times: dict[str, dict[tuple[str, str], list[float]]] | None = None
) -> dict[str, list[Path]]:
    """Every plot of the campaign into `out`; returns {'bandwidth': [...], 'sweep': [...], ...}."""
    out.mkdir(parents=True, exist_ok=True)
    made: dict[str, list[Path]] = {"bandwidth": [], "sweep": [], "violin": [], "breakdown": []}
    for cell, phases in _cells(cs).items():
        s = slug(cell)
        made["bandwidth"].append(bandwidth_bars(cell, phases, cs.labels, cs.baseline, out / f"bandwidth-{s}.png"))
        made["violin"].append(
            time_violins(cell, phases, cs.labels, out / f"violin-{s}.png", (rank_times or {}).get(cell))
        )
        made["breakdown"].append(time_breakdown(cell, phases, cs.labels, out / f"breakdown-{s}.png"))
    for kernel, params in swept_parameters(cs).items():
        for param in params:
            made["sweep"].append(sweep_lines(cs, kernel, param, out / f"sweep-{slug(kernel)}-{slug(param)}.png"))
    return made
