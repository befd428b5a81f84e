"""Statistics over a campaign's results.

A launch is the unit of replication. The repetitions inside one launch share its job placement,
its page cache and whatever else the machine was doing at that moment, so they are correlated and
are not independent samples: treating 3 launches × 3 repetitions as 9 samples narrows the
intervals and shrinks the p-values of the tests. Every figure here therefore starts from the
*launch medians* (the median of each launch's in-launch repetitions):

- the summary's median is the median of the launch medians;
- its confidence interval is the distribution-free one over the launch medians: the k-th smallest
  and k-th largest launch median, which hold the median of the launch medians' distribution with
  probability 1 − 2·P(Binomial(n, ½) < k) for n launches, whatever that distribution. k is the
  largest that keeps this at 95 % or more; with 5 launches or fewer no k reaches 95 %, and the
  interval is the smallest to the largest launch median at its own level (2 launches 50 %, 3: 75 %,
  4: 87.5 %, 5: 93.75 %; 6 launches reach 96.9 %). The level is said beside every interval;
- configurations of one cell are compared with the Kruskal–Wallis H test over their launch medians,
  which needs no normality.

Ratios are medians divided by the baseline variant's median in the same cell. Every figure carries
how many launches and repetitions stand behind it. (The harness once bootstrapped every repetition
as an independent sample; with correlated repetitions that interval is too narrow and holds the
median far less often than the 95 % it claims: tests/python/test_harness_stats.py measures both.)
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import stats as sps

from .store import Store, campaign_switches

CONFIDENCE = 0.95  # the interval's level when there are launches enough (6 or more)


@dataclass(frozen=True)
class Summary:
    n: int  # values: every in-launch repetition of every launch
    launches: int  # launches: the unit of replication, what the interval and the tests use
    median: float  # median of the launch medians
    mean: float  # mean of every value
    std: float  # sample standard deviation of every value (ddof = 1); 0 for a single value
    ci_low: float  # confidence interval of the median over launch medians; NaN for one launch
    ci_high: float
    ci_level: float  # its confidence level: 0.95 or more from 6 launches on, less below (0 for one)

    @property
    def shape(self) -> str:
        """'3×3': launches × repetitions per launch ('3 launches, 8 values' when they differ)."""
        if self.launches == 0:
            return "0"
        if self.n % self.launches == 0:
            return f"{self.launches}×{self.n // self.launches}"
        return f"{self.launches} launches, {self.n} values"


def launch_medians(launches: Sequence[Sequence[float]]) -> np.ndarray:
    """The median of each non-empty launch's values."""
    return np.asarray([float(np.median(np.asarray(v, dtype=float))) for v in launches if len(v) > 0])


@functools.lru_cache(maxsize=1024)
def order_statistic_level(n: int, k: int) -> float:
    """Probability that the k-th smallest and k-th largest of n independent values hold their
    distribution's median: 1 − 2·P(Binomial(n, ½) ≤ k − 1)."""
    return float(1.0 - 2.0 * sps.binom.cdf(k - 1, n, 0.5)) if 1 <= k <= n // 2 + n % 2 else 0.0


