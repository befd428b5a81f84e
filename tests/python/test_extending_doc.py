"""docs/extending.md shows the diffs that added a kernel, a backend, run options and a campaign-wide
switch: each must still be the repository's code (it applies in reverse to the tree), or the guide
has gone stale.
Its numbered lists of places must be complete: every file of the build and the sources that names
the example (ior, pnetcdf) is one of the places the list names. And those places are all: the MPI
test matrix (strata info --tests) runs the examples, and tests/mpi/CMakeLists.txt names no kernel
and no backend. A campaign-wide switch is its row: the files the guide says follow from it name no
switch."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from conftest import BASE_ENV, ROOT, STRATA, catalogue

DOC = ROOT / "docs" / "extending.md"


def diffs() -> list[str]:
    return re.findall(r"^```diff\n(.*?)^```$", DOC.read_text(), flags=re.M | re.S)


def test_the_guide_has_its_diffs() -> None:
    found = diffs()
    assert len(found) == 5
    changed = {m for d in found for m in re.findall(r"^\+\+\+ b/(\S+)", d, flags=re.M)}
    assert {"src/kernels/kernel.cpp", "src/backends/backend_table.cpp", "src/run/run_options.cpp"} <= changed


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and the repository")
@pytest.mark.parametrize("index", range(5))
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


def names_in_lists(text: str, name: str) -> bool:
    """Whether CMake `text` has `name` as a word of a foreach(), set() or list()."""
    lists = re.findall(r"^\s*(?:foreach|set|list)\(([^)]*)\)", text, flags=re.M)
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", x) for x in lists)


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
        if re.search(code, text) or names_in_lists(text, name):
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
    """The check above can fail: without its row, the kernel's list misses a file."""
    name, code = EXAMPLES["A kernel"]
    listed = places("A kernel", name)
    assert listed == {
        "src/kernels/ior/ior_kernel.hpp",
        "src/kernels/ior/ior_kernel.cpp",
        "src/kernels/kernel.cpp",
        "CMakeLists.txt",
    }
    assert naming_files(name, code) - (listed - {"src/kernels/kernel.cpp"}) == {"src/kernels/kernel.cpp"}


def matrix_rows() -> list[list[str]]:
    proc = subprocess.run(
        [str(STRATA), "info", "--tests"], capture_output=True, text=True, env=BASE_ENV, timeout=60, check=True
    )
    return [line.split("\t") for line in proc.stdout.splitlines()]


def test_the_matrix_runs_the_examples() -> None:
    """The file, the row and the build line are enough: the MPI test matrix of the build runs the
    kernel on every backend and the backend with every kernel of the matrix, at 1, 2, 3, 4 and 8
    ranks (what tests/mpi registers with ctest)."""
    rows = matrix_rows()
    names = {r[0] for r in rows}
    assert all(len(r) == 5 for r in rows) and len(names) == len(rows)
    backends = list(catalogue().backends)
    kernels = {r[0].split(".")[1] for r in rows if r[0].startswith("matrix.")}
    assert "ior" in kernels
    for backend in backends:
        for kernel in kernels:
            assert {f"matrix.{kernel}.{backend}.np{np}" for np in (1, 2, 3, 4, 8)} <= names
    for r in rows:
        if r[0].startswith("matrix.ior."):
            assert r[4].startswith("run ior ") and "--verify" in r[4].split() and f"{r[0]}.out" in r[4]
    name, _ = EXAMPLES["A backend"]
    if name in backends:
        assert any(f"--backend {name} " in r[4] for r in rows if r[0].startswith("app."))
        assert any(r[0].startswith(f"steps.blocks.{name}.") for r in rows)


def test_the_mpi_test_list_names_no_kernel_or_backend() -> None:
    """tests/mpi/CMakeLists.txt registers the matrix from the catalogue: no list of kernels or
    backends, no `strata run KERNEL` or `--backend NAME` of its own."""
    text = (ROOT / "tests" / "mpi" / "CMakeLists.txt").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    named = [n for n in [*catalogue().kernels, *catalogue().backends] if names_in_lists(code, n)]
    assert not named, f"tests/mpi/CMakeLists.txt lists {named}: declare the tests in the catalogue instead"
    assert "--backend" not in code and not re.search(r"\bSTRATA_BIN\}\s+run\b", code)
    # The check sees a list when there is one (the matrix as it was).
    assert names_in_lists("foreach(kernel ior array1d blocks)", "ior")
    assert names_in_lists("  foreach(backend posix posix-fpp mpiio-ind)", "mpiio-ind")


SWITCH = "A campaign-wide switch"
# The version-2 results database kept each switch in a column: its migration names them.
LEGACY = {"python/strata/store.py": "_V2_SWITCHES = "}


def code_of(path: str, text: str) -> str:
    """`text` without its comments (and, for Python, its docstrings): what names things in code."""
    if path.endswith(".py"):
        text = re.sub(r'^\s*(?:[rf]?"""|\'\'\').*?(?:"""|\'\'\')\s*$', "", text, flags=re.M | re.S)
        return "\n".join(
            line.split("#", 1)[0] for line in text.splitlines() if not line.startswith(LEGACY.get(path, "\0"))
        )
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def names_switch(path: str, text: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", code_of(path, text)) is not None


def test_a_campaign_switch_is_declared_by_its_row_alone() -> None:
    """The section lists one place, its diff changes it, and every file it says follows from the row
    (the record, the report, the catalogue, the harness) names no switch of the catalogue."""
    assert places(SWITCH, "fsync") == {"src/run/run_options.cpp"}
    text = section_text(SWITCH)
    changed = {
        m
        for d in re.findall(r"^```diff\n(.*?)^```$", text, flags=re.M | re.S)
        for m in re.findall(r"^\+\+\+ b/(\S+)", d, flags=re.M)
    }
    assert changed == {"src/run/run_options.cpp"}
    followers = set(re.findall(r"`((?:src|tools|python)/[\w./-]+\.(?:cpp|hpp|py))`", text)) - {
        "src/run/run_options.cpp"
    }
    assert {"src/run/run_record.cpp", "tools/strata/run_report.cpp", "src/run/catalogue.cpp"} <= followers
    assert {f"python/strata/{m}.py" for m in ("catalogue", "campaign", "launch", "store", "stats")} <= followers
    switches = [s.name for s in catalogue().switches]
    assert switches == ["fsync"]
    for path in sorted(followers):
        text = (ROOT / path).read_text()
        named = [n for n in switches if names_switch(path, text, n)]
        assert not named, f"{path} names the campaign-wide switch {named}: read it from the row (docs/extending.md)"
    # The check sees a switch copied by hand, as the harness and the record had fsync before.
    assert names_switch("python/strata/launch.py", '    if campaign.fsync:\n        args.append("--fsync")', "fsync")
    assert names_switch("src/run/run_record.cpp", '  j["fsync"] = r.fsync;  // the switch', "fsync")
    assert names_switch("python/strata/store.py", "    fsync       INTEGER NOT NULL,", "fsync")
    assert not names_switch("python/strata/stats.py", '"""A label: "fsync included"."""\n# fsync', "fsync")
