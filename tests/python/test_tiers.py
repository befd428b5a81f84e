"""Memory tiers and placement from the command line: bad machine files are clear errors that
name the file, the line and the field, the same on every rank; `strata info --tiers` and
`strata plan` report what the engine would do, and plan writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import MPI, run_ranks

GOOD = """name = "test"
[network]
latency_us = 2
bandwidth_GBps = 10
[storage]
latency_us = 100
bandwidth_GBps = 1
[topology]
kind = "matrix"
distances = [[0, 1], [1, 0]]
[[tier]]
name = "dram"
latency_us = 0.1
bandwidth_GBps = 20
capacity = "1GiB"
persistency = "none"
[[tier]]
name = "nvr"
latency_us = 100
bandwidth_GBps = 0.5
capacity = "10GiB"
persistency = "job"
"""

BAD = {
    # case: (edit of GOOD, fragments the message must hold)
    "missing-field": (
        GOOD.replace("bandwidth_GBps = 20\n", ""),
        ["line 11", 'missing field "tier dram.bandwidth_GBps"'],
    ),
    "negative-bandwidth": (
        GOOD.replace("bandwidth_GBps = 0.5", "bandwidth_GBps = -0.5"),
        ["line 20", '"tier nvr.bandwidth_GBps" must not be negative'],
    ),
    "unknown-tier": (GOOD.replace('name = "nvr"', 'name = "ssd"'), ["line 18", 'unknown tier "ssd"']),
    "syntax-error": (GOOD.replace("[storage]", "[storage"), ["line 5", "syntax error"]),
    "missing-network": (
        GOOD.replace("[network]\nlatency_us = 2\nbandwidth_GBps = 10\n", ""),
        ["missing table [network]"],
    ),
    "bad-persistency": (
        GOOD.replace('persistency = "job"', 'persistency = "forever"'),
        ["line 22", '"tier nvr.persistency" must be "none" or "job"'],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_machine_file_names_file_line_and_field(tmp_path: Path, case: str) -> None:
    text, fragments = BAD[case]
    machine = tmp_path / f"{case}.toml"
    machine.write_text(text)
    out = run_ranks(2, ["info", "--tiers"], env={"STRATA_MACHINE": str(machine)})
    assert out.status == 2, out.stderr
    assert f'machine file "{machine}"' in out.stderr
    for fragment in fragments:
        assert fragment in out.stderr, out.stderr
    # The engine refuses the same file the same way.
    out = run_ranks(
        3,
        ["run", "ior", "--backend", "strata", "--output", str(tmp_path / "x.dat")],
        env={"STRATA_MACHINE": str(machine)},
    )
    assert out.status == 2
    assert fragments[-1] in out.stderr


def test_missing_machine_file(tmp_path: Path) -> None:
    out = run_ranks(2, ["info", "--tiers"], env={"STRATA_MACHINE": str(tmp_path / "none.toml")})
    assert out.status == 2
    assert "cannot read the machine file" in out.stderr


def test_info_tiers_lists_figures_and_absent_tiers(tmp_path: Path) -> None:
    machine = tmp_path / "m.toml"
    machine.write_text(GOOD)
    out = run_ranks(
        2,
        ["info", "--tiers", "--json", str(tmp_path / "t.json")],
        env={"STRATA_MACHINE": str(machine), "STRATA_TIER_CAPACITY": "dram:32MiB"},
    )
    assert out.status == 0, out.stderr
    tiers = {t["name"]: t for t in json.loads((tmp_path / "t.json").read_text())["tiers"]}
    assert tiers["dram"]["capacity_bytes"] == 32 << 20
    assert tiers["nvr"]["bandwidth_Bps"] == pytest.approx(0.5e9)
    assert not tiers["tmpfs"]["described"]
    assert "not in the machine description" in out.stdout


def test_probe_is_cached_under_xdg_cache_home(tmp_path: Path) -> None:
    out = run_ranks(2, ["info", "--tiers"], env={"XDG_CACHE_HOME": str(tmp_path)})
    assert out.status == 0, out.stderr
    cached = list((tmp_path / "strata").glob("machine-*.toml"))
    assert len(cached) == 1
    assert "[[tier]]" in cached[0].read_text()
    assert 'name = "dram"' in cached[0].read_text()


def test_plan_is_a_dry_run_with_a_cost_table(tmp_path: Path) -> None:
    machine = tmp_path / "m.toml"
    machine.write_text(GOOD)
    target = tmp_path / "never-written.dat"
    out = run_ranks(
        4,
        [
            "plan",
            "array1d",
            "--dist",
            "random",
            "--size",
            "64K",
            "--output",
            str(target),
            "--hints",
            "strata_strategy=aggregate,cb_nodes=2",
            "--json",
            str(tmp_path / "plan.json"),
        ],
        env={"STRATA_MACHINE": str(machine), "STRATA_RANKS_PER_NODE": "2"},
    )
    assert out.status == 0, out.stderr
    assert not target.exists()
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert len(plan["partitions"]) == 2
    assert {p["node"] for p in plan["partitions"]} == {0, 1}
    # Every rank scored every described tier it has, for every partition.
    tiers = {c["tier"] for c in plan["candidates"]}
    assert tiers == {"dram", "nvr"}
    assert len(plan["candidates"]) == 4 * 2 * len(tiers)
    for i, part in enumerate(plan["partitions"]):
        mine = [c for c in plan["candidates"] if c["partition"] == i and not c["filtered"]]
        assert part["cost_s"] == pytest.approx(min(c["c1_s"] + c["c2_s"] for c in mine))
    assert "cost of each candidate" in out.stdout
    # The strategies weighed: aggregation only (forced), two aggregators (asked), one chosen.
    assert plan["strategies"] and all(not a["direct"] and a["aggregators"] == 2 for a in plan["strategies"])
    assert [a["chosen"] for a in plan["strategies"]].count(True) == 1


def test_plan_prints_every_strategy_and_chooses_the_cheapest(tmp_path: Path) -> None:
    out = run_ranks(
        4,
        [
            "plan",
            "ior",
            "--block-size",
            "1M",
            "--transfer-size",
            "64K",
            "--segments",
            "4",
            "--output",
            str(tmp_path / "x"),
            "--json",
            str(tmp_path / "plan.json"),
        ],
    )
    assert out.status == 0, out.stderr
    plan = json.loads((tmp_path / "plan.json").read_text())
    names = [a["name"] for a in plan["strategies"]]
    assert "direct" in names and any(n.startswith("aggregate k=1 ") for n in names)
    assert any(n.startswith("aggregate k=4 ") for n in names)  # up to one aggregator per rank
    chosen = [a for a in plan["strategies"] if a["chosen"]]
    assert len(chosen) == 1 and chosen[0]["name"] == plan["strategy"]
    # The cheapest, or a simpler one listed before it within 5 % of it.
    cheapest = min(a["predicted_s"] for a in plan["strategies"])
    assert chosen[0]["predicted_s"] <= cheapest / 0.95
    first = next(a for a in plan["strategies"] if a["predicted_s"] <= cheapest / 0.95)
    assert plan["strategies"].index(first) <= plan["strategies"].index(chosen[0])
    assert "predicted time of each alternative" in out.stdout and " *" in out.stdout


def test_forcing_an_absent_tier_is_a_clear_error(tmp_path: Path) -> None:
    machine = tmp_path / "m.toml"
    machine.write_text(GOOD)
    out = run_ranks(2, ["plan", "ior"], env={"STRATA_MACHINE": str(machine), "STRATA_AGGR_TIER": "tmpfs"})
    assert out.status == 2
    assert "forced tier tmpfs" in out.stderr
    out = run_ranks(2, ["plan", "ior"], env={"STRATA_AGGR_TIER": "ssd"})
    assert out.status == 2
    assert "STRATA_AGGR_TIER=ssd is not a tier" in out.stderr


def test_tier_memory_that_mpi_cannot_expose_falls_back_to_main_memory(tmp_path: Path) -> None:
    """A window over tier memory (MPI_Win_create) that the one-sided component refuses — Open MPI
    4.1's osc/pt2pt under MPI_THREAD_MULTIPLE, which STRATA_TIMEOUT asks for — is agreed on every
    rank and the buffers move to MPI's main memory: the run goes on, says so, and reads back."""
    env = {"STRATA_AGGR_TIER": "tmpfs", "STRATA_TIMEOUT": "60"}
    if MPI.name == "openmpi":
        env["OMPI_MCA_osc"] = "sm,pt2pt"  # what a network without RDMA leaves
    out_file = tmp_path / "t.dat"
    ior = ["run", "ior", "--backend", "strata", "--output", str(out_file)]
    out = run_ranks(3, [*ior, "--verify"], env=env)
    assert out.statuses == {0: 0, 1: 0, 2: 0}, out.stderr
    if MPI.name == "openmpi":
        assert out.stderr.count("the aggregation buffers are in main memory instead") == 1, out.stderr
        assert "MPI_Win_create" in out.stderr
        assert "aggregation tier(s) dram" in out.stdout, out.stdout
    else:  # MPICH's one-sided operations serve every thread level
        assert "aggregation tier(s) tmpfs" in out.stdout, out.stdout
    assert "verification: passed" in out.stdout
    assert run_ranks(2, [*ior, "--read", "--verify"]).statuses == {0: 0, 1: 0}


