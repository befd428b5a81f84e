"""Statistics over a campaign's results.

A sample is every repetition of every successful run of one configuration (kernel, parameters,
ranks and variant) for one phase. I/O times are not normally distributed (long right tails from
contention), so the summary leads with the median and a bootstrap 95 % confidence interval of the
median, and configurations of one cell are compared with the Kruskal–Wallis H test, which needs no
normality. Ratios are medians divided by the baseline variant's median in the same cell.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import stats as sps

from .store import Store

BOOTSTRAP_SEED = 20260421
BOOTSTRAP_RESAMPLES = 10_000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    mean: float
    std: float           # sample standard deviation (ddof = 1); 0 for a single value
    ci_low: float        # bootstrap confidence interval of the median
    ci_high: float


def bootstrap_median_ci(values: Sequence[float], confidence: float = CONFIDENCE,
                        resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the median; the fixed seed makes reports reproducible."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan)
    if x.size == 1:
        return (float(x[0]), float(x[0]))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    medians = np.median(x[idx], axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(medians, [alpha, 1.0 - alpha])
    return (float(low), float(high))


def summarize(values: Sequence[float], seed: int = BOOTSTRAP_SEED) -> Summary:
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return Summary(0, math.nan, math.nan, math.nan, math.nan, math.nan)
    low, high = bootstrap_median_ci(x, seed=seed)
    std = float(np.std(x, ddof=1)) if x.size > 1 else 0.0
    return Summary(int(x.size), float(np.median(x)), float(np.mean(x)), std, low, high)


@dataclass(frozen=True)
class KruskalResult:
    h: float
    p: float
    groups: int


def kruskal_wallis(groups: Sequence[Sequence[float]]) -> KruskalResult | None:
    """H and p over the non-empty groups; None when fewer than two or when every value is equal."""
    data = [np.asarray(g, dtype=float) for g in groups if len(g) > 0]
    if len(data) < 2:
        return None
    if np.unique(np.concatenate(data)).size < 2:
        return None
    h, p = sps.kruskal(*data)
    return KruskalResult(float(h), float(p), len(data))


def ratio(value: float, baseline: float) -> float:
    if not baseline or math.isnan(baseline) or math.isnan(value):
        return math.nan
    return value / baseline


# -- over a campaign --------------------------------------------------------------------------------

METRICS = ("bandwidth_mib_s", "time_s", "open_s", "xfer_s", "close_s")


@dataclass
class ConfigStats:
    cell: str
    label: str
    kernel: str
    backend: str
    ranks: int
    params: dict[str, str]
    phase: str
    bytes: int
    runs_ok: int
    runs_failed: int
    bandwidth: Summary
    time_s: Summary
    breakdown: dict[str, float]          # median open_s, xfer_s, close_s
    values: list[float] = field(repr=False)  # bandwidth samples
    times: list[float] = field(repr=False)   # total time samples
    ratio: float = math.nan               # median bandwidth / baseline's median bandwidth


@dataclass
class CellStats:
    cell: str
    kernel: str
    ranks: int
    params: dict[str, str]
    phase: str
    configs: list[ConfigStats]
    kruskal: KruskalResult | None
    baseline: str = ""  # the cell's baseline: the campaign's, or the first variant the cell was run with


@dataclass
class CampaignStats:
    name: str
    campaign_id: int
    seed: int
    baseline: str
    total_runs: int
    runs_ok: int
    runs_failed: int
    cells: list[CellStats]
    labels: list[str]        # variants in campaign order
    verify: bool = True
    fsync: bool = False
    all_verified: bool = True  # every successful run reported verified data

    @property
    def conditions(self) -> str:
        """What the numbers include, said every time they are shown."""
        fsync = "fsync included" if self.fsync else "fsync not included"
        if not self.verify:
            checked = "data NOT verified"
        elif self.all_verified:
            checked = "every run verified on read-back"
        else:
            checked = "some runs NOT verified"
        return f"{fsync}, {checked}"

    def to_json(self) -> dict[str, Any]:
        def clean(obj: Any) -> Any:
            if isinstance(obj, float) and math.isnan(obj):
                return None
            if isinstance(obj, dict):
                return {k: clean(v) for k, v in obj.items()}
            if isinstance(obj, list):
                return [clean(v) for v in obj]
            return obj
        return clean(asdict(self))


def campaign_stats(store: Store, name: str | None = None, baseline: str | None = None) -> CampaignStats:
    row = store.campaign(name)
    if row is None:
        raise LookupError(f"{store.path}: no campaign" + (f" named {name!r}" if name else ""))
    cid = int(row["id"])
    base = baseline or row["baseline"]
    runs = store.runs(cid)
    labels: list[str] = []
    for r in store.db.execute("SELECT label FROM configurations WHERE campaign_id = ? ORDER BY id", (cid,)):
        if r[0] not in labels:
            labels.append(r[0])
    if base not in labels:
        raise LookupError(f"baseline {base!r} is not a variant of campaign {row['name']!r} "
                          f"(variants: {', '.join(labels)})")
    failed_by: dict[tuple[str, str], int] = {}
    ok_by: dict[tuple[str, str], int] = {}
    for r in runs:
        target = ok_by if r["status"] == "ok" else failed_by
        target[(r["cell"], r["label"])] = target.get((r["cell"], r["label"]), 0) + 1

    grouped: dict[tuple[str, str, str], list[Any]] = {}
    meta: dict[str, tuple[str, int, dict[str, str]]] = {}
    backend_of: dict[str, str] = {}
    for s in store.samples(cid):
        grouped.setdefault((s["cell"], s["phase"], s["label"]), []).append(s)
        meta[s["cell"]] = (s["kernel"], s["ranks"], json.loads(s["params"]))
        backend_of[s["label"]] = s["backend"]

    cells: list[CellStats] = []
    cell_names = sorted({k[0] for k in grouped}, key=lambda c: (meta[c][0], _natural(c)))
    for cell in cell_names:
        for phase in ("write", "read"):
            configs = []
            for label in labels:
                rows = grouped.get((cell, phase, label))
                if not rows:
                    continue
                bw = [float(x["bandwidth_mib_s"]) for x in rows]
                times = [float(x["time_s"]) for x in rows]
                breakdown = {k: float(np.median([x[k] or 0.0 for x in rows])) for k in ("open_s", "xfer_s", "close_s")}
                kernel, ranks, params = meta[cell]
                configs.append(ConfigStats(
                    cell, label, kernel, backend_of[label], ranks, params, phase, int(rows[0]["bytes"]),
                    ok_by.get((cell, label), 0), failed_by.get((cell, label), 0), summarize(bw), summarize(times),
                    breakdown, bw, times))
            if not configs:
                continue
            # A cell never run with the campaign's baseline (an application kernel's modes) is
            # compared with its own first variant.
            configured = [lb for lb in labels if (cell, lb) in ok_by or (cell, lb) in failed_by]
            cell_base = base if base in configured or not configured else configured[0]
            base_cfg = next((c for c in configs if c.label == cell_base), None)
            for c in configs:
                c.ratio = ratio(c.bandwidth.median, base_cfg.bandwidth.median) if base_cfg else math.nan
            kernel, ranks, params = meta[cell]
            cells.append(CellStats(cell, kernel, ranks, params, phase, configs,
                                   kruskal_wallis([c.values for c in configs]), cell_base))
    ok = sum(1 for r in runs if r["status"] == "ok")
    all_verified = all(r["verified"] == 1 for r in runs if r["status"] == "ok")
    return CampaignStats(row["name"], cid, int(row["seed"]), base, int(row["total_runs"]), ok, len(runs) - ok,
                         cells, labels, bool(row["verify"]), bool(row["fsync"]), all_verified)


def _natural(text: str) -> list[Any]:
    """Sort key that orders 'block-size=64K' before 'block-size=256K' and 2 ranks before 10."""
    import re

    units = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
    out: list[Any] = []
    for part in re.split(r"(\d+[KMG]?)", text):
        m = re.fullmatch(r"(\d+)([KMG]?)", part)
        out.append((0, int(m.group(1)) * units[m.group(2)], "") if m else (1, 0, part))
    return out


# -- text output ------------------------------------------------------------------------------------

def ratio_table(cs: CampaignStats, failures: Sequence[Any] = ()) -> str:
    """The terminal table: per cell, median write and read bandwidth with CI, ratio to the baseline."""
    lines = [f"campaign {cs.name}: {cs.runs_ok} runs ok, {cs.runs_failed} failed of {cs.total_runs}; {cs.conditions}",
             f"median bandwidth in MiB/s [bootstrap 95 % CI], x = ratio to {cs.baseline}, "
             "p = Kruskal-Wallis over the variants"]
    by_cell: dict[str, dict[str, CellStats]] = {}
    for cell in cs.cells:
        by_cell.setdefault(cell.cell, {})[cell.phase] = cell
    width = max([len(label) for label in cs.labels] + [7])
    for cell, phases in by_cell.items():
        lines.append("")
        p_text = "  ".join(f"{ph} p={_p(c.kruskal)}" for ph, c in phases.items())
        own = next(iter(phases.values())).baseline
        against = f", x against {own}" if own and own != cs.baseline else ""
        lines.append(f"{cell}   ({p_text}{against})")
        header = f"  {'variant':{width}s}  {'write MiB/s':>11s} {'[95 % CI]':>17s} {'x':>5s}   " \
                 f"{'read MiB/s':>10s} {'[95 % CI]':>17s} {'x':>5s}  {'n':>3s}"
        lines.append(header)
        for label in cs.labels:
            w = _find(phases.get("write"), label)
            r = _find(phases.get("read"), label)
            if w is None and r is None:
                continue
            n = (w or r).bandwidth.n if (w or r) else 0
            lines.append(f"  {label:{width}s}  {_cols(w)}   {_cols(r, 10)}  {n:3d}")
    if failures:
        lines.append("")
        lines.append("failed runs:")
        for f in failures:
            lines.append(f"  run {f['order_index']} {f['cell']} | {f['label']}: exit {f['exit_code']}: {f['message']}")
    return "\n".join(lines)


def _find(cell: CellStats | None, label: str) -> ConfigStats | None:
    if cell is None:
        return None
    return next((c for c in cell.configs if c.label == label), None)


def _cols(c: ConfigStats | None, width: int = 11) -> str:
    if c is None:
        return f"{'-':>{width}s} {'':17s} {'':5s}"
    s = c.bandwidth
    ci = f"[{s.ci_low:.0f}, {s.ci_high:.0f}]"
    x = "-" if math.isnan(c.ratio) else f"{c.ratio:.2f}"
    return f"{s.median:{width}.1f} {ci:>17s} {x:>5s}"


def _p(k: KruskalResult | None) -> str:
    if k is None:
        return "n/a"
    return f"{k.p:.2g}"
