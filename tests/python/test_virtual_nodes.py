"""Node-aware behaviour on one machine, with virtual nodes: node counts, one file per node,
separate node-local directories, and data that verifies."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_ranks

IOR = ["ior", "--block-size", "16K", "--transfer-size", "4K", "--segments", "2"]
RANK_BYTES = 2 * 16 * 1024

MAPS = {
    "6 ranks, 3 nodes of 2": (6, {"STRATA_RANKS_PER_NODE": "2"}, [0, 0, 1, 1, 2, 2]),
    "7 ranks, uneven map": (7, {"STRATA_NODE_MAP": "0,0,0,1,2,2,2"}, [0, 0, 0, 1, 2, 2, 2]),
}


def record(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize("case", MAPS, ids=list(MAPS))
def test_node_count_is_reported(tmp_path: Path, case: str) -> None:
    np, env, node_of_rank = MAPS[case]
    out = run_ranks(np, ["info", str(tmp_path), "--json", str(tmp_path / "i.json")], env=env)
    assert out.status == 0, out.stderr
    info = record(tmp_path / "i.json")
    assert info["nodes"] == 3 and info["node_map"]["virtual"] is True
    assert info["node_map"]["node_of_rank"] == node_of_rank
    assert "(virtual" in out.stdout
    run = run_ranks(
        np,
        [
            "run",
            *IOR,
            "--backend",
            "mpiio-coll",
            "--verify",
            "--output",
            str(tmp_path / "d"),
            "--json",
            str(tmp_path / "r.json"),
            "--quiet",
        ],
        env=env,
    )
    assert run.status == 0, run.stderr
    assert record(tmp_path / "r.json")["nodes"] == 3


def test_one_real_node_is_not_virtual(tmp_path: Path) -> None:
    out = run_ranks(4, ["info", str(tmp_path), "--json", str(tmp_path / "i.json")])
    info = record(tmp_path / "i.json")
    assert out.status == 0 and info["nodes"] == 1 and info["node_map"]["virtual"] is False


@pytest.mark.parametrize("case", MAPS, ids=list(MAPS))
def test_one_file_per_node(tmp_path: Path, case: str) -> None:
    np, env, node_of_rank = MAPS[case]
    sizes = [node_of_rank.count(n) * RANK_BYTES for n in range(3)]
    outputs = {}
    for backend in ("posix", "mpiio-ind", "mpiio-coll"):
        prefix = tmp_path / backend
        out = run_ranks(
            np,
            [
                "run",
                *IOR,
                "--backend",
                backend,
                "--file-per-node",
                "--write",
                "--read",
                "--verify",
                "--output",
                str(prefix),
                "--json",
                str(tmp_path / "r.json"),
                "--quiet",
            ],
            env=env,
        )
        assert out.status == 0, out.stderr
        files = sorted(tmp_path.glob(f"{backend}.node*"))
        assert [f.name for f in files] == [f"{backend}.node{n:05d}" for n in range(3)]
        assert [f.stat().st_size for f in files] == sizes
        assert record(tmp_path / "r.json")["files"] == 3
        assert record(tmp_path / "r.json")["verified"] is True
        outputs[backend] = [f.read_bytes() for f in files]
    assert outputs["posix"] == outputs["mpiio-ind"] == outputs["mpiio-coll"]


@pytest.mark.parametrize("case", MAPS, ids=list(MAPS))
@pytest.mark.parametrize("layout", ["--file-per-node", "--file-per-process"])
def test_node_local_directories(tmp_path: Path, case: str, layout: str) -> None:
    np, env, node_of_rank = MAPS[case]
    local = tmp_path / "local"
    out = run_ranks(
        np,
        [
            "run",
            *IOR,
            "--backend",
            "mpiio-coll",
            layout,
            "--node-local",
            "--write",
            "--read",
            "--verify",
            "--output",
            "ckpt",
            "--json",
            str(tmp_path / "r.json"),
            "--quiet",
        ],
        env={**env, "STRATA_LOCAL_DIR": str(local)},
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    assert sorted(p.name for p in local.iterdir()) == ["0", "1", "2"]
    for node in range(3):
        names = sorted(p.name for p in (local / str(node)).iterdir())
        if layout == "--file-per-node":
            assert names == [f"ckpt.node{node:05d}"]
        else:
            assert names == [f"ckpt.{r:08d}" for r, n in enumerate(node_of_rank) if n == node]
    assert record(tmp_path / "r.json")["verified"] is True
    assert not (tmp_path / "ckpt").exists()


def test_node_local_shared_file_is_refused(tmp_path: Path) -> None:
    out = run_ranks(
        4,
        ["run", *IOR, "--backend", "posix", "--node-local", "--output", str(tmp_path / "x")],
        env={"STRATA_RANKS_PER_NODE": "2", "STRATA_LOCAL_DIR": str(tmp_path / "l")},
    )
    assert out.status == 2
    assert "--node-local needs --file-per-node or --file-per-process" in out.stderr


@pytest.mark.parametrize("case", MAPS, ids=list(MAPS))
def test_engine_elects_one_aggregator_per_node(tmp_path: Path, case: str) -> None:
    # Three aggregators asked for on three (virtual) nodes: the election puts one on each node.
    # (Without the hints the cost model chooses the count, and owners may write directly.)
    np, env, _ = MAPS[case]
    hints = "cb_buffer_size=64K,strata_strategy=aggregate,cb_nodes=3"
    out = run_ranks(
        np,
        [
            "run",
            "array1d",
            "--size",
            "64K",
            "--backend",
            "strata",
            "--write",
            "--read",
            "--verify",
            "--output",
            "a.dat",
            "--json",
            "r.json",
            "--quiet",
            "--hints",
            hints,
        ],
        env=env,
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    engine = record(tmp_path / "r.json")["repetitions"][0]["write"]["engine"]
    assert engine["aggregators"] == 3
    assert record(tmp_path / "r.json")["verified"] is True
    out = run_ranks(
        np, ["plan", "array1d", "--size", "64K", "--hints", hints, "--json", "p.json", "--quiet"], env=env, cwd=tmp_path
    )
    assert out.status == 0, out.stderr
    assert sorted(p["node"] for p in record(tmp_path / "p.json")["partitions"]) == [0, 1, 2]


@pytest.mark.parametrize("backend", ["mpiio-coll", "strata"])
@pytest.mark.parametrize("trap", ["symlink", "other-user"])
def test_node_local_directory_others_can_steer_is_refused(tmp_path: Path, backend: str, trap: str) -> None:
    # Another user who plants /tmp/<root>/1 as a link to a folder of yours (or owns the folder)
    # must not get the data written there: refused before any byte, on every rank.
    local, victim = tmp_path / "local", tmp_path / "victim"
    local.mkdir(mode=0o700)
    victim.mkdir()
    if trap == "symlink":
        (local / "1").symlink_to(victim)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to give a folder to another user")
        (local / "1").mkdir(mode=0o700)
        os.chown(local / "1", 65534, 65534)
    layout = ["--file-per-process", "--node-local"] if backend != "strata" else ["--hints", "strata_target=node-local"]
    out = run_ranks(
        4,
        ["run", *IOR, "--backend", backend, *layout, "--write", "--output", "ckpt", "--quiet"],
        env={"STRATA_RANKS_PER_NODE": "2", "STRATA_LOCAL_DIR": str(local)},
        cwd=tmp_path,
    )
    assert out.status != 0
    assert "symbolic link" in out.stderr if trap == "symlink" else "belongs to another user" in out.stderr
    assert list(victim.iterdir()) == []
    if trap == "other-user":
        assert not any((local / "1").iterdir())
    written = [f for f in (local / "0").glob("ckpt*") if f.stat().st_size > 0]
    assert not written, "node 0 wrote data although node 1's directory was refused"


def test_default_node_local_root_is_private(tmp_path: Path) -> None:
    # Without STRATA_LOCAL_DIR the root follows the batch system's scratch (TMPDIR) and is the
    # user's own folder, mode 0700.
    out = run_ranks(
        4,
        [
            "run",
            *IOR,
            "--backend",
            "mpiio-coll",
            "--file-per-process",
            "--node-local",
            "--write",
            "--read",
            "--verify",
            "--output",
            "ckpt",
            "--quiet",
        ],
        env={"STRATA_RANKS_PER_NODE": "2", "TMPDIR": str(tmp_path)},
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    root = tmp_path / f"strata-{os.geteuid()}"
    assert root.is_dir() and (root.stat().st_mode & 0o777) == 0o700
    assert sorted(p.name for p in root.iterdir()) == ["0", "1"]
    assert all((root / n).stat().st_mode & 0o777 == 0o700 for n in ("0", "1"))
