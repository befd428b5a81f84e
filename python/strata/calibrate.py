"""Calibrating the Lustre stripe-count rule on the user's own file system.

The advisor's stripe count, 5.6·N + 4.9 for N nodes, is the Hazel Hen striping paper's fit for its
ws9 file system (54 OSTs); 5N + 3 is the fit of a study on its predecessor (168 OSTs). The authors
derived it like this (sections 5.1.1 and 6): for each node count, the stripe count whose median
write rate was the highest, then a linear least-squares fit of that best stripe count against the
node count. `fit` does the same with a campaign's measurements and evaluates both published fits
at the same node counts; `load_rows` reads the measurements from a RESULTS.sqlite written by the
harness.

Choices the paper leaves open, and what this module does:
- a configuration's bandwidth is the median over its runs, each run contributing the median of its
  in-launch repetitions (the paper takes medians at every level);
- equal medians at one node count: the smaller stripe count wins (same speed, fewer OSTs);
- a node count measured with a single stripe count has no best one and is left out of the fit,
  with a note (a campaign that sets no striping hints records only what the advisor chose, so
  fitting it would return the paper's rule);
- a best stripe count at the edge of the range measured at that node count is kept but flagged:
  the optimum may lie beyond it.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from .store import Store

# name -> (slope, intercept, where it comes from); exact decimals, as the advisor computes in tenths
PAPER_FITS: dict[str, tuple[Fraction, Fraction, str]] = {
    "5.6N+4.9": (Fraction("5.6"), Fraction("4.9"), "Hazel Hen striping paper, sec. 5.1.1 and 6: ws9, 54 OSTs"),
    "5N+3": (Fraction(5), Fraction(3), "Hazel Hen striping paper, sec. 5.1.1: ws9's predecessor, 168 OSTs"),
}

# Where a run's stripe count may be recorded, in the order they are tried: ROMIO's key, OMPIO's key.
STRIPE_HINTS = ("striping_factor", "stripe_width")
STRIPE_PARAMS = ("stripe_count", "stripe-count")


class CalibrationError(ValueError):
    """The measurements cannot give a fit; the message says what the campaign must vary."""


@dataclass(frozen=True)
class Row:
    """One measurement: a run's write bandwidth with the nodes and the stripe count it ran on."""

    nodes: int
    stripe_count: int
    bandwidth_mib_s: float


@dataclass
class Point:
    """One node count: the stripe count with the best median bandwidth, and the fits there."""

    nodes: int
    best_stripe_count: int
    best_median_mib_s: float
    medians_mib_s: dict[int, float]  # stripe count -> median bandwidth over its rows
    runs: int  # rows (runs) at this node count
    at_edge: bool  # best is the largest stripe count measured at this node count
    fitted: float = math.nan
    paper: dict[str, float] = field(default_factory=dict)  # fit name -> value at N
    paper_rounded: dict[str, int] = field(default_factory=dict)  # as strata advise rounds it


@dataclass
class PaperComparison:
    name: str
    slope: float
    intercept: float
    source: str
    rmse: float  # root-mean-square deviation from the measured best stripe counts
    r2: float  # 1 - SS_res / SS_tot of that line against them (may be negative)


