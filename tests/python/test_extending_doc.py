"""docs/extending.md shows the diffs that added a kernel, a backend and run options: each must
still be the repository's code (it applies in reverse to the tree), or the guide has gone stale.
Its numbered lists of places must be complete: every file of the build and the sources that names
the example (ior, pnetcdf) is one of the places the list names."""

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


# Each section's example: its name, and what names it in C and C++ (its class, row or files).
EXAMPLES = {
    "A kernel": ("ior", r"IorKernel|ior_kernel"),
    "A backend": ("pnetcdf", r"pnetcdf_backend"),
}
SCANNED = ("src", "tools", "include", "python/ext", "fortran")


def section_text(section: str) -> str:
    return DOC.read_text().split(f"## {section}", 1)[1].split("\n## ", 1)[0]


def places(section: str, name: str) -> set[str]:
    """The files a section's numbered list names (before each item's colon), `<name>` replaced by the
    example's; "X.hpp and `.cpp`" names both."""
    items = re.findall(r"^\d+\. (.*?)(?=^\d+\. |^\S|\Z)", section_text(section), flags=re.M | re.S)
    found = set()
    for item in items:
        head = item.split(":")[0]
        for path in re.findall(r"`([\w./<>-]+/[\w./<>-]+|CMakeLists.txt)`", head):
            path = path.replace("<name>", name)
            found.add(path)
            if path.endswith(".hpp") and "`.cpp`" in head:
                found.add(path[: -len(".hpp")] + ".cpp")
    return found


def naming_files(name: str, code: str) -> set[str]:
    """Files of the build and the sources that name the example: a CMakeLists.txt that builds its
    files or has its name as a word of a foreach(), set() or list(); a C or C++ source that names its
    class, row or files."""
    out = set()
    for cmake in ROOT.rglob("CMakeLists.txt"):
        rel = cmake.relative_to(ROOT)
        if rel.parts[0].startswith(("build", ".")):
            continue
        text = cmake.read_text()
        lists = re.findall(r"^\s*(?:foreach|set|list)\(([^)]*)\)", text, flags=re.M)
        if re.search(code, text) or any(re.search(rf"(?<![\w-]){name}(?![\w-])", x) for x in lists):
            out.add(str(rel))
    for folder in SCANNED:
        for f in (ROOT / folder).rglob("*"):
            if f.suffix in (".cpp", ".hpp", ".h", ".c") and re.search(code, f.read_text(errors="replace")):
                out.add(str(f.relative_to(ROOT)))
    return out


@pytest.mark.parametrize("section", list(EXAMPLES))
def test_the_list_of_places_is_complete(section: str) -> None:
    name, code = EXAMPLES[section]
    listed = places(section, name)
    missing = naming_files(name, code) - listed
    assert not missing, f"docs/extending.md's {section!r} list lacks files that name {name}: {sorted(missing)}"
    changed = set()
    for d in re.findall(r"^```diff\n(.*?)^```$", section_text(section), flags=re.M | re.S):
        changed |= set(re.findall(r"^\+\+\+ b/(\S+)", d, flags=re.M))
    assert changed and changed <= listed, f"the {section!r} diff changes files its list omits: {changed - listed}"


def test_the_completeness_check_sees_a_missing_place() -> None:
    """The check above can fail: without its last item, the kernel's list misses a file."""
    name, code = EXAMPLES["A kernel"]
    listed = places("A kernel", name)
    assert {"tests/mpi/CMakeLists.txt", "src/kernels/kernel.cpp", "src/kernels/ior/ior_kernel.cpp"} <= listed
    assert naming_files(name, code) - (listed - {"tests/mpi/CMakeLists.txt"}) == {"tests/mpi/CMakeLists.txt"}
