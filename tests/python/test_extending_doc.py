"""docs/extending.md shows the diffs that added a kernel, a backend and run options: each must
still be the repository's code (it applies in reverse to the tree), or the guide has gone stale."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from conftest import ROOT

DOC = ROOT / "docs" / "extending.md"


def diffs() -> list[str]:
    return re.findall(r"^```diff\n(.*?)^```$", DOC.read_text(), flags=re.M | re.S)


def test_the_guide_has_its_diffs() -> None:
    found = diffs()
    assert len(found) == 4
    changed = {m for d in found for m in re.findall(r"^\+\+\+ b/(\S+)", d, flags=re.M)}
    assert {"src/kernels/kernel.cpp", "src/backends/backend_table.cpp", "src/run/run_options.cpp"} <= changed


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and the repository")
@pytest.mark.parametrize("index", range(4))
def test_each_diff_is_the_code(index: int) -> None:
    patch = diffs()[index] if index < len(diffs()) else ""
    proc = subprocess.run(
        ["git", "apply", "--reverse", "--check", "-"], input=patch, capture_output=True, text=True, cwd=ROOT, timeout=30
    )
    assert proc.returncode == 0, f"docs/extending.md diff {index + 1} no longer matches the code:\n{proc.stderr}"