@dataclass
class Calibration:
    slope: float
    intercept: float
    r2: float  # nan when every node count has the same best stripe count
    rmse: float
    node_counts: int  # node counts used in the fit
    points: list[Point]
    paper: list[PaperComparison]
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (nodes, why) left out of the fit
    notes: list[str] = field(default_factory=list)  # about the data used (from the loader)
    slope_exact: Fraction | None = None  # the same line as exact fractions (strata advise --rule reads them)
    intercept_exact: Fraction | None = None

    def to_json(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {
            "slope": self.slope,
            "intercept": self.intercept,
            "slope_exact": str(self.slope_exact if self.slope_exact is not None else Fraction(repr(self.slope))),
            "intercept_exact": str(
                self.intercept_exact if self.intercept_exact is not None else Fraction(repr(self.intercept))
            ),
            "r2": num(self.r2),
            "rmse": self.rmse,
            "node_counts": self.node_counts,
            "rule": f"stripe count = {self.slope:.3f} N + {self.intercept:.3f}",
            "points": [
                {
                    "nodes": p.nodes,
                    "best_stripe_count": p.best_stripe_count,
                    "best_median_mib_s": p.best_median_mib_s,
                    "at_edge": p.at_edge,
                    "runs": p.runs,
                    "median_mib_s_by_stripe_count": {str(k): v for k, v in sorted(p.medians_mib_s.items())},
                    "fitted": p.fitted,
                    "paper": p.paper,
                    "paper_rounded": p.paper_rounded,
                }
                for p in self.points
            ],
            "paper": {
                c.name: {
                    "slope": c.slope,
                    "intercept": c.intercept,
                    "source": c.source,
                    "rmse": c.rmse,
                    "r2": num(c.r2),
                }
                for c in self.paper
            },
            "skipped": [{"nodes": n, "reason": why} for n, why in self.skipped],
            "notes": self.notes,
        }


def advisor_round(slope: Fraction, intercept: Fraction, nodes: int) -> int:
    """slope·N + intercept rounded halves up, exactly (src/advise/striping.cpp computes in tenths)."""
    return math.floor(slope * nodes + intercept + Fraction(1, 2))


def least_squares(xs: Sequence[int], ys: Sequence[int]) -> tuple[Fraction, Fraction]:
    """Slope and intercept of the least-squares line y = a x + b, exactly (the points are integers)."""
    n, sx, sy = len(xs), sum(xs), sum(ys)
    den = n * sum(x * x for x in xs) - sx * sx
    if den == 0:
        raise CalibrationError("a line needs at least two different node counts")
    slope = Fraction(n * sum(x * y for x, y in zip(xs, ys, strict=True)) - sx * sy, den)
    return slope, (sy - slope * sx) / n


def line_quality(xs: Sequence[int], ys: Sequence[int], slope: Fraction, intercept: Fraction) -> tuple[float, float]:
    """R² (1 - SS_res / SS_tot; nan when every y is equal; negative when the line is worse than the mean)
    and the root-mean-square deviation of the line a x + b from the points."""
    mean = Fraction(sum(ys), len(ys))
    ss_res = sum((y - (slope * x + intercept)) ** 2 for x, y in zip(xs, ys, strict=True))
    ss_tot = sum((y - mean) ** 2 for y in ys)
    r2 = math.nan if ss_tot == 0 else float(1 - ss_res / ss_tot)
    return r2, math.sqrt(ss_res / len(ys))


def fit(rows: Iterable[Row | tuple[int, int, float]]) -> Calibration:
    """Best stripe count per node count (by median bandwidth) and its least-squares line in N.

    Raises CalibrationError when fewer than two node counts have two or more stripe counts measured.
    """
    by_point: dict[int, dict[int, list[float]]] = {}
    for row in rows:
        r = row if isinstance(row, Row) else Row(*row)
        if r.nodes < 1 or r.stripe_count < 1:
            raise CalibrationError(f"nodes and stripe count must be positive (got {r.nodes} and {r.stripe_count})")
        by_point.setdefault(int(r.nodes), {}).setdefault(int(r.stripe_count), []).append(float(r.bandwidth_mib_s))
    points: list[Point] = []
    skipped: list[tuple[int, str]] = []
    for nodes in sorted(by_point):
        medians = {sc: float(statistics.median(v)) for sc, v in sorted(by_point[nodes].items())}
        if len(medians) < 2:
            only = next(iter(medians))
            skipped.append((nodes, f"only stripe count {only} measured"))
            continue
        best = max(medians, key=lambda sc: (medians[sc], -sc))  # ties: the smaller stripe count
        points.append(
            Point(
                nodes,
                best,
                medians[best],
                medians,
                sum(len(v) for v in by_point[nodes].values()),
                at_edge=best == max(medians),
            )
        )
    measured = (
        "; ".join(
            f"{n} node{'s' if n != 1 else ''}: {len(by_point[n])} stripe "
            f"count{'s' if len(by_point[n]) != 1 else ''}"
            for n in sorted(by_point)
        )
        or "none"
    )
    if len(by_point) < 2:
        raise CalibrationError(
            f"the runs cover {len(by_point)} node count{'s' if len(by_point) != 1 else ''} ({measured}) and a line "
            "needs at least 2: run the campaign at several node counts (more ranks at the same ranks per node, or "
            "virtual nodes with STRATA_RANKS_PER_NODE), varying the striping_factor hint at each"
        )
    if len(points) < 2:
        raise CalibrationError(
            f"only {len(points)} of {len(by_point)} node counts have 2 or more stripe counts measured "
            f"({measured}), and a line needs 2: vary the striping_factor hint at every node count "
            "(one [[variants]] per stripe count)"
        )
    xs = [p.nodes for p in points]
    ys = [p.best_stripe_count for p in points]
    slope, intercept = least_squares(xs, ys)
    r2, rmse = line_quality(xs, ys, slope, intercept)
    comparisons = []
    for name, (ps, pi, source) in PAPER_FITS.items():
        pr2, prmse = line_quality(xs, ys, ps, pi)
        comparisons.append(PaperComparison(name, float(ps), float(pi), source, prmse, pr2))
    for p in points:
        p.fitted = float(slope * p.nodes + intercept)
        p.paper = {name: float(ps * p.nodes + pi) for name, (ps, pi, _) in PAPER_FITS.items()}
        p.paper_rounded = {name: advisor_round(ps, pi, p.nodes) for name, (ps, pi, _) in PAPER_FITS.items()}
    return Calibration(
        float(slope),
        float(intercept),
        r2,
        rmse,
        len(points),
        points,
        comparisons,
        skipped,
        slope_exact=slope,
        intercept_exact=intercept,
    )


# -- reading a campaign's results --------------------------------------------------------------------


@dataclass
class Loaded:
    rows: list[Row]
    campaign: str
    notes: list[str]


def _positive_int(value: Any) -> int | None:
    try:
        n = int(str(value).strip())
    except ValueError:
        return None
    return n if n > 0 else None


def stripe_count_of(
    record: dict[str, Any], requested: dict[str, Any], params: dict[str, Any]
) -> tuple[int, str] | None:
    """The stripe count a run used and where it was found: the hints in effect (what the file got),
    then the hints requested, then a campaign parameter; None when none records one."""
    sources = (
        ("hints in effect", record.get("hints") or {}),
        ("hints requested", {**requested, **(record.get("hints_requested") or {})}),
        ("parameter", params),
    )
    for where, table in sources:
        for key in STRIPE_PARAMS if where == "parameter" else STRIPE_HINTS:
            if key in table:
                n = _positive_int(table[key])
                if n is not None:
                    return n, f"{where} {key}"
    return None


def load_rows(
    path: Path | str,
    campaign: str | None = None,
    backend: str | None = None,
    kernel: str | None = None,
    unverified: bool = False,
) -> Loaded:
    """One row per successful (and verified) write run of the campaign: the nodes of its record, its
    stripe count and the median write bandwidth over its in-launch repetitions."""
    with Store(path, readonly=True) as store:
        row = store.campaign(campaign)
        if row is None:
            raise LookupError(f"{store.path}: no campaign" + (f" named {campaign!r}" if campaign else ""))
        cid, name = int(row["id"]), str(row["name"])
        runs = store.runs(cid)
        write_bw: dict[int, list[float]] = {}
        for s in store.samples(cid):
            if s["phase"] == "write":
                write_bw.setdefault(int(s["run_id"]), []).append(float(s["bandwidth_mib_s"]))

    what = "successful" + ("" if unverified else ", verified") + " write runs"
    selection = "".join([f" of backend {backend!r}" if backend else "", f" of kernel {kernel!r}" if kernel else ""])
    ok = [r for r in runs if r["status"] == "ok" and int(r["id"]) in write_bw]
    chosen = [
        r
        for r in ok
        if backend in (None, r["backend"]) and kernel in (None, r["kernel"]) and (unverified or r["verified"] == 1)
    ]
    if not chosen:
        failed = sum(1 for r in runs if r["status"] != "ok")
        if not ok:
            why = (
                f'{len(runs)} runs stored, {failed} failed: the campaign must write (operations with "write") '
                "at several node counts, with the striping_factor hint varied"
            )
        else:
            selected = [r for r in ok if backend in (None, r["backend"]) and kernel in (None, r["kernel"])]
            if not selected:
                why = (
                    f"the {len(ok)} successful write runs are of backend(s) "
                    f"{', '.join(sorted({r['backend'] for r in ok}))} and kernel(s) "
                    f"{', '.join(sorted({r['kernel'] for r in ok}))}"
                )
            else:
                why = (
                    f"{len(selected)} successful write runs, none verified: set verify = true in the campaign, "
                    "or pass --unverified"
                )
        raise CalibrationError(f"campaign {name!r}: no {what}{selection}: {why}")

    rows: list[Row] = []
    sources: dict[str, int] = {}
    without = 0
    for r in chosen:
        record = json.loads(r["record"] or "{}")
        params = json.loads(r["params"] or "{}")
        requested = json.loads(r["hints"] or "{}")  # the variant's hints in the campaign file
        found = stripe_count_of(record, requested, params)
        nodes = _positive_int(record.get("nodes"))
        if found is None or nodes is None:
            without += 1
            continue
        count, source = found
        sources[source] = sources.get(source, 0) + 1
        rows.append(Row(nodes, count, float(statistics.median(write_bw[int(r["id"])]))))
    if not rows:
        raise CalibrationError(
            f"campaign {name!r}: none of its {len(chosen)} {what}{selection} records a stripe count: give the "
            "[[variants]] a striping_factor hint (ROMIO; stripe_width for OMPIO), one variant per stripe count, "
            "and run them at several node counts"
        )

    notes = [
        f"{len(rows)} {what}{selection} of campaign {name!r}; stripe count from "
        + ", ".join(f"{src} ({n})" for src, n in sorted(sources.items()))
    ]
    if without:
        notes.append(f"{without} runs record no stripe count and are left out")
    for label, values in (("backends", {r["backend"] for r in chosen}), ("kernels", {r["kernel"] for r in chosen})):
        if len(values) > 1:
            flag = "--backend" if label == "backends" else "--kernel"
            notes.append(f"the runs mix {len(values)} {label} ({', '.join(sorted(values))}); choose one with {flag}")
    fs_types = sorted({str(json.loads(r["record"] or "{}").get("fs_type", "unknown")) for r in chosen})
    if "lustre" not in fs_types:
        notes.append(
            f"the runs wrote to {', '.join(fs_types)}, where MPI-IO striping hints have no effect (they do "
            "on Lustre): these best stripe counts show noise, not the file system"
        )
    varying = _varying_params(json.loads(r["params"] or "{}") for r in chosen)
    if varying:
        notes.append(
            f"the runs mix values of {', '.join(varying)}: the best stripe count may depend on them "
            "(the paper fits one block size)"
        )
    return Loaded(rows, name, notes)


def _varying_params(params: Iterable[dict[str, Any]]) -> list[str]:
    seen: dict[str, set[str]] = {}
    for p in params:
        for k, v in p.items():
            seen.setdefault(k, set()).add(str(v))
    return sorted(k for k, v in seen.items() if len(v) > 1 and k not in STRIPE_PARAMS)


def calibrate(
    path: Path | str,
    campaign: str | None = None,
    backend: str | None = None,
    kernel: str | None = None,
    unverified: bool = False,
) -> Calibration:
    loaded = load_rows(path, campaign, backend, kernel, unverified)
    try:
        result = fit(loaded.rows)
    except CalibrationError as e:
        raise CalibrationError(f"campaign {loaded.campaign!r}: {e}") from e
    result.notes = loaded.notes
    return result


# -- text output ------------------------------------------------------------------------------------


def _fmt_r2(r2: float) -> str:
    return "n/a" if math.isnan(r2) else f"{r2:.3f}"


def table(c: Calibration) -> str:
    """The terminal report: one line per node count, then the fitted line beside the paper's."""
    names = list(PAPER_FITS)
    header = f"{'nodes':>5s}  {'best stripe count':>17s}  {'median MiB/s':>12s}  {'fitted':>7s}  " + "  ".join(
        f"{'paper ' + n:>14s}" for n in names
    )
    lines = [
        "Stripe-count calibration: for each node count the stripe count with the best median write",
        "bandwidth, then a least-squares line through them (Hazel Hen striping paper, sec. 5.1.1 and 6)",
        "",
        header,
    ]
    for p in c.points:
        best = f"{p.best_stripe_count}{'*' if p.at_edge else ''}"
        lines.append(
            f"{p.nodes:5d}  {best:>17s}  {p.best_median_mib_s:12.1f}  {p.fitted:7.1f}  "
            + "  ".join(f"{p.paper_rounded[n]:14d}" for n in names)
        )
    lines.append("")
    sign = "+" if c.intercept >= 0 else "-"
    rule = f"{c.slope:.2f} N {sign} {abs(c.intercept):.2f}"
    lines.append(
        f"fit     stripe count = {rule:<16s} R² {_fmt_r2(c.r2)} over {c.node_counts} node counts, "
        f"RMS deviation {c.rmse:.2f}"
    )
    for cmp in c.paper:
        rule = f"{cmp.slope:g} N + {cmp.intercept:g}"
        lines.append(f"paper   stripe count = {rule:<16s} RMS deviation {cmp.rmse:.2f} from the best stripe counts")
        lines.append(f"        [{cmp.source}]")
    lines.append("")
    lines.append("paper columns: rounded as strata advise rounds them (halves up), before any cap at the OSTs")
    if any(p.at_edge for p in c.points):
        lines.append(
            "* the largest stripe count measured at that node count: the best one may be larger "
            "(measure higher stripe counts)"
        )
    if math.isnan(c.r2):
        lines.append("R² n/a: every node count has the same best stripe count")
    for nodes, why in c.skipped:
        lines.append(f"left out: {nodes} node(s): {why}")
    lines.extend(f"note: {n}" for n in c.notes)
    return "\n".join(lines)


def write_json(c: Calibration, path: Path | str) -> None:
    Path(path).write_text(json.dumps(c.to_json(), indent=2) + "\n")