def launch_interval(medians: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(low, high, level): the distribution-free interval of the median over launch medians.

    The k-th smallest and k-th largest launch median for the largest k whose level reaches
    `confidence`; with too few launches for that, the smallest and the largest at their own level.
    NaN and level 0 for fewer than two launches (one launch says nothing about the next one)."""
    x = np.sort(np.asarray(medians, dtype=float))
    n = int(x.size)
    if n < 2:
        return (math.nan, math.nan, 0.0)
    k = 1
    while order_statistic_level(n, k + 1) >= confidence:
        k += 1
    return (float(x[k - 1]), float(x[n - k]), order_statistic_level(n, k))


def summarize(launches: Sequence[Sequence[float]]) -> Summary:
    """Summary of one configuration and phase: `launches` holds each launch's values."""
    groups = [list(v) for v in launches if len(v) > 0]
    x = np.asarray([value for g in groups for value in g], dtype=float)
    if x.size == 0:
        return Summary(0, 0, math.nan, math.nan, math.nan, math.nan, math.nan, 0.0)
    medians = launch_medians(groups)
    low, high, level = launch_interval(medians)
    std = float(np.std(x, ddof=1)) if x.size > 1 else 0.0
    return Summary(int(x.size), len(groups), float(np.median(medians)), float(np.mean(x)), std, low, high, level)


@dataclass(frozen=True)
class KruskalResult:
    h: float
    p: float
    groups: int


def kruskal_wallis(groups: Sequence[Sequence[float]]) -> KruskalResult | None:
    """H and p over the groups of at least two values (launch medians); None when fewer than two
    such groups remain or when every value is equal."""
    data = [np.asarray(g, dtype=float) for g in groups if len(g) > 1]
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
    breakdown: dict[str, float]  # open_s, xfer_s, close_s: medians of the launch medians
    values: list[float] = field(repr=False)  # bandwidth samples, every repetition of every launch
    times: list[float] = field(repr=False)  # total time samples, the same
    launch_bandwidths: list[float] = field(repr=False, default_factory=list)  # one median per launch
    ratio: float = math.nan  # median bandwidth / baseline's median bandwidth


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
    labels: list[str]  # variants in campaign order
    verify: bool = True
    # The campaign-wide switches as the campaign set them: name -> {"on", "label"} (the catalogue's
    # labels, stored with the campaign).
    switches: dict[str, dict[str, Any]] = field(default_factory=dict)
    all_verified: bool = True  # every successful run reported verified data

    @property
    def conditions(self) -> str:
        """What the numbers include, said every time they are shown."""
        if not self.verify:
            checked = "data NOT verified"
        elif self.all_verified:
            checked = "every run verified on read-back"
        else:
            checked = "some runs NOT verified"
        return ", ".join([*(s["label"] for s in self.switches.values()), checked])

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
        raise LookupError(
            f"baseline {base!r} is not a variant of campaign {row['name']!r} " f"(variants: {', '.join(labels)})"
        )
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
                by_launch = _by_launch(rows)
                bw = [[float(x["bandwidth_mib_s"]) for x in launch] for launch in by_launch]
                times = [[float(x["time_s"]) for x in launch] for launch in by_launch]
                breakdown = {
                    k: float(np.median(launch_medians([[x[k] or 0.0 for x in launch] for launch in by_launch])))
                    for k in ("open_s", "xfer_s", "close_s")
                }
                kernel, ranks, params = meta[cell]
                configs.append(
                    ConfigStats(
                        cell,
                        label,
                        kernel,
                        backend_of[label],
                        ranks,
                        params,
                        phase,
                        int(rows[0]["bytes"]),
                        ok_by.get((cell, label), 0),
                        failed_by.get((cell, label), 0),
                        summarize(bw),
                        summarize(times),
                        breakdown,
                        [v for launch in bw for v in launch],
                        [v for launch in times for v in launch],
                        [float(m) for m in launch_medians(bw)],
                    )
                )
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
            cells.append(
                CellStats(
                    cell,
                    kernel,
                    ranks,
                    params,
                    phase,
                    configs,
                    kruskal_wallis([c.launch_bandwidths for c in configs]),
                    cell_base,
                )
            )
    ok = sum(1 for r in runs if r["status"] == "ok")
    all_verified = all(r["verified"] == 1 for r in runs if r["status"] == "ok")
    return CampaignStats(
        row["name"],
        cid,
        int(row["seed"]),
        base,
        int(row["total_runs"]),
        ok,
        len(runs) - ok,
        cells,
        labels,
        bool(row["verify"]),
        campaign_switches(row),
        all_verified,
    )


def _by_launch(rows: Sequence[Any]) -> list[list[Any]]:
    """The samples of one configuration and phase, grouped by the launch (run) they came from."""
    groups: dict[int, list[Any]] = {}
    for row in rows:
        groups.setdefault(int(row["run_id"]), []).append(row)
    return list(groups.values())


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
    lines = [
        f"campaign {cs.name}: {cs.runs_ok} runs ok, {cs.runs_failed} failed of {cs.total_runs}; {cs.conditions}",
        f"median of the launch medians in MiB/s [confidence interval over launches, its level in the last "
        f"column], x = ratio to {cs.baseline},",
        "p = Kruskal-Wallis over the variants' launch medians, n = launches x repetitions per launch",
    ]
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
        header = (
            f"  {'variant':{width}s}  {'write MiB/s':>11s} {'[CI]':>17s} {'x':>5s}   "
            f"{'read MiB/s':>10s} {'[CI]':>17s} {'x':>5s}  {'n':>5s}  {'CI':>4s}"
        )
        lines.append(header)
        for label in cs.labels:
            w = _find(phases.get("write"), label)
            r = _find(phases.get("read"), label)
            if w is None and r is None:
                continue
            s = (w or r).bandwidth
            lines.append(f"  {label:{width}s}  {_cols(w)}   {_cols(r, 10)}  {s.shape:>5s}  {level_text(s):>4s}")
    if failures:
        lines.append("")
        lines.append("failed runs:")
        for f in failures:
            lines.append(f"  run {f['order_index']} {f['cell']} | {f['label']}: exit {f['exit_code']}: {f['message']}")
    return "\n".join(lines)


def level_text(s: Summary) -> str:
    """'95 %', '75 %', or '-' when one launch gives no interval."""
    return f"{math.floor(s.ci_level * 100):.0f} %" if s.launches > 1 else "-"


def _find(cell: CellStats | None, label: str) -> ConfigStats | None:
    if cell is None:
        return None
    return next((c for c in cell.configs if c.label == label), None)


def _cols(c: ConfigStats | None, width: int = 11) -> str:
    if c is None:
        return f"{'-':>{width}s} {'':17s} {'':5s}"
    s = c.bandwidth
    ci = "[one launch]" if math.isnan(s.ci_low) else f"[{s.ci_low:.0f}, {s.ci_high:.0f}]"
    x = "-" if math.isnan(c.ratio) else f"{c.ratio:.2f}"
    return f"{s.median:{width}.1f} {ci:>17s} {x:>5s}"


def _p(k: KruskalResult | None) -> str:
    if k is None:
        return "n/a"
    return f"{k.p:.2g}"
