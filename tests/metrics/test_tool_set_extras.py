"""Extra calls by kind: a look-up the case did not list passes and is said; a call that
may change state fails. Recorded with the real OTel SDK and audited through the CLI, so
the tools' MCP annotations come from the trace as an instrumented agent exports them."""

from __future__ import annotations

import base64
import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from aem.cli import app
from scripts.generate_sample_traces import Session
from tests.agent_kit import GenAIAgent, ToolCall, ToolSpec, message, record, text_part, write_cases
from tests.conftest import run_audit, session

OBJECT = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class AnnotatedTool(ToolSpec):
    """A tool declared as an MCP server lists it: with ``annotations``."""

    annotations: dict[str, Any] | None = None

    def definition(self) -> dict[str, Any]:
        found = super().definition()
        return {**found, "annotations": self.annotations} if self.annotations else found


TOOLS = [
    AnnotatedTool("fs.ls", "List a folder.", OBJECT),
    AnnotatedTool("run_query", "Run SQL.", OBJECT, {"readOnlyHint": True}),
    AnnotatedTool("fetch_page", "Fetch and cache a page.", OBJECT, {"readOnlyHint": False}),
    AnnotatedTool("mkdir", "Make a folder.", OBJECT),
    AnnotatedTool("frobnicate", "Who knows.", OBJECT),
]
CALLS = [
    ToolCall("c1", "fs.ls", {"path": "/"}, "docs src"),
    ToolCall("c2", "run_query", {"sql": "select 1"}, "1"),
    ToolCall("c3", "mkdir", {"path": "/out"}, "ok"),
    ToolCall("c4", "fetch_page", {"url": "https://example.com"}, "<html>"),
    ToolCall("c5", "frobnicate", {}, "done"),
]


def _agent(ids: list[str]) -> Any:
    def build(recording: Session) -> None:
        agent = GenAIAgent(recording, "files-1", "gpt-4o", TOOLS)
        calls = [c for c in CALLS if c.id in ids]
        with agent.invoke_agent("files_agent", root=True):
            asked = [message("user", text_part("make /out"))]
            agent.chat(asked, calls=calls)
            for call in calls:
                with agent.execute_tool(call):
                    pass
            agent.chat(asked, text="Made /out.")

    return build


def _audit(tmp_path: Path, ids: list[str], *options: str, **case: Any) -> dict[str, Any]:
    trace = record(tmp_path / "t.jsonl", "files-1", _agent(ids))
    expected = [{"name": "mkdir", "arguments": {"path": "/out"}}]
    cases = write_cases(
        tmp_path / "cases.jsonl",
        {"session_id": "files-1", "expected_tool_calls": expected, **case},
    )
    _, report, _ = run_audit(str(trace), "--cases", str(cases), *options)
    return session(report, "files-1")


