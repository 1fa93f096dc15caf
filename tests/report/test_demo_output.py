"""What ``make demo`` prints, read as a new user reads it: the audit of the bundled sample
traces, piped, as the Makefile runs it.

Every explanation shortened for the terminal keeps its quoted values whole (a date cut to
'2026-03-0… reads as another date) or marks a passage elided inside its closing quote; the
count of sessions with inferred turn boundaries is followed by what that means.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.runs_kit import piped_audit

pytestmark = pytest.mark.slow

QUOTED = re.compile(r"'([^']*)'")
EXPLANATION = re.compile(r"^  t\d+ ")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, Any]]:
    """The demo's output, one explanation a line (wide enough that nothing wraps), and
    its JSON report, where every explanation is whole."""
    report = tmp_path_factory.mktemp("demo") / "report.json"
    code, out = piped_audit(
        str(SAMPLES),
        "--cases",
        str(SAMPLES / "cases.jsonl"),
        "--taxonomy",
        str(SAMPLES / "taxonomy.toml"),
        "--out",
        str(report),
        columns=4000,
    )
    assert code == 1, out
    return out.splitlines(), json.loads(report.read_text(encoding="utf-8"))


def _whole_values(report: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for session in report["sessions"]:
        for turn in session["turns"]:
            for metric in turn["metrics"]:
                found.update(QUOTED.findall(metric.get("explanation") or ""))
    return found


def test_a_shortened_explanation_never_cuts_a_quoted_value(
    demo: tuple[list[str], dict[str, Any]],
) -> None:
    lines, report = demo
    values = _whole_values(report)
    shortened = [line for line in lines if EXPLANATION.match(line) and "…" in line]
    assert shortened, "the demo shortens some explanation: this test must see one"
    for line in shortened:
        for fragment in QUOTED.findall(line):
            elided = fragment.endswith("…") and any(
                v.startswith(fragment[:-1].rstrip()) for v in values
            )
            assert fragment in values or elided, (fragment, line)
        assert line.count("'") % 2 == 0, line  # no quote left open where the line ends
        assert not re.search(r"\(\S*[^)]* …$", line.split("'")[-1]), line  # nor a "(" cut


def test_the_inferred_turn_boundaries_count_says_what_it_means(
    demo: tuple[list[str], dict[str, Any]],
) -> None:
    lines, report = demo
    inferred = sum(1 for s in report["sessions"] if s["boundaries"] == "inferred")
    assert inferred > 0
    (count,) = [i for i, line in enumerate(lines) if "with inferred turn boundaries" in line]
    assert f"{inferred} with inferred turn boundaries" in lines[count]
    said = lines[count + 1]
    assert "does not mark where each exchange" in said
    assert "a user message and the agent's answer to it" in said
    assert "handle_conversation_turn" in said
