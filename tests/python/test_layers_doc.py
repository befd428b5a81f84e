"""docs/layers.md's map of the layers against the build's: the layers its diagram draws and what
each depends on must be CMakeLists.txt's strata_layer() lines, no more and no less."""

from __future__ import annotations

import re

from conftest import ROOT


def build_layers(cmake: str) -> dict[str, set[str]]:
    """layer -> the layers its strata_layer(NAME DEPENDS ... SOURCES ...) line names."""
    out = {}
    for call in re.finditer(r"^strata_layer\(([^)]*)\)", cmake, re.M):
        words = call.group(1).split()
        deps = words[words.index("DEPENDS") + 1 : words.index("SOURCES")] if "DEPENDS" in words else []
        out[words[0]] = set(deps)
    return out


def expand(word: str) -> list[str]:
    """engine/{plan,place,move} -> engine/plan, engine/place, engine/move; a trailing / dropped."""
    word = word.rstrip("/")
    braces = re.fullmatch(r"(.*)\{(.*)\}", word)
    return [braces.group(1) + part for part in braces.group(2).split(",")] if braces else [word]


def doc_layers(doc: str) -> dict[str, set[str]]:
    """layer -> its dependencies, from the diagram's lines `  LAYER/ [LAYER/ ...]  DEP DEP  (note)`
    (several layers on one line share the dependencies; `(nothing)`: none)."""
    diagram = re.search(r"```\n(.*?)```", doc, re.S).group(1)
    out: dict[str, set[str]] = {}
    for line in diagram.splitlines():
        words = re.sub(r"\(.*", "", line).split()  # a note in parentheses ends the dependencies
        layers = [w for w in words if w.endswith("/") and not w.startswith(("tools/", "include/", "src/"))]
        if not layers or words[0] != layers[0]:
            continue  # the program, the public API, libraries of their own (src/preload/), continuations
        deps = {d for w in words[len(layers) :] for d in expand(w)}
        for layer in layers:
            out[expand(layer)[0]] = deps
    return out


def test_the_doc_draws_every_layer_of_the_build_with_its_dependencies() -> None:
    built = build_layers((ROOT / "CMakeLists.txt").read_text())
    drawn = doc_layers((ROOT / "docs" / "layers.md").read_text())
    assert set(drawn) == set(
        built
    ), f"only in the doc: {set(drawn) - set(built)}; only built: {set(built) - set(drawn)}"
    differ = {name: (drawn[name], built[name]) for name in built if drawn[name] != built[name]}
    assert not differ, f"dependencies (doc, CMakeLists.txt) differ: {differ}"


def test_the_parsers_see_a_difference() -> None:
    """The comparison above is not vacuous: a layer dropped from the diagram or a dependency added
    to a strata_layer() line is seen."""
    cmake = (ROOT / "CMakeLists.txt").read_text()
    doc = (ROOT / "docs" / "layers.md").read_text()
    assert len(build_layers(cmake)) >= 13 and build_layers(cmake) == doc_layers(doc)
    assert "advise" not in doc_layers(re.sub(r"^\s*advise/.*\n", "", doc, flags=re.M))
    more = cmake.replace("strata_layer(advise DEPENDS arch", "strata_layer(advise DEPENDS fs arch")
    assert build_layers(more)["advise"] != doc_layers(doc)["advise"]