def _tool_choice(found: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {
        t["name"]: (m["outcome"], m["explanation"])
        for t in found["turns"]
        for m in t["metrics"]
        if m["name"] == "tool_choice"
    }


def test_look_ups_pass_and_say_why_writes_and_unknowns_fail(tmp_path: Path) -> None:
    found = _audit(tmp_path, ["c1", "c2", "c3", "c4", "c5"])
    verdicts = _tool_choice(found)
    assert verdicts["fs.ls"] == (
        "pass",
        "extra look-up `fs.ls`: allowed (read verb 'ls'); not among the expected calls "
        "(matching.extra_calls = 'writes')",
    )
    outcome, why = verdicts["run_query"]  # "run" says nothing; its definition does
    assert outcome == "pass" and "(readOnlyHint: true in its definition)" in why
    outcome, why = verdicts["fetch_page"]  # "fetch" reads, but its definition says it writes
    assert outcome == "fail" and "it changes state: readOnlyHint: false in its definition" in why
    outcome, why = verdicts["frobnicate"]
    assert outcome == "fail" and "not known to only read" in why
    assert verdicts["mkdir"][0] == "pass"
    assert {c["name"] for c in found["root_causes"]} == {"fetch_page", "frobnicate"}


def test_only_look_ups_extra_leaves_no_root_cause(tmp_path: Path) -> None:
    found = _audit(tmp_path, ["c1", "c2", "c3"])
    assert found["root_causes"] == []


def test_the_case_decides_before_the_definition_and_the_name(tmp_path: Path) -> None:
    found = _audit(
        tmp_path,
        ["c1", "c3", "c4", "c5"],
        read_only_tools=["frobnicate", "fetch_page"],
        state_changing_tools=["fs.ls"],
    )
    verdicts = _tool_choice(found)
    assert (
        verdicts["frobnicate"][0] == "pass"
        and "the case's read_only_tools" in (verdicts["frobnicate"][1])
    )
    assert verdicts["fetch_page"][0] == "pass"
    assert (
        verdicts["fs.ls"][0] == "fail"
        and "the case's state_changing_tools" in (verdicts["fs.ls"][1])
    )


def test_strict_setting_and_a_case_of_its_own(tmp_path: Path) -> None:
    strict = _audit(tmp_path, ["c1", "c3"], "--set", 'matching.extra_calls="fail"')
    assert _tool_choice(strict)["fs.ls"][0] == "fail"
    loose = _audit(tmp_path, ["c1", "c3", "c5"], extra_calls="allow")
    assert loose["root_causes"] == []
    assert "allowed (matching.extra_calls = 'allow')" in _tool_choice(loose)["frobnicate"][1]


def test_an_optional_look_up_not_made_is_not_required(tmp_path: Path) -> None:
    found = _audit(
        tmp_path,
        ["c3"],
        expected_tool_calls=[
            {"name": "fs.ls", "arguments": {"path": "/"}, "optional": True},
            {"name": "mkdir", "arguments": {"path": "/out"}},
        ],
    )
    assert found["root_causes"] == []
    outcome, why = _tool_choice(found)["files_agent"]
    assert outcome == "pass" and "fs.ls({'path': '/'}) not made: not required" in why


def test_the_html_report_says_each_allowed_look_up(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    _audit(tmp_path, ["c1", "c2", "c3"], "--html", str(page))
    packed = re.search(
        r'<script type="application/octet-stream" id="aem-sessions">(.*?)</',
        page.read_text(encoding="utf-8"),
    )
    assert packed is not None
    lines = gzip.decompress(base64.b64decode(packed.group(1))).decode().splitlines()
    [details] = [json.loads(line)["session"] for line in lines if line]
    said = [m["explanation"] for t in details["turns"] for m in t["metrics"]]
    assert any(s.startswith("extra look-up `fs.ls`: allowed (read verb 'ls')") for s in said)
    assert any(s.startswith("extra look-up `run_query`: allowed (readOnlyHint") for s in said)


def test_the_terminal_says_each_allowed_look_up_and_counts_them(tmp_path: Path) -> None:
    trace = record(tmp_path / "t.jsonl", "files-1", _agent(["c1", "c2", "c3", "c5"]))
    cases = write_cases(
        tmp_path / "cases.jsonl",
        {"session_id": "files-1", "expected_tool_calls": [{"name": "mkdir", "arguments": {}}]},
    )
    shown = CliRunner().invoke(app, ["audit", str(trace), "--cases", str(cases)])
    text = " ".join(shown.stdout.split())  # rich wraps long lines
    assert shown.exit_code == 1  # frobnicate may change state: a root cause
    assert "t1 tool_choice: extra look-up `fs.ls`: allowed (read verb 'ls')" in text
    assert "t2 tool_choice: extra look-up `run_query`: allowed (readOnlyHint: true" in text
    assert "2 extra calls allowed by tool_choice ([matching] extra_calls): fs.ls, run_query" in (
        text
    )
