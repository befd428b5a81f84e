"""Statistics on fixed data (hand-computed values and scipy.stats) and on simulated launches whose
repetitions are correlated (the interval's coverage)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from strata.campaign import load
from strata.stats import (
    campaign_stats,
    kruskal_wallis,
    launch_interval,
    level_text,
    order_statistic_level,
    ratio,
    ratio_table,
    summarize,
)
from strata.store import RunResult, Store


def test_summary_matches_hand_computed_values() -> None:
    # Two launches: medians 2 and 52, so the median of the launch medians is 27; mean and std are
    # over every value: deviations -21 -20 -19 -18 78, squares sum to 7610, / (n - 1) = 1902.5.
    s = summarize([[1.0, 2.0, 3.0], [4.0, 100.0]])
    assert (s.n, s.launches, s.shape) == (5, 2, "2 launches, 5 values")
    assert s.median == 27.0
    assert s.mean == 22.0
    assert s.std == pytest.approx(math.sqrt(1902.5))
    assert (s.ci_low, s.ci_high, s.ci_level) == (2.0, 52.0, 0.5), "two launches: their medians, at 50 %"
    three = summarize([[5.0, 6.0, 7.0], [1.0, 1.0, 9.0], [3.0, 4.0, 4.0]])
    assert (three.shape, three.median, three.ci_low, three.ci_high, three.ci_level) == ("3×3", 4.0, 1.0, 6.0, 0.75)
    single = summarize([[7.5]])
    assert (single.n, single.launches, single.median, single.std) == (1, 1, 7.5, 0.0)
    assert (
        math.isnan(single.ci_low) and math.isnan(single.ci_high) and single.ci_level == 0.0
    ), "one launch gives no interval"
    assert level_text(single) == "-" and level_text(three) == "75 %"
    assert summarize([]).n == 0 and math.isnan(summarize([]).median)


def test_interval_levels_are_the_binomial_ones() -> None:
    # P(k-th smallest <= median <= k-th largest) = 1 - 2 P(Binomial(n, 1/2) <= k - 1)
    assert order_statistic_level(3, 1) == pytest.approx(0.75)
    assert order_statistic_level(5, 1) == pytest.approx(1 - 2 / 32)
    assert order_statistic_level(6, 1) == pytest.approx(1 - 2 / 64)
    assert order_statistic_level(10, 2) == pytest.approx(1 - 2 * 11 / 1024)
    assert order_statistic_level(10, 3) == pytest.approx(1 - 2 * 56 / 1024)
    for n in range(2, 40):
        low, high, level = launch_interval(np.arange(n, dtype=float)[::-1])
        k = int(low) + 1
        assert high == n - k, "symmetric in the order statistics"
        assert level == pytest.approx(order_statistic_level(n, k))
        if n >= 6:
            assert level >= 0.95 > order_statistic_level(n, k + 1), f"{n} launches: the narrowest at 95 %"
        else:
            assert (k, level) == (1, 1 - 2 * 0.5**n), f"{n} launches: smallest to largest, below 95 %"
    assert launch_interval([4.0])[2] == 0.0 and launch_interval([4.0, 4.0, 4.0]) == (4.0, 4.0, 0.75)


# -- the interval on correlated repetitions: a seeded simulation -----------------------------------
# Bandwidth = exp(5 + launch effect + repetition noise): the launch effect (placement, cache, load)
# is shared by every repetition of a launch, and the repetitions' noise is AR(1) with correlation
# 0.6, as successive writes of one job are. The truth is the median of the launch medians'
# distribution: exp(5) when the launch effect is symmetric, else found from 200 000 launches.


def _simulate(rng: np.random.Generator, trials: int, launches: int, reps: int, skewed: bool = False) -> np.ndarray:
    shape = (trials, launches)
    # skewed: contention only ever slows a launch down
    effect = -rng.exponential(0.3, shape) if skewed else rng.normal(0.0, 0.3, shape)
    noise = np.empty((trials, launches, reps))
    noise[..., 0] = rng.normal(0.0, 0.1, shape)
    for t in range(1, reps):
        noise[..., t] = 0.6 * noise[..., t - 1] + math.sqrt(1 - 0.6**2) * rng.normal(0.0, 0.1, shape)
    return np.exp(5.0 + effect[..., None] + noise)


def _pooled_bootstrap(values: np.ndarray, rng: np.random.Generator, resamples: int = 500) -> np.ndarray:
    """The harness's former interval: every repetition of every launch bootstrapped as an independent
    sample, percentile 95 % interval of the median. values: (trials, n); returns (trials, 2)."""
    n = values.shape[1]
    idx = rng.integers(0, n, (values.shape[0], resamples, n))
    resampled = np.sort(values[np.arange(values.shape[0])[:, None, None], idx], axis=2)
    medians = (resampled[..., (n - 1) // 2] + resampled[..., n // 2]) / 2
    return np.quantile(medians, [0.025, 0.975], axis=1).T


def _coverage(data: np.ndarray, truth: float) -> tuple[float, float, np.ndarray]:
    """Share of trials whose per-launch interval holds the truth, its stated level, the widths."""
    hits, widths, levels = 0, [], set()
    for medians in np.median(data, axis=2):
        low, high, level = launch_interval(medians)
        hits += low <= truth <= high
        widths.append(high - low)
        levels.add(level)
    assert len(levels) == 1
    return hits / len(data), levels.pop(), np.asarray(widths)


@pytest.mark.parametrize(("launches", "reps"), [(3, 3), (6, 3)])
def test_per_launch_interval_covers_at_its_level_where_pooling_does_not(launches: int, reps: int) -> None:
    rng = np.random.default_rng(20260418 + launches)
    data = _simulate(rng, 3000, launches, reps)
    truth = math.exp(5.0)
    coverage, level, widths = _coverage(data, truth)
    # 3000 trials: the standard error of the coverage is under 0.008
    assert level == pytest.approx(1 - 2 * 0.5**launches)
    assert abs(coverage - level) < 0.03, f"{launches}x{reps}: covers {coverage:.3f}, states {level:.3f}"
    pooled = _pooled_bootstrap(data[:300].reshape(300, -1), rng)
    pooled_coverage = float(np.mean((pooled[:, 0] <= truth) & (truth <= pooled[:, 1])))
    assert pooled_coverage < 0.85, f"the pooled bootstrap claims 95 % and covers {pooled_coverage:.3f}"
    width_ratio = float(np.median(widths[:300] / (pooled[:, 1] - pooled[:, 0])))
    if launches >= 6:
        assert level >= 0.95
        assert width_ratio > 1.5, f"at 95 % the per-launch interval is wider than the pooled one ({width_ratio:.2f})"
    else:
        assert width_ratio >= 0.9, "3 launches: about as wide as the pooled interval, but honest about its level"


def test_per_launch_interval_covers_under_skewed_launch_effects() -> None:
    rng = np.random.default_rng(7)
    truth = float(np.median(np.median(_simulate(rng, 1, 200_000, 3, skewed=True)[0], axis=1)))
    coverage, level, _ = _coverage(_simulate(rng, 3000, 10, 3, skewed=True), truth)
    assert level == pytest.approx(1 - 2 * 11 / 1024)
    assert abs(coverage - level) < 0.015, f"covers {coverage:.3f}, states {level:.3f}"


def test_kruskal_wallis_matches_hand_computation_and_scipy() -> None:
    # Ranks 1..6 without ties: R1 = 6, R2 = 15, N = 6;
    # H = 12 / (N (N + 1)) * (R1^2 / 3 + R2^2 / 3) - 3 (N + 1) = 12/42 * 87 - 21 = 27/7.
    k = kruskal_wallis([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert k is not None and k.groups == 2
    assert k.h == pytest.approx(27 / 7)
    assert k.p == pytest.approx(sps.chi2.sf(27 / 7, df=1))
    groups = [[12.1, 14.3, 11.0, 13.2], [22.5, 19.1, 24.0], [13.0, 15.5, 16.1, 12.9, 14.0]]
    k3 = kruskal_wallis(groups)
    ref = sps.kruskal(*groups)
    assert k3 is not None and k3.h == pytest.approx(ref.statistic) and k3.p == pytest.approx(ref.pvalue)
    assert kruskal_wallis([[1.0, 2.0]]) is None
    assert kruskal_wallis([[1.0, 2.0], []]) is None
    assert kruskal_wallis([[3.0, 3.0], [3.0]]) is None, "identical values: the test is undefined"


def test_ratio() -> None:
    assert ratio(150.0, 100.0) == 1.5
    assert math.isnan(ratio(1.0, 0.0)) and math.isnan(ratio(math.nan, 1.0))


CAMPAIGN = """
[campaign]
name = "fixed"
output = "out"
seed = 1
repetitions = 3
ranks = [2]
backends = ["posix", "mpiio-coll"]

