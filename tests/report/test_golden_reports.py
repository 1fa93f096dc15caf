"""Verdicts are pinned: the reports on the bundled samples, real instrumented traces and a
tau-bench slice must equal, byte for byte, the files written before the last refactor.

A restructuring that changes one verdict, one explanation or the order of one key fails
here. A change that *means* to alter verdicts regenerates the files with
``python -m scripts.golden_reports --write`` and says why in its commit.
"""

from __future__ import annotations

import difflib

import pytest

from scripts.golden_reports import GOLDEN, INPUTS, render

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_report_equals_the_golden_file(name: str) -> None:
    expected = (GOLDEN / f"{name}.report.json").read_text(encoding="utf-8")
    actual = render(name)
    if actual != expected:
        delta = "".join(
            list(
                difflib.unified_diff(
                    expected.splitlines(keepends=True),
                    actual.splitlines(keepends=True),
                    "golden",
                    "now",
                    n=2,
                )
            )[:80]
        )
        pytest.fail(f"report on {name} changed:\n{delta}")