def test_a_topology_smaller_than_the_job_is_the_same_error_everywhere(tmp_path: Path) -> None:
    machine = tmp_path / "m.toml"
    machine.write_text(GOOD)  # a 2-node distance matrix
    out = run_ranks(4, ["plan", "ior"], env={"STRATA_MACHINE": str(machine), "STRATA_RANKS_PER_NODE": "1"})
    assert out.status == 2
    assert "matrix topology describes 2 nodes, the job has node 3" in out.stderr


@pytest.mark.parametrize("args", [["plan", "--help"], ["plan", "array1d", "--help"], ["info", "--help"]])
def test_help_of_plan_and_tiers(args: list[str]) -> None:
    out = run_ranks(1, args)
    assert out.status == 0, out.stderr
    assert "usage:" in out.stdout
    if args[-2:] == ["array1d", "--help"]:
        assert "--dist" in out.stdout
    if args[0] == "info":
        assert "--tiers" in out.stdout


def test_probe_measures_and_caches_the_io_figures(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = run_ranks(2, ["info", "--probe", str(tmp_path), "--json", str(tmp_path / "io.json")], env=env)
    assert out.status == 0, out.stderr
    io = json.loads((tmp_path / "io.json").read_text())["io"]
    assert io["measured"] is True and io["probe_ranks"] == 2
    for key in (
        "put_bandwidth_Bps",
        "put_latency_s",
        "fence_s",
        "collective_s",
        "memcpy_Bps",
        "hash_Bps",
        "create_s",
        "rename_s",
    ):
        assert io[key] > 0, key
    sizes = [w["bytes"] for w in io["write"]]
    assert sizes == sorted(sizes) and len(sizes) == 4 and all(w["seconds"] > 0 for w in io["write"])
    # The rewrite curve (a recycled file's requests, both ranks at once), at the same sizes; both
    # curves measured by the node's two ranks together.
    assert [w["bytes"] for w in io["rewrite"]] == sizes and all(w["seconds"] > 0 for w in io["rewrite"])
    assert io["curve_writers"] == 2
    assert not list(tmp_path.glob(".strata-io-probe*"))  # the probe's files are gone
    cached = next((tmp_path / "cache" / "strata").glob("machine-*.toml")).read_text()
    assert "[io]\nmeasured = true\nprobe_ranks = 2\n" in cached and "[[tier]]" in cached
    assert "\nrewrite_us = [" in cached and "\ncurve_writers = 2\n" in cached
    # The engine plans with them: strata plan says the figures are measured.
    plan = run_ranks(
        2, ["plan", "array1d", "--output", str(tmp_path / "x"), "--json", str(tmp_path / "p.json")], env=env
    )
    assert plan.status == 0, plan.stderr
    # (Doubtful when this machine was busy during the probe: the test suite runs beside others.)
    assert "measured machine figures" in plan.stdout or "doubtful (measured on a busy machine)" in plan.stdout
    assert json.loads((tmp_path / "p.json").read_text())["figures_measured"] is True


def test_engine_probes_its_figures_at_first_use_unless_told_not_to(tmp_path: Path) -> None:
    cache = tmp_path / "c1"
    out = run_ranks(
        2,
        ["plan", "array1d", "--output", str(tmp_path / "x"), "--quiet"],
        env={"XDG_CACHE_HOME": str(cache), "STRATA_NO_IO_PROBE": "1"},
    )
    assert out.status == 0, out.stderr
    assert "measured = false" in next((cache / "strata").glob("machine-*.toml")).read_text()
    out = run_ranks(
        2, ["plan", "array1d", "--output", str(tmp_path / "x"), "--quiet"], env={"XDG_CACHE_HOME": str(cache)}
    )
    assert out.status == 0, out.stderr
    assert "measured = true" in next((cache / "strata").glob("machine-*.toml")).read_text()


def test_a_lone_rank_leaves_the_mpi_figures_to_a_job_of_several(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(cache)}
    out = run_ranks(1, ["plan", "array1d", "--output", str(tmp_path / "x"), "--quiet"], env=env)
    assert out.status == 0, out.stderr
    alone = next((cache / "strata").glob("machine-*.toml")).read_text()
    # One rank puts only to itself: its put and fence figures would be a memcpy and nothing.
    assert "probe_ranks = 1\n" in alone and "put_latency_us = 3\n" in alone and "fence_us = 20\n" in alone
    out = run_ranks(2, ["plan", "array1d", "--output", str(tmp_path / "x"), "--quiet"], env=env)
    assert out.status == 0, out.stderr
    assert "probe_ranks = 2\n" in next((cache / "strata").glob("machine-*.toml")).read_text()


def test_figures_from_a_busy_moment_are_called_doubtful_and_measured_again(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = run_ranks(2, ["info", "--probe", str(tmp_path), "--json", str(tmp_path / "io.json")], env=env)
    assert out.status == 0, out.stderr
    io = json.loads((tmp_path / "io.json").read_text())["io"]
    assert io["scatter"] >= 1 and io["probed_at"] > 0 and "doubtful" in io
    assert "probed 20" in out.stdout and "repeats within" in out.stdout
    # The cached figures as a busy machine leaves them: repeats scattered 1000x, load 1000.
    cache = next((tmp_path / "cache" / "strata").glob("machine-*.toml"))
    text = cache.read_text()
    lines = [
        "scatter = 1000"
        if ln.startswith("scatter =")
        else "load_average = 1000"
        if ln.startswith("load_average")
        else ln
        for ln in text.splitlines()
    ]
    if not any(ln.startswith("load_average") for ln in lines):
        lines.append("load_average = 1000")
    cache.write_text("\n".join(lines) + "\n")
    shown = run_ranks(1, ["info", "--tiers"], env={**env, "STRATA_NO_IO_PROBE": "1"})
    assert shown.status == 0, shown.stderr
    assert "doubtful: the machine was busy" in shown.stdout
    plan = run_ranks(
        2,
        ["plan", "array1d", "--output", str(tmp_path / "x"), "--json", str(tmp_path / "p.json")],
        env={**env, "STRATA_NO_IO_PROBE": "1"},
    )
    assert plan.status == 0, plan.stderr
    assert "doubtful (measured on a busy machine)" in plan.stdout
    assert json.loads((tmp_path / "p.json").read_text())["figures_doubtful"] is True
    # The node is quieter now than a load of 1000: the engine's next use measures them again and
    # keeps the less scattered set.
    again = run_ranks(2, ["plan", "array1d", "--output", str(tmp_path / "x"), "--quiet"], env=env)
    assert again.status == 0, again.stderr
    stored = cache.read_text()
    assert "scatter = 1000\n" not in stored and "load_average = 1000\n" not in stored
