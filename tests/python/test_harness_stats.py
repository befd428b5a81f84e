"""Statistics on fixed data: hand-computed values and scipy.stats."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from strata.campaign import load
from strata.stats import (
    bootstrap_median_ci,
    campaign_stats,
    kruskal_wallis,
    ratio,
    ratio_table,
    summarize,
)
from strata.store import RunResult, Store


def test_summary_matches_hand_computed_values() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.n == 5
    assert s.median == 3.0
    assert s.mean == 22.0
    # deviations -21 -20 -19 -18 78: squares sum to 7610, / (n - 1) = 1902.5
    assert s.std == pytest.approx(math.sqrt(1902.5))
    assert s.ci_low <= s.median <= s.ci_high
    single = summarize([7.5])
    assert (single.n, single.median, single.std, single.ci_low, single.ci_high) == (1, 7.5, 0.0, 7.5, 7.5)
    assert summarize([]).n == 0 and math.isnan(summarize([]).median)


def test_bootstrap_of_two_values_spans_them() -> None:
    # Resampled medians of [a, b] are a, (a+b)/2 and b with probabilities 1/4, 1/2, 1/4:
    # the 2.5 % and 97.5 % quantiles are a and b.
    assert bootstrap_median_ci([10.0, 20.0]) == (10.0, 20.0)


def test_bootstrap_is_reproducible_and_agrees_with_scipy() -> None:
    data = np.random.default_rng(5).lognormal(mean=3.0, sigma=0.5, size=41)
    low, high = bootstrap_median_ci(data)
    assert (low, high) == bootstrap_median_ci(data), "fixed seed"
    assert low < float(np.median(data)) < high
    # An odd-sized sample's resampled medians are sample values, so are the percentile bounds' neighbours.
    assert data.min() <= low and high <= data.max()
    ref = sps.bootstrap((data,), np.median, confidence_level=0.95, n_resamples=10_000, method="percentile",
                        random_state=np.random.default_rng(1)).confidence_interval
    width = ref.high - ref.low
    assert abs(low - ref.low) < 0.25 * width and abs(high - ref.high) < 0.25 * width
    assert bootstrap_median_ci([4.0, 4.0, 4.0]) == (4.0, 4.0)


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
repetitions = 2
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
        m = {"bytes": 1048576, "time_s": t, "bandwidth_mib_s": bw, "open_s": t / 4, "xfer_s": t / 2,
             "close_s": t / 4, "requests": 8}
        reps.append({"write": m, "read": dict(m, bandwidth_mib_s=2 * bw)})
    return {"backend": backend, "verified": True, "host": "h", "nodes": 1, "io_component": "ompio",
            "mpi": {"library": "Open MPI", "version": "4.1.4"}, "fs_type": "ext4", "hints": {},
            "git_rev": "abc", "repetitions": reps}


def test_campaign_statistics_from_stored_runs(tmp_path: Path) -> None:
    path = tmp_path / "fixed.toml"
    path.write_text(CAMPAIGN)
    c = load(path)
    values = {"posix": [[100.0, 110.0], [120.0, 130.0]], "mpiio-coll": [[50.0, 60.0], [70.0, 80.0]]}
    with Store(tmp_path / "r.sqlite") as store:
        cid = store.create_campaign(c)
        ids = store.configuration_ids(cid)
        for run in c.runs:
            cfg = run.configuration
            rec = _record(cfg.variant.backend, values[cfg.label][run.repetition])
            store.add_run(cid, ids[cfg.key], None, run.repetition, run.order,
                          RunResult("ok", 0, None, None, "cmd", "dir", "t", 1.0, rec))
        # one failed launch on top: counted, not sampled
        store.db.execute("UPDATE runs SET status = 'failed', exit_code = 1 WHERE order_index = "
                         "(SELECT MAX(order_index) FROM runs)")
        store.db.commit()
        failed = store.db.execute("SELECT c.label, r.repetition FROM runs r JOIN configurations c"
                                  " ON c.id = r.configuration_id WHERE r.status = 'failed'").fetchone()
        cs = campaign_stats(store)
    assert cs.baseline == "mpiio-coll" and cs.runs_ok == 3 and cs.runs_failed == 1
    write = next(cell for cell in cs.cells if cell.phase == "write")
    by = {cfg.label: cfg for cfg in write.configs}
    expected = {label: [v for rep, pair in enumerate(reps) if (label, rep) != tuple(failed) for v in pair]
                for label, reps in values.items()}
    for label, vals in expected.items():
        assert by[label].bandwidth.median == float(np.median(vals))
        assert by[label].bandwidth.mean == pytest.approx(np.mean(vals))
        assert by[label].bandwidth.std == pytest.approx(np.std(vals, ddof=1))
        assert by[label].breakdown["xfer_s"] == pytest.approx(float(np.median([0.5 / v for v in vals])))
    assert by["mpiio-coll"].ratio == 1.0
    assert by["posix"].ratio == pytest.approx(np.median(expected["posix"]) / np.median(expected["mpiio-coll"]))
    ref = sps.kruskal(expected["posix"], expected["mpiio-coll"])
    assert write.kruskal is not None and write.kruskal.p == pytest.approx(ref.pvalue)
    read = next(cell for cell in cs.cells if cell.phase == "read")
    assert {cfg.label: cfg.ratio for cfg in read.configs}["posix"] == pytest.approx(by["posix"].ratio)
    table = ratio_table(cs)
    assert "x = ratio to mpiio-coll" in table and "posix" in table
    assert "fsync not included, every run verified on read-back" in table
