"""The HTML report without a browser: escaping, the page's policy, counts, compare, CLI.

What a browser would hide is checked here on the bytes: that nothing from a trace reaches
the page unescaped, that the Content-Security-Policy hashes match the inline script and
style exactly (a mismatch would silently disable the page), and that the sessions packed
into the page decode to the report they came from.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from aem.cli import app
from aem.foundation.model import (
    AuditReport,
    Label,
    MetricResult,
    Outcome,
    RootCause,
    SessionReport,
    TurnKind,
    TurnVerdict,
)
from aem.ranking import rank_root_causes, signature
from aem.report.html import (
    metric_rows,
    render_compare,
    render_report,
    script_json,
    session_status,
    unchecked_turns,
)

PAYLOAD = "<img src=x onerror=alert(1)></script><script>alert(2)</script>\"'&"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_script_json_is_inert_inside_a_script_element_and_round_trips(value: Any) -> None:
    text = str(script_json(value))
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == value


def _metric(name: str, turn: str, outcome: Outcome, explanation: str = "") -> MetricResult:
    return MetricResult(name=name, turn_id=turn, outcome=outcome, explanation=explanation)


def _session(sid: str, *, fail: str | None = None, name: str = "get_orders") -> SessionReport:
    """Three turns: t1 fails ``fail`` (if given), t2 inherits it, t3 is judged by no metric."""
    failed = fail is not None
    t1 = TurnVerdict(
        turn_id="t1",
        span_ids=["a1"],
        kind=TurnKind.TOOL_CALL,
        name=name,
        label=Label.ROOT_CAUSE if failed else Label.OK,
        metrics=[
            _metric(fail or "tool_execution", "t1", Outcome.FAIL if failed else Outcome.PASS, sid),
            _metric("tool_choice", "t1", Outcome.PASS),
        ],
    )
    t2 = TurnVerdict(
        turn_id="t2",
        span_ids=["a2"],
        kind=TurnKind.ANSWER,
        name="agent",
        label=Label.PRIOR_ACTION_FAILED if failed else Label.OK,
        inherited_from=["t1"] if failed else [],
        metrics=[
            _metric("correctness.truthfulness", "t2", Outcome.FAIL if failed else Outcome.ERROR)
        ],
    )
    t3 = TurnVerdict(
        turn_id="t3",
        span_ids=["a3"],
        kind=TurnKind.REASONING,
        name="agent",
        label=Label.OK,
        metrics=[_metric("tool_choice", "t3", Outcome.SKIP)],
    )
    causes = []
    if fail is not None:
        causes.append(
            RootCause(
                turn_id="t1",
                span_ids=["a1"],
                kind=TurnKind.TOOL_CALL,
                name=name,
                metrics=[fail],
                category="data",
                signature=signature(fail, "tool_call", name, "data"),
            )
        )
    return SessionReport(session_id=sid, case_found=True, turns=[t1, t2, t3], root_causes=causes)


def _report(*sessions: SessionReport) -> AuditReport:
    return AuditReport(
        sessions=list(sessions),
        ranking=rank_root_causes(sessions),
        sessions_with_root_cause=sum(1 for s in sessions if s.root_causes),
        spans_read=9,
    )


def _page_parts(page: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The page's index and its sessions, decoded as the page's script decodes them."""
    index = re.search(r'<script type="application/json" id="aem-data">(.*?)</script>', page, re.S)
    packed = re.search(r'<script type="application/octet-stream" id="aem-sessions">(.*?)</', page)
    assert index and packed
    lines = gzip.decompress(base64.b64decode(packed.group(1))).decode().split("\n")
    return json.loads(index.group(1)), [json.loads(line) for line in lines if line]


def test_policy_allows_only_the_pages_own_script_and_style_by_hash() -> None:
    page = render_report(_report(_session("s1", fail="tool_execution")))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    content = html.unescape(policy.group(1))
    directives = dict(d.strip().split(" ", 1) for d in content.split(";"))
    assert directives["default-src"] == "'none'" and "unsafe" not in content
    code = re.findall(r"<script>(.*?)</script>", page, re.S)
    style = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert len(code) == 1 and len(style) == 1  # the data blocks carry a non-script type
    for text, directive in ((code[0], "script-src"), (style[0], "style-src")):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert directives[directive] == f"'sha256-{digest}'"
    assert page.count("<script") == 3


