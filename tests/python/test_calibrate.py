"""strata-bench calibrate / strata advise --calibrate: the stripe-count fit on fixed data, the loader
on databases written by the harness's own store, the errors, and the command end to end."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import BASE_ENV, ROOT, STRATA
from strata.calibrate import (
    PAPER_FITS,
    CalibrationError,
    Row,
    advisor_round,
    calibrate,
    fit,
    load_rows,
    stripe_count_of,
    table,
)
from strata.campaign import Configuration, load
from strata.store import RunResult, Store

# -- the fit on fixed data ----------------------------------------------------------------------------


def peaked_rows(best: dict[int, int], counts: list[int], reps: int = 3) -> list[Row]:
    """Rows whose bandwidth peaks at best[N] for every node count N (1000 MiB/s there, less elsewhere)."""
    return [Row(n, c, 1000.0 - 10.0 * abs(c - b) - r) for n, b in best.items() for c in counts for r in range(reps)]


def test_advisor_rounding_gives_the_issue_table() -> None:
    slope, intercept, _ = PAPER_FITS["5.6N+4.9"]
    # exact decimals: 6 nodes give 38.5 -> 39 (binary floating point would give 38)
    assert [advisor_round(slope, intercept, n) for n in range(1, 9)] == [11, 16, 22, 27, 33, 39, 44, 50]
    slope, intercept, _ = PAPER_FITS["5N+3"]
    assert [advisor_round(slope, intercept, n) for n in (1, 2, 10)] == [8, 13, 53]


def test_points_from_the_paper_rule_give_hand_computed_fit() -> None:
    # Best stripe counts round(5.6 N + 4.9) for N = 1..8: 11 16 22 27 33 39 44 50.
    slope, intercept, _ = PAPER_FITS["5.6N+4.9"]
    best = {n: advisor_round(slope, intercept, n) for n in range(1, 9)}
    c = fit(peaked_rows(best, list(range(4, 61))))
    assert [(p.nodes, p.best_stripe_count) for p in c.points] == list(best.items())
    # Sx = 36, Sy = 242, Sxx = 204, Sxy = 1324, n = 8:
    # slope = (8 * 1324 - 36 * 242) / (8 * 204 - 36^2) = 1880 / 336 = 235/42,
    # intercept = (242 - 36 * 235/42) / 8 = 71/14
    assert c.slope == pytest.approx(235 / 42, abs=1e-12)
    assert c.intercept == pytest.approx(71 / 14, abs=1e-12)
    assert c.node_counts == 8 and not c.skipped
    # residuals y - (235 N + 213) / 42 over SS_tot = Syy - Sy^2 / n
    y = np.array(list(best.values()), dtype=float)
    pred = (235 * np.arange(1, 9) + 213) / 42
    assert c.r2 == pytest.approx(1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2), abs=1e-12)
    assert c.r2 > 0.999
    # the paper's own line at these points: deviations .5 -.1 .3 -.3 .1 .5 -.1 .3 -> RMS sqrt(0.8 / 8)
    paper = {cmp.name: cmp for cmp in c.paper}
    assert paper["5.6N+4.9"].rmse == pytest.approx(math.sqrt(0.1), abs=1e-12)
    assert paper["5N+3"].slope == 5.0 and paper["5N+3"].intercept == 3.0
    for p in c.points:
        assert p.paper_rounded["5.6N+4.9"] == p.best_stripe_count
        assert p.paper["5.6N+4.9"] == pytest.approx(5.6 * p.nodes + 4.9)
        assert p.paper["5N+3"] == 5 * p.nodes + 3
        assert p.fitted == pytest.approx(c.slope * p.nodes + c.intercept)
        assert not p.at_edge


def test_noisy_set_agrees_with_numpy_polyfit() -> None:
    rng = np.random.default_rng(20261122)
    counts = list(range(1, 41))
    true_best = {n: int(round(3.1 * n + 2 + rng.normal(0, 2))) for n in range(1, 11)}
    rows = []
    for n, b in true_best.items():
        for c in counts:
            for _ in range(5):
                # a sharp peak at b, noise well below the 40 MiB/s drop to the neighbours
                rows.append(Row(n, c, 2000.0 - 40.0 * abs(c - b) + rng.normal(0, 5)))
    result = fit(rows)
    xs = np.array(list(true_best), dtype=float)
    ys = np.array(list(true_best.values()), dtype=float)
    assert [p.best_stripe_count for p in result.points] == list(true_best.values())
    slope, intercept = np.polyfit(xs, ys, 1)
    assert result.slope == pytest.approx(slope, rel=1e-9)
    assert result.intercept == pytest.approx(intercept, rel=1e-9, abs=1e-9)
    assert result.r2 == pytest.approx(np.corrcoef(xs, ys)[0, 1] ** 2, rel=1e-9)
    assert result.rmse == pytest.approx(math.sqrt(np.mean((ys - (slope * xs + intercept)) ** 2)), rel=1e-9)


def test_best_is_by_median_ties_go_to_fewer_stripes_and_edges_are_flagged() -> None:
    rows = [
        # 1 node: stripe 2 has the higher mean (400) but the lower median (100) than stripe 4 (200)
        Row(1, 2, 100.0),
        Row(1, 2, 100.0),
        Row(1, 2, 1000.0),
        Row(1, 4, 200.0),
        Row(1, 4, 200.0),
        Row(1, 4, 200.0),
        # 2 nodes: 4 and 8 tie at 300 -> 4
        Row(2, 4, 300.0),
        Row(2, 8, 300.0),
        Row(2, 2, 10.0),
        # 3 nodes: the best is the largest measured -> at the edge
        Row(3, 4, 10.0),
        Row(3, 16, 500.0),
        # 4 nodes: a single stripe count -> left out of the fit
        Row(4, 8, 999.0),
    ]
    c = fit(rows)
    assert [(p.nodes, p.best_stripe_count, p.at_edge) for p in c.points] == [(1, 4, True), (2, 4, False), (3, 16, True)]
    assert c.points[0].medians_mib_s == {2: 100.0, 4: 200.0}
    assert c.skipped == [(4, "only stripe count 8 measured")]
    text = table(c)
    assert "left out: 4 node(s): only stripe count 8 measured" in text
    assert "the best one may be larger" in text


def test_equal_best_everywhere_has_no_r2() -> None:
    c = fit([Row(n, s, 100.0 if s == 8 else 50.0) for n in (1, 2, 3) for s in (4, 8)])
    assert (c.slope, c.intercept, c.rmse) == (0.0, 8.0, 0.0)
    assert math.isnan(c.r2) and c.to_json()["r2"] is None
    assert "R² n/a" in table(c)


def test_fit_errors_say_what_to_vary() -> None:
    with pytest.raises(CalibrationError, match=r"1 node count \(2 nodes: 3 stripe counts\).*several node counts"):
        fit([Row(2, s, 1.0) for s in (2, 4, 8)])
    with pytest.raises(
        CalibrationError,
        match=r"only 1 of 2 node counts .* \(1 node: 2 stripe counts; "
        r"2 nodes: 1 stripe count\).*vary the striping_factor hint",
    ):
        fit([Row(1, 2, 1.0), Row(1, 4, 2.0), Row(2, 4, 1.0)])
    with pytest.raises(CalibrationError, match="0 node counts"):
        fit([])
    with pytest.raises(CalibrationError, match="positive"):
        fit([Row(0, 4, 1.0)])


def test_stripe_count_sources_in_order() -> None:
    assert stripe_count_of(
        {"hints": {"striping_factor": "12"}, "hints_requested": {"striping_factor": "16"}}, {}, {}
    ) == (12, "hints in effect striping_factor")
    assert stripe_count_of({"hints": {"stripe_width": "6"}}, {}, {}) == (6, "hints in effect stripe_width")
    assert stripe_count_of(
        {"hints": {"cb_nodes": "2"}, "hints_requested": {"striping_factor": "16"}}, {"striping_factor": "4"}, {}
    ) == (16, "hints requested striping_factor")
    assert stripe_count_of({}, {"stripe_width": "8"}, {}) == (8, "hints requested stripe_width")
    assert stripe_count_of({}, {}, {"stripe-count": "5"}) == (5, "parameter stripe-count")
    assert stripe_count_of({}, {}, {"stripe_count": 7}) == (7, "parameter stripe_count")
    # unusable values: zero (OMPIO's "unset"), -1 (Lustre's "all OSTs"), text
    assert (
        stripe_count_of({"hints": {"striping_factor": "0"}}, {"striping_factor": "-1"}, {"stripe_count": "many"})
        is None
    )


# -- the loader, on databases written by the harness's store ------------------------------------------

CAMPAIGN = """
[campaign]
name = "stripes"
output = "out"
seed = 1
repetitions = 3
ranks = [2, 4, 6]

