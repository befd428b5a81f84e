"""The papers' campaigns and their checks: scale profiles, strata advise --rule with a calibrated
fit, strata cost on the aggregation paper's toy machine, and the report's paper-check section
produced from a tiny real campaign — with a wrong number turning its ✓ into ✗."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import STRATA, catalogue
from strata import paper_checks
from strata.calibrate import PAPER_FITS, Row, advisor_round, fit, write_json
from strata.campaign import CampaignError, load
from strata.report import write_report
from strata.runner import run_campaign
from strata.store import Store

CLI = paper_checks.StrataCli(STRATA)

SCALED = """
[campaign]
name = "scaled"
ranks = [2]
[[kernels]]
name = "ior"
params = { block-size = "64K", transfer-size = "64K", segments = 2 }
[[kernels]]
name = "array1d"
params = { dist = ["uniform", "random"] }
[[variants]]
label = "a"
backend = "posix"
env = { STRATA_RANKS_PER_NODE = "1" }
[[variants]]
label = "b"
backend = "mpiio-coll"

[scale.big]
campaign = { ranks = [64], repetitions = 7 }
launcher = { type = "slurm", ntasks_per_node = 16 }
kernels.ior = { params = { block-size = "4M", transfer-size = "4M" } }
variants.a = { env = {} }
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


def test_a_scale_profile_changes_sizes_ranks_and_launcher_only(tmp_path: Path) -> None:
    path = _write(tmp_path, SCALED)
    small = load(path, strata=STRATA, catalogue=catalogue())
    big = load(path, strata=STRATA, catalogue=catalogue(), scale="big")
    assert (small.name, big.name) == ("scaled", "scaled-big") and big.scale == "big" and small.scale is None
    assert {c.ranks for c in small.configurations} == {2} and {c.ranks for c in big.configurations} == {64}
    assert (small.repetitions, big.repetitions) == (3, 7)
    assert (small.launcher.kind, big.launcher.kind, big.launcher.ntasks_per_node) == ("local", "slurm", 16)
    ior = [dict(c.params) for c in big.configurations if c.kernel == "ior"]
    # params merged option by option: the sizes change, segments stays
    assert ior and all(p == {"block-size": "4M", "transfer-size": "4M", "segments": "2"} for p in ior)
    assert {dict(c.params)["dist"] for c in big.configurations if c.kernel == "array1d"} == {"uniform", "random"}
    assert {c.variant.label: dict(c.variant.env) for c in big.configurations} == {"a": {}, "b": {}}
    assert len(big.configurations) == len(small.configurations)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (("scale.big", "scale.x"), "scale.nope"),
        (("kernels.ior =", "kernels.iorr ="), "scale.big.kernels.iorr"),
        (("variants.a =", "variants.z ="), "scale.big.variants.z"),
        (("launcher = {", "launch = {"), "scale.big.launch"),
    ],
)
def test_a_bad_profile_names_the_key(tmp_path: Path, edit: tuple[str, str], key: str) -> None:
    path = _write(tmp_path, SCALED.replace(*edit))
    with pytest.raises(CampaignError) as e:
        load(path, strata=STRATA, catalogue=catalogue(), scale="nope" if key == "scale.nope" else "big")
    assert e.value.key == key


def test_the_scale_label_names_the_profile_a_campaign_ran_at() -> None:
    run = paper_checks.Run("a", "ior", "posix", 48, {}, {}, {"nodes": 2, "fs_type": "lustre", "host": "n1"}, True)
    toml = SCALED  # defines [scale.big]
    assert paper_checks.scale_of([run], "scaled-big", toml).endswith("profile big (--scale big)")
    assert paper_checks.scale_of([run], "scaled", toml).endswith("profile the file as written (laptop)")
    assert paper_checks.scale_of([run], "scaled-big", toml).startswith("48 ranks on 2 node(s), lustre, host n1")


# -- strata advise --rule ------------------------------------------------------------------------------


def test_rule_makes_the_advisor_follow_the_fit(tmp_path: Path) -> None:
    """A fit whose best stripe counts follow 2N + 1 (with noise at 3 nodes) gives the advisor that
    line, rounded as the fit says, where the paper's rule says 11, 16, 22, ..."""
    best = {1: 3, 2: 5, 3: 8, 4: 9}
    rows = [Row(n, c, 1000.0 - 10 * abs(c - b)) for n, b in best.items() for c in range(1, 13)]
    c = fit(rows)
    rule = tmp_path / "fit.json"
    write_json(c, rule)
    assert json.loads(rule.read_text())["slope_exact"] == str(c.slope_exact)
    slope, intercept, _ = PAPER_FITS["5.6N+4.9"]
    nodes = (1, 3, 6)
    answers = CLI.many([paper_checks.advise_call(n, "--block-size", "1M", "--rule", str(rule)) for n in nodes])
    for n, advice in zip(nodes, answers, strict=True):
        assert isinstance(advice, dict), advice
        assert advice["stripe_count"] == advisor_round(c.slope_exact, c.intercept_exact, n)
        assert advice["stripe_count"] != advisor_round(slope, intercept, n)
    reason = next(r for r in answers[1]["reasons"] if r["rule"] == "stripe count")
    assert "calibrat" in reason["advice"] and str(rule) in reason["source"]