def test_trace_text_is_escaped_in_the_summary_and_intact_in_the_data() -> None:
    hostile = _session(PAYLOAD, fail="tool_execution", name=PAYLOAD)
    page = render_report(_report(hostile, _session("s2")), title=PAYLOAD)
    assert "<img" not in page and "alert(2)</script>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # ranking row and title, escaped
    index, sessions = _page_parts(page)
    assert index["sessions"][0]["id"] == PAYLOAD and index["ranking"][0]["name"] == PAYLOAD
    assert sessions[0]["session"]["turns"][0]["metrics"][0]["explanation"] == PAYLOAD


def test_counts_per_metric_and_unchecked_turns() -> None:
    report = _report(_session("s1", fail="tool_execution"), _session("s2"))
    rows = {row.name: row.counts for row in metric_rows(report)}
    assert rows == {
        "correctness.truthfulness": {"fail": 1, "error": 1},
        "tool_choice": {"pass": 2, "skip": 2},
        "tool_execution": {"fail": 1, "pass": 1},
    }
    assert unchecked_turns(report) == (2, 6)
    page = render_report(report)
    assert re.search(r"every metric skipped\): <b>2</b> of 6", page)


def test_the_page_carries_every_session_whole_and_an_index_to_filter_on() -> None:
    report = _report(_session("s1", fail="argument_validity"), _session("s2"))
    index, sessions = _page_parts(render_report(report))
    assert [s["session"] for s in sessions] == [
        s.model_dump(mode="json", exclude_defaults=True) for s in report.sessions
    ]
    first, second = index["sessions"]
    assert first["labels"] == [1, 1, 0, 1] and second["labels"] == [0, 0, 2, 1]
    assert first["failed"] == ["argument_validity", "correctness.truthfulness"]
    assert first["categories"] == ["data"] and second["categories"] == []
    assert first["ranking"] == [0] and second["ranking"] == []


def test_compare_marks_root_causes_gone_new_and_still_failing() -> None:
    before = _report(_session("a", fail="tool_execution"), _session("b", fail="tool_choice"))
    after = _report(
        _session("a", fail="tool_execution"), _session("b"), _session("c", fail="argument_validity")
    )
    index, sessions = _page_parts(render_compare(before, after))
    status = {row["metric"]: row["status"] for row in index["ranking"]}
    assert status == {
        "argument_validity": "new",
        "tool_execution": "still failing",
        "tool_choice": "gone",
    }
    assert {s["id"]: s["status"] for s in index["sessions"]} == {
        "a": "still failing",
        "b": "fixed",
        "c": "new failing",
    }
    fixed = sessions[1]
    assert fixed["before"]["root_causes"] and not fixed["session"].get("root_causes")
    # A gone root cause still filters to the session that had it.
    gone = next(i for i, r in enumerate(index["ranking"]) if r["status"] == "gone")
    assert gone in index["sessions"][1]["ranking"]
    assert session_status(_session("x"), None) == "gone"


def test_report_and_diff_commands_write_the_page(tmp_path: Path) -> None:
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(_report(_session("a", fail="tool_execution")).model_dump_json())
    after.write_text(_report(_session("a")).model_dump_json())
    out = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", str(before), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "tool_execution" in out.read_text() and "mode-report" in out.read_text()
    compare = tmp_path / "compare.html"
    result = CliRunner().invoke(app, ["diff", str(before), str(after), "--html", str(compare)])
    assert result.exit_code == 0, result.output
    assert "mode-compare" in compare.read_text() and "1 fixed" in compare.read_text()
    missing = CliRunner().invoke(app, ["report", str(tmp_path / "nope.json"), "-o", str(out)])
    assert missing.exit_code == 2
