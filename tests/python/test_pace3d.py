"""strata run pace3d: the voxel file read by code that shares nothing with the writer, the
per-frame record, and collective errors."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from app_values import float32_values
from conftest import run_ranks

HEADER = 512
META = 64


def read_header(data: bytes) -> dict[str, int]:
    assert data[:8] == b"STRVOXEL"
    version, header_bytes, nz, ny, nx, element, components, frames, meta, seed = struct.unpack_from(
        "<IIQQQIIQQQ", data, 8
    )
    assert (version, header_bytes, meta) == (1, HEADER, META)
    return {"nz": nz, "ny": ny, "nx": nx, "element": element, "components": components, "frames": frames, "seed": seed}


@pytest.mark.parametrize("ranks,decomp,element,level", [(3, "3d", 12, 3), (4, "1d", 4, 0), (4, "3d", 64, 2)])
def test_single_file_has_header_and_frames_at_their_offsets(
    tmp_path: Path, ranks: int, decomp: str, element: int, level: int
) -> None:
    frames, seed = 4, 11
    out = run_ranks(
        ranks,
        [
            "run",
            "pace3d",
            "--style",
            "sf",
            "--decomp",
            decomp,
            "--element",
            str(element),
            "--level",
            str(level),
            "--block-size",
            "8K",
            "--frames",
            str(frames),
            "--seed",
            str(seed),
            "--output",
            "f.vox",
            "--json",
            "r.json",
            "--verify",
        ],
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    data = (tmp_path / "f.vox").read_bytes()
    h = read_header(data)
    assert h["frames"] == frames and h["element"] == element and h["components"] == element // 4
    assert h["seed"] == seed
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["params"]["global_shape"] == [h["nz"], h["ny"], h["nx"]]
    field_bytes = h["nz"] * h["ny"] * h["nx"] * element
    frame_bytes = META + field_bytes + META
    assert len(data) == HEADER + frames * frame_bytes
    # Every voxel component: the generator's float plus one per frame (the compute step).
    count = h["nz"] * h["ny"] * h["nx"] * h["components"]
    base = float32_values("field", count, seed)
    for f in range(frames):
        at = HEADER + f * frame_bytes
        assert data[at : at + 8] == b"FRAMEBEG"
        frame, time, nbytes = struct.unpack_from("<QdQ", data, at + 8)
        assert (frame, time, nbytes) == (f, float(f), field_bytes)
        field = np.frombuffer(data, dtype="<f4", count=count, offset=at + META)
        expected = (base.astype(np.float64) + f).astype(np.float32)
        assert np.array_equal(field, expected), f"frame {f} differs"
        end = at + META + field_bytes
        assert data[end : end + 8] == b"FRAMEEND"
        frame, lo, hi, nbytes = struct.unpack_from("<QffQ", data, end + 8)
        assert (frame, nbytes) == (f, field_bytes)
        assert lo == expected.min() and hi == expected.max()


def test_record_reports_frames_with_the_first_apart(tmp_path: Path) -> None:
    out = run_ranks(
        3,
        [
            "run",
            "pace3d",
            "--block-size",
            "16K",
            "--frames",
            "5",
            "--write",
            "--read",
            "--verify",
            "--json",
            "r.json",
            "--output",
            "g.vox",
        ],
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    assert "first frame: not in the summary" in out.stdout
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["verified"] is True and record["mode"] == "sf" and record["kernel_kind"] == "application"
    for phase in ("write", "read"):
        p = record["repetitions"][0][phase]
        k = p["kernel"]
        assert len(k["frames"]) == 5 and k["first_frame_excluded"] is True
        assert all(len(fr["rank_time_s"]) == 3 for fr in k["frames"])
        # The phase sums the medians over ranks of frames 1..4 and moves 4 fields.
        medians = [float(np.median(fr["rank_time_s"])) for fr in k["frames"]]
        assert p["time_s"] == pytest.approx(sum(medians[1:]))
        assert p["bytes"] == 4 * record["params"]["field_bytes"]
        assert len(p["rank_time_s"]) == 3
        rates = sorted(fr["rate_mib_s"] for fr in k["frames"][1:])
        assert k["summary"]["median_rate_mib_s"] == pytest.approx((rates[1] + rates[2]) / 2)


def test_file_per_frame_styles_write_one_file_per_frame(tmp_path: Path) -> None:
    for style in ("mf", "mf-wo"):
        out = run_ranks(
            2,
            [
                "run",
                "pace3d",
                "--style",
                style,
                "--frames",
                "3",
                "--block-size",
                "8K",
                "--verify",
                "--output",
                f"{style}.vox",
            ],
            cwd=tmp_path,
        )
        assert out.status == 0, out.stderr
        files = sorted(p.name for p in tmp_path.glob(f"{style}.vox.f*"))
        assert files == [f"{style}.vox.f0000{i}" for i in range(3)]
        for i, name in enumerate(files):
            data = (tmp_path / name).read_bytes()
            h = read_header(data)
            assert h["frames"] == 1
            frame = struct.unpack_from("<Q", data, HEADER + 8)[0]
            assert frame == i


def test_corrupted_voxel_is_found_on_every_rank(tmp_path: Path) -> None:
    args = ["run", "pace3d", "--frames", "2", "--block-size", "8K", "--output", "c.vox"]
    out = run_ranks(2, args, cwd=tmp_path)
    assert out.status == 0, out.stderr
    path = tmp_path / "c.vox"
    data = bytearray(path.read_bytes())
    data[HEADER + META + 4 * 1000] ^= 0x40  # a byte of voxel 1000 in frame 0
    path.write_bytes(bytes(data))
    out = run_ranks(2, [*args, "--read", "--verify"], cwd=tmp_path)
    assert out.status == 3, out.stderr
    assert "frame 0, voxel" in out.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--level", "7"], "--level must be 0, 1, 2 or 3"),
        (["--element", "8"], "--element must be 4"),
        (["--style", "xx"], 'unknown --style "xx"'),
        (["--decomp", "2d"], "--decomp must be 1d or 3d"),
        (["--frames", "0"], "--frames must be between 1"),
    ],
)
def test_bad_parameters_fail_alike_on_every_rank(tmp_path: Path, args: list[str], message: str) -> None:
    out = run_ranks(3, ["run", "pace3d", *args, "--output", "x.vox"], cwd=tmp_path)
    assert out.status == 2
    assert message in out.stderr
    assert not (tmp_path / "x.vox").exists()


def test_reading_with_other_parameters_is_a_usage_error(tmp_path: Path) -> None:
    assert run_ranks(2, ["run", "pace3d", "--block-size", "8K", "--output", "r.vox"], cwd=tmp_path).status == 0
    out = run_ranks(2, ["run", "pace3d", "--block-size", "16K", "--read", "--output", "r.vox"], cwd=tmp_path)
    assert out.status == 2
    assert "read with the writer's --block-size" in out.stderr


def test_unwritable_and_missing_files_are_runtime_errors_on_every_rank(tmp_path: Path) -> None:
    out = run_ranks(3, ["run", "pace3d", "--output", str(tmp_path / "no" / "such" / "f.vox")])
    assert out.status == 1 and "cannot open" in out.stderr
    out = run_ranks(3, ["run", "pace3d", "--style", "mf", "--read", "--output", str(tmp_path / "g.vox")])
    assert out.status == 1 and "g.vox.f00000" in out.stderr