def test_rule_rounds_halves_up_exactly_and_caps_at_the_osts(tmp_path: Path) -> None:
    paper, falling = tmp_path / "paper.json", tmp_path / "falling.json"
    paper.write_text(json.dumps({"slope": 5.6, "intercept": 4.9}))  # the paper's numbers as a plain rule
    falling.write_text(json.dumps({"slope_exact": "-1/2", "intercept_exact": "1"}))
    answers = CLI.many(
        [
            paper_checks.advise_call(6, "--block-size", "1M", "--rule", str(paper)),
            paper_checks.advise_call(6, "--block-size", "1M", "--rule", str(paper), "--osts", "20"),
            paper_checks.advise_call(8, "--block-size", "1M", "--rule", str(falling)),
        ]
    )
    # 38.5 -> 39; capped at the OSTs; never below 1
    assert [a["stripe_count"] for a in answers if isinstance(a, dict)] == [39, 20, 1]


def test_a_bad_rule_file_is_a_usage_error(tmp_path: Path) -> None:
    """(The C++ unit tests cover each malformed file; here the command's status and message.)"""
    rule = tmp_path / "rule.json"
    rule.write_text('{"slope": 1}')
    with pytest.raises(RuntimeError) as e:
        CLI.stripe_count(2, "--block-size", "1M", "--rule", str(rule))
    assert 'no "intercept"' in str(e.value) and "strata-bench calibrate" in str(e.value)


# -- strata cost: Table 2 and Table 10 on the toy machine -------------------------------------------------


def test_cost_model_on_the_toy_machine_has_the_shape_of_tables_2_and_10() -> None:
    t2, t10 = paper_checks.cost_model_tables(CLI)
    assert len(t2.checks) == 5 and all(c.ok for c in t2.checks), [(c.item, c.strata, c.note) for c in t2.checks]
    assert [c.strata for c in t10.checks] == ["HBM", "DRAM", "NVR"] and all(c.ok for c in t10.checks)


def test_a_wrong_machine_figure_fails_the_table_2_check(tmp_path: Path) -> None:
    """NVR as fast as DRAM: its cost no longer is several times HBM's, and the checks say ✗."""
    machine = tmp_path / "toy.toml"
    text = paper_checks.TOY_MACHINE.read_text()
    assert text.count("latency_us = 100000") == 1 and text.count("bandwidth_GBps = 0.15") == 1
    machine.write_text(
        text.replace("latency_us = 100000", "latency_us = 20000").replace(
            "bandwidth_GBps = 0.15", "bandwidth_GBps = 90"
        )
    )
    t2, _ = paper_checks.cost_model_tables(CLI, machine)
    assert [c.ok for c in t2.checks[:4]] == [False] * 4 and t2.checks[4].ok


# -- the report's section from a tiny real campaign ------------------------------------------------------

TINY = """
[campaign]
name = "tiny-papers"
seed = 3
repetitions = 1
repetitions_per_launch = 1
wait_s = 0
operations = ["write", "read"]
verify = true
timeout_s = 60
ranks = [1, 2]
baseline = "stripes 1"

[[kernels]]
name = "ior"
params = { block-size = "64K", transfer-size = "64K", segments = 1 }

[[kernels]]
name = "mslio"
ranks = [2]
modes = ["original"]
params = { ccross = 3, subelements = 64, threads = 1 }

[[variants]]
label = "stripes 1"
backend = "mpiio-coll"
hints = { striping_factor = 1 }
env = { STRATA_RANKS_PER_NODE = "1" }

[[variants]]
label = "stripes 2"
backend = "mpiio-coll"
hints = { striping_factor = 2 }
env = { STRATA_RANKS_PER_NODE = "1" }
"""


def test_report_has_the_paper_checks_and_a_wrong_number_fails(tmp_path: Path) -> None:
    campaign = load(_write(tmp_path, TINY), strata=STRATA, catalogue=catalogue())
    outcome = run_campaign(campaign, progress=False)
    assert outcome.failed == 0 and outcome.done == 5
    db = outcome.database
    page = write_report(db, tmp_path / "report").read_text()
    assert "<h2>Paper checks</h2>" in page and "profile the file as written (laptop)" in page
    assert "<h3>MSLIO paper (Boito et al.): Table I, Table III</h3><p>1 ✓, 0 ✗." in page

    def row(item: str) -> str:
        return page[page.index(f"<tr><td class=l>{item}</td>") :].split("</tr>")[0]

    ok, fail = "<span class=ok>✓</span>", "<span class=fail>✗</span>"
    assert "<td class=l>1.7 MB, 64 files</td><td class=l>1.70 MB, 64 files</td><td>" + ok in row("3 x 64")
    # The advisor's stripe counts for 1 to 9 nodes on ws9, from strata advise --json.
    for nodes, count in enumerate([11, 16, 22, 27, 33, 39, 44, 50, 54], start=1):
        assert f"<td class=l>{count}</td><td class=l>{count}</td><td>{ok}" in row(f"{nodes} node(s)")
    # The campaign's own fit, and strata advise --rule giving its counts at 1 and 2 nodes.
    assert ok in row("strata advise --rule at 1 node(s)") and ok in row("strata advise --rule at 2 node(s)")
    assert fail not in page

    with Store(db, readonly=True) as store:
        cid = store.campaign("tiny-papers")["id"]

    # A wrong volume in the stored record (a real run's, edited): Table I says ✗.
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET record = json_set(record, '$.params.text_mb', 2.5) WHERE record LIKE '%text_mb%'")
    con.commit()
    con.close()
    with Store(db, readonly=True) as store:
        runs = paper_checks.load_runs(store, cid)
    wrong = paper_checks.mslio_section(runs, "here")
    assert wrong is not None
    assert [c.ok for c in wrong.tables[0].checks] == [False, None]  # 3 x 64 wrong; the cells not run
    assert "<span class=fail>✗</span>" in paper_checks.to_html([wrong])