[[kernels]]
name = "ior"
params = { block-size = "1M", transfer-size = "1M" }

[[variants]]
label = "sf2"
backend = "mpiio-coll"
hints = { striping_factor = 2 }
env = { STRATA_RANKS_PER_NODE = "2" }

[[variants]]
label = "sf4"
backend = "mpiio-coll"
hints = { striping_factor = 4 }
env = { STRATA_RANKS_PER_NODE = "2" }

[[variants]]
label = "sw8"
backend = "mpiio-coll"
hints = { stripe_width = 8 }
env = { STRATA_RANKS_PER_NODE = "2" }

[[variants]]
label = "sf16"
backend = "mpiio-coll"
hints = { striping_factor = 16 }
env = { STRATA_RANKS_PER_NODE = "2" }

[[variants]]
label = "posix"
backend = "posix"
env = { STRATA_RANKS_PER_NODE = "2" }
"""

# Median write bandwidth per (nodes, label): best 4 on 1 node, 8 (stripe_width) on 2, and on 3 the
# sf16 variant, whose file got 12 stripes (hints in effect, as Lustre reports a capped count).
BASE = {
    1: {"sf2": 100.0, "sf4": 200.0, "sw8": 150.0, "sf16": 120.0, "posix": 5000.0},
    2: {"sf2": 100.0, "sf4": 150.0, "sw8": 300.0, "sf16": 200.0, "posix": 5000.0},
    3: {"sf2": 100.0, "sf4": 150.0, "sw8": 200.0, "sf16": 400.0, "posix": 5000.0},
}


def _record(
    nodes: int, cfg: Configuration, write: list[float], verified: bool = True, fs_type: str = "lustre"
) -> dict[str, Any]:
    hints = dict(cfg.variant.hints)
    in_effect = {"cb_nodes": str(nodes)}
    requested: dict[str, str] | None = hints
    if cfg.label == "sf2":
        in_effect["striping_factor"] = hints["striping_factor"]  # OMPIO echoes it
    elif cfg.label == "sf16":
        in_effect["striping_factor"] = "12"  # the file system capped it
    elif cfg.label == "sw8":
        requested = None  # an older record: the campaign has it
    reps = [
        {
            "write": {"bytes": 1 << 20, "time_s": 1.0 / bw, "bandwidth_mib_s": bw},
            "read": {"bytes": 1 << 20, "time_s": 0.5 / bw, "bandwidth_mib_s": 2 * bw},
        }
        for bw in write
    ]
    rec = {
        "backend": cfg.variant.backend,
        "kernel": cfg.kernel,
        "verified": verified,
        "host": "h",
        "nodes": nodes,
        "ranks": cfg.ranks,
        "io_component": "ompio",
        "fs_type": fs_type,
        "hints": in_effect,
        "params": dict(cfg.params),
        "repetitions": reps,
    }
    if requested is not None:
        rec["hints_requested"] = requested
    return rec


Outcome = tuple[str, dict[str, Any]]  # status, record


def default_outcome(cfg: Configuration, launch: int) -> Outcome:
    nodes = cfg.ranks // 2  # STRATA_RANKS_PER_NODE=2: the record says so, not the rank count
    bw = BASE[nodes][cfg.label]
    if (nodes, cfg.label) == (1, "sf2") and launch < 2:
        # runs whose mean (307) beats sf4's 200 but whose median (12) does not
        return "ok", _record(nodes, cfg, [900.0, 10.0, 12.0])
    if (nodes, cfg.label) == (2, "sf4") and launch == 1:
        return "failed", _record(nodes, cfg, [5000.0] * 3)  # exit 3: verification failed
    if (nodes, cfg.label) == (2, "sf4") and launch == 2:
        return "ok", _record(nodes, cfg, [5000.0] * 3, verified=False)  # not verified
    return "ok", _record(nodes, cfg, [bw, bw * 1.01, bw * 0.99])


def make_db(
    tmp_path: Path, text: str = CAMPAIGN, outcome: Callable[[Configuration, int], Outcome] = default_outcome
) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "stripes.toml"
    path.write_text(text)
    campaign = load(path, strata=STRATA)
    db = tmp_path / "results.sqlite"
    with Store(db) as store:
        cid = store.create_campaign(campaign)
        ids = store.configuration_ids(cid)
        for run in campaign.runs:
            cfg = run.configuration
            status, rec = outcome(cfg, run.repetition)
            store.add_run(
                cid,
                ids[cfg.key],
                None,
                run.repetition,
                run.order,
                RunResult(status, 0 if status == "ok" else 3, None, None, "cmd", "dir", "t", 1.0, rec),
            )
    return db


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("calibrate"))


def test_loader_reads_nodes_stripe_counts_and_run_medians(db: Path) -> None:
    loaded = load_rows(db, backend="mpiio-coll")
    assert loaded.campaign == "stripes"
    # 4 variants x 3 node counts x 3 launches, minus the failed and the unverified launch
    assert len(loaded.rows) == 34
    assert {r.nodes for r in loaded.rows} == {1, 2, 3}
    assert {r.stripe_count for r in loaded.rows} == {2, 4, 8, 12}, "16 requested, 12 in effect"
    # a run's bandwidth is the median of its in-launch repetitions
    assert sorted(r.bandwidth_mib_s for r in loaded.rows if (r.nodes, r.stripe_count) == (1, 2)) == [12.0, 12.0, 100.0]
    assert sorted(r.bandwidth_mib_s for r in loaded.rows if (r.nodes, r.stripe_count) == (2, 4)) == [150.0]
    assert any("hints in effect striping_factor" in n and "hints requested stripe_width" in n for n in loaded.notes)
    assert not any("mix" in n for n in loaded.notes)

    c = calibrate(db, backend="mpiio-coll")
    assert [(p.nodes, p.best_stripe_count) for p in c.points] == [(1, 4), (2, 8), (3, 12)]
    assert (c.slope, c.intercept, c.r2) == (4.0, 0.0, 1.0)
    assert c.points[2].at_edge and not c.points[0].at_edge


def test_loader_default_mixes_backends_and_says_so(db: Path) -> None:
    loaded = load_rows(db)
    assert len(loaded.rows) == 34, "posix runs carry no stripe count"
    assert "9 runs record no stripe count and are left out" in loaded.notes
    assert any("mix 2 backends (mpiio-coll, posix); choose one with --backend" in n for n in loaded.notes)


def test_unverified_runs_only_on_request(db: Path) -> None:
    # With the unverified 5000 MiB/s launch, 2 nodes' stripe 4 has median(150, 5000) = 2575 and wins;
    # the failed launch stays out either way (with it the median would be 5000, the same winner, so
    # check the medians themselves).
    c = calibrate(db, backend="mpiio-coll", unverified=True)
    p2 = next(p for p in c.points if p.nodes == 2)
    assert p2.best_stripe_count == 4 and p2.medians_mib_s[4] == pytest.approx(2575.0)
    assert len(load_rows(db, backend="mpiio-coll", unverified=True).rows) == 35


def test_kernel_filter_and_campaign_name(db: Path) -> None:
    assert len(load_rows(db, kernel="ior", backend="mpiio-coll").rows) == 34
    with pytest.raises(
        CalibrationError,
        match=r"of kernel 'blocks': the 44 successful write runs are of "
        r"backend\(s\) mpiio-coll, posix and kernel\(s\) ior",
    ):
        load_rows(db, kernel="blocks")
    with pytest.raises(LookupError, match="no campaign named 'other'"):
        load_rows(db, campaign="other")


def test_loader_errors_say_what_the_campaign_must_vary(tmp_path: Path) -> None:
    # no striping hints: the file systems' own default, or the advisor's choice, is not recorded as ours
    no_hints = CAMPAIGN.split("[[variants]]")[0].replace(
        "ranks = [2, 4, 6]", 'ranks = [2, 4, 6]\nbackends = ["posix", "mpiio-coll"]'
    )

    def plain(cfg: Configuration, launch: int) -> Outcome:
        return "ok", _record(cfg.ranks // 2, cfg, [100.0])

    db = make_db(tmp_path / "a", no_hints, plain)
    with pytest.raises(
        CalibrationError,
        match=r"none of its 18 successful, verified write runs records a stripe "
        r"count: give the \[\[variants\]\] a striping_factor hint",
    ):
        calibrate(db)

    one_node = CAMPAIGN.replace("ranks = [2, 4, 6]", "ranks = [4]")
    with pytest.raises(
        CalibrationError,
        match=r"'stripes': the runs cover 1 node count \(2 nodes: 4 stripe " r"counts\) and a line needs at least 2",
    ):
        calibrate(make_db(tmp_path / "b", one_node), backend="mpiio-coll")

    def failed(cfg: Configuration, launch: int) -> Outcome:
        return "failed", _record(cfg.ranks // 2, cfg, [100.0])

    with pytest.raises(CalibrationError, match=r"no successful, verified write runs: 45 runs stored, 45 failed"):
        calibrate(make_db(tmp_path / "c", CAMPAIGN, failed))

    def unverified(cfg: Configuration, launch: int) -> Outcome:
        return "ok", _record(cfg.ranks // 2, cfg, [100.0], verified=False, fs_type="ext4")

    db = make_db(tmp_path / "d", CAMPAIGN, unverified)
    with pytest.raises(CalibrationError, match="45 successful write runs, none verified: set verify = true"):
        calibrate(db)
    notes = calibrate(db, unverified=True).notes
    assert any("wrote to ext4, where MPI-IO striping hints have no effect" in n for n in notes)


# -- the commands ---------------------------------------------------------------------------------------


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "strata", *args],
        capture_output=True,
        text=True,
        env=BASE_ENV,
        cwd=ROOT / "python",
        timeout=60,
    )


def strata(*args: str) -> subprocess.CompletedProcess[str]:
    """strata itself, not under mpirun (a singleton)."""
    return subprocess.run([str(STRATA), *args], capture_output=True, text=True, env=BASE_ENV, timeout=60)


def test_strata_bench_calibrate_end_to_end(db: Path, tmp_path: Path) -> None:
    out = bench("calibrate", str(db), "--backend", "mpiio-coll", "--json", str(tmp_path / "fit.json"))
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "fit.json").read_text())
    assert doc == json.loads(json.dumps(calibrate(db, backend="mpiio-coll").to_json()))
    assert (doc["slope"], doc["intercept"], doc["r2"]) == (4.0, 0.0, 1.0)
    assert [(p["nodes"], p["best_stripe_count"]) for p in doc["points"]] == [(1, 4), (2, 8), (3, 12)]
    assert doc["paper"]["5.6N+4.9"]["slope"] == 5.6 and doc["paper"]["5N+3"]["intercept"] == 3.0
    assert doc["points"][0]["paper_rounded"] == {"5.6N+4.9": 11, "5N+3": 8}
    lines = out.stdout.splitlines()
    rows = [line.split() for line in lines if line[:5].strip().isdigit()]
    # nodes, best, median, fitted, paper 5.6N+4.9, paper 5N+3
    assert rows == [
        ["1", "4", "200.0", "4.0", "11", "8"],
        ["2", "8", "300.0", "8.0", "16", "13"],
        ["3", "12*", "400.0", "12.0", "22", "18"],
    ]
    assert "fit     stripe count = 4.00 N + 0.00    R² 1.000 over 3 node counts" in out.stdout
    assert "paper   stripe count = 5.6 N + 4.9" in out.stdout and "paper   stripe count = 5 N + 3" in out.stdout


def test_strata_advise_calibrate_points_to_the_harness(db: Path) -> None:
    """strata does not start the harness (the harness starts strata): --calibrate, in either
    spelling, is a usage error naming the command to run, before MPI starts."""
    for args in (["advise", "--calibrate", str(db)], ["advise", f"--calibrate={db}"], ["bench", "validate", "x"]):
        proc = strata(*args)
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert proc.stderr.startswith("strata: error: ") and "strata-bench" in proc.stderr, proc.stderr
    assert "strata-bench calibrate RESULTS.sqlite" in strata("advise", "--calibrate", str(db)).stderr


def test_calibrate_errors_are_one_line_with_status_2(tmp_path: Path) -> None:
    one_node = make_db(tmp_path, CAMPAIGN.replace("ranks = [2, 4, 6]", "ranks = [4]"))
    calls = [
        [str(one_node)],
        [str(tmp_path / "missing.sqlite")],
        [str(tmp_path)],
        [str(one_node), "--backend", "hdf5"],
        [str(one_node), "--campaign", "x"],
    ]
    # Side by side: each is a Python start-up that reads the database and writes nothing.
    with ThreadPoolExecutor(max_workers=3) as pool:
        procs = list(pool.map(lambda args: bench("calibrate", *args), calls))
    for proc in procs:
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("strata-bench: error: ") and proc.stderr.count("\n") == 1, proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert "a line needs at least 2" in procs[0].stderr
    assert procs[4].stderr.endswith("no campaign named 'x'\n")
    # advise without --calibrate is still the advisor (run as a singleton)
    plain = strata(
        "advise",
        "--fs",
        "lustre",
        "--osts",
        "54",
        "--nodes",
        "6",
        "--block-size",
        "4M",
        "--quiet",
        "--json",
        str(tmp_path / "a.json"),
    )
    assert plain.returncode == 0, plain.stderr
    assert json.loads((tmp_path / "a.json").read_text())["stripe_count"] == 39


def test_the_example_campaign_varies_nodes_and_stripe_counts() -> None:
    c = load(ROOT / "examples" / "calibrate.toml", strata=STRATA)
    nodes = {cfg.ranks // int(dict(cfg.variant.env)["STRATA_RANKS_PER_NODE"]) for cfg in c.configurations}
    stripes = {dict(cfg.variant.hints)["striping_factor"] for cfg in c.configurations}
    assert nodes == {1, 2, 3, 4} and stripes == {"1", "2", "4", "8"}
    assert c.verify and "write" in c.operations and {cfg.variant.backend for cfg in c.configurations} == {"mpiio-coll"}
