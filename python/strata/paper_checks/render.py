"""The paper checks as HTML: the report's partial (templates/paper_checks.html.j2), rendered alone."""

from __future__ import annotations

from ..templates import render
from .model import Section


def to_html(found: list[Section]) -> str:
    return render("paper_checks.html.j2", sections=found)