[[kernels]]
name = "ior"
params = { block-size = "64K", transfer-size = "16K" }
"""


def _record(backend: str, bandwidths: list[float]) -> dict:
    reps = []
    for bw in bandwidths:
        t = 1.0 / bw
        m = {
            "bytes": 1048576,
            "time_s": t,
            "bandwidth_mib_s": bw,
            "open_s": t / 4,
            "xfer_s": t / 2,
            "close_s": t / 4,
            "requests": 8,
        }
        reps.append({"write": m, "read": dict(m, bandwidth_mib_s=2 * bw)})
    return {
        "backend": backend,
        "verified": True,
        "host": "h",
        "nodes": 1,
        "io_component": "ompio",
        "mpi": {"library": "Open MPI", "version": "4.1.4"},
        "fs_type": "ext4",
        "hints": {},
        "git_rev": "abc",
        "repetitions": reps,
    }


def test_campaign_statistics_from_stored_runs(tmp_path: Path) -> None:
    path = tmp_path / "fixed.toml"
    path.write_text(CAMPAIGN)
    c = load(path)
    values = {
        "posix": [[100.0, 110.0], [120.0, 130.0], [140.0, 150.0]],
        "mpiio-coll": [[50.0, 60.0], [70.0, 80.0], [90.0, 100.0]],
    }
    with Store(tmp_path / "r.sqlite") as store:
        cid = store.create_campaign(c)
        ids = store.configuration_ids(cid)
        for run in c.runs:
            cfg = run.configuration
            rec = _record(cfg.variant.backend, values[cfg.label][run.repetition])
            store.add_run(
                cid,
                ids[cfg.key],
                None,
                run.repetition,
                run.order,
                RunResult("ok", 0, None, None, "cmd", "dir", "t", 1.0, rec),
            )
        # one failed launch on top: counted, not sampled
        store.db.execute(
            "UPDATE runs SET status = 'failed', exit_code = 1 WHERE order_index = "
            "(SELECT MAX(order_index) FROM runs)"
        )
        store.db.commit()
        failed = store.db.execute(
            "SELECT c.label, r.repetition FROM runs r JOIN configurations c"
            " ON c.id = r.configuration_id WHERE r.status = 'failed'"
        ).fetchone()
        cs = campaign_stats(store)
    assert cs.baseline == "mpiio-coll" and cs.runs_ok == 5 and cs.runs_failed == 1
    write = next(cell for cell in cs.cells if cell.phase == "write")
    by = {cfg.label: cfg for cfg in write.configs}
    launches = {
        label: [pair for rep, pair in enumerate(reps) if (label, rep) != tuple(failed)]
        for label, reps in values.items()
    }
    medians = {label: [float(np.median(pair)) for pair in pairs] for label, pairs in launches.items()}
    for label, pairs in launches.items():
        vals = [v for pair in pairs for v in pair]
        s = by[label].bandwidth
        assert (s.n, s.launches) == (len(vals), len(pairs))
        assert s.median == float(np.median(medians[label])), "the median of the launch medians"
        assert s.mean == pytest.approx(np.mean(vals))
        assert s.std == pytest.approx(np.std(vals, ddof=1))
        level = 1 - 2 * 0.5 ** len(pairs)
        assert (s.ci_low, s.ci_high, s.ci_level) == (min(medians[label]), max(medians[label]), level)
        xfer = [float(np.median([0.5 / v for v in pair])) for pair in pairs]
        assert by[label].breakdown["xfer_s"] == pytest.approx(float(np.median(xfer)))
    assert by["mpiio-coll"].ratio == 1.0
    assert by["posix"].ratio == pytest.approx(np.median(medians["posix"]) / np.median(medians["mpiio-coll"]))
    ref = sps.kruskal(medians["posix"], medians["mpiio-coll"])
    assert write.kruskal is not None and write.kruskal.p == pytest.approx(ref.pvalue), "over launch medians"
    read = next(cell for cell in cs.cells if cell.phase == "read")
    assert {cfg.label: cfg.ratio for cfg in read.configs}["posix"] == pytest.approx(by["posix"].ratio)
    table = ratio_table(cs)
    assert "x = ratio to mpiio-coll" in table and "posix" in table
    assert "fsync not included, every run verified on read-back" in table
    assert "3×2  75 %" in table and "2×2  50 %" in table, "launches x repetitions and the interval's level"
