"""Observation metrics never steal a root cause; "not checked" is not "ok"; span identity
is (trace id, span id). Traces recorded with the real SDK, audited through the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from scripts.generate_sample_traces import Session
from tests.agent_kit import GenAIAgent, ToolCall, ToolSpec, message, record, text_part
from tests.conftest import run_audit, session

LATENCY_PLUGIN = """
from aem.metrics.base import BaseMetric, result
from aem.foundation.model import Outcome


class Latency(BaseMetric):
    name = "team.latency"
    role = "{role}"

    def evaluate(self, context):
        for turn in context.session.turns:
            seconds = (turn.end_unix_nano - turn.start_unix_nano) / 1e9
            if seconds > 1.5:
                yield result(self.name, turn, Outcome.FAIL, f"took {{seconds:.1f}} s")
"""

SQL = ToolSpec("run_sql", "Run a SQL query.", {"type": "object"})
ASK = ToolSpec("ask_analyst", "Delegate to the analyst.", {"type": "object"})


def _slow_sub_agent(recording: Session) -> None:
    """The analyst's SQL query fails, it retries slowly (2 s), the delegation is slow."""
    root = GenAIAgent(recording, "slow-1", "gpt-4o", [ASK])
    analyst = GenAIAgent(recording, "slow-1", "gpt-4o", [SQL])
    question = [message("user", text_part("How many orders last week?"))]
    ask = ToolCall("c1", "ask_analyst", {"question": "orders last week"}, "I could not tell.")
    query = ToolCall(
        "c2", "run_sql", {"sql": "SELEC count(*) FROM orders"}, "", RuntimeError("syntax error")
    )
    with root.invoke_agent("support", root=True):
        said = root.chat(question, calls=[ask])
        with root.execute_tool(ask), analyst.invoke_agent("analyst"):
            asked = [message("user", text_part("orders last week"))]
            tried = analyst.chat(asked, calls=[query])
            with analyst.execute_tool(query):
                pass
            recording.clock.advance(2000)  # thinking long after the error
            analyst.chat([*asked, tried], text="I could not tell.")
        root.chat([*question, said], text="Sorry, I could not find out.")


def _audit_with(tmp_path: Path, monkeypatch: Any, role: str) -> dict[str, Any]:
    module = f"team_latency_{role}"
    (tmp_path / f"{module}.py").write_text(LATENCY_PLUGIN.format(role=role))
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / f"{role}.toml"
    config.write_text(f'[metrics]\nplugins = ["{module}:Latency"]\n')
    path = record(tmp_path / "slow.jsonl", "slow-1", _slow_sub_agent)
    try:
        _, report, _ = run_audit(str(path), "--config", str(config))
    finally:
        sys.modules.pop(module, None)
    return report


def test_a_latency_observation_does_not_steal_the_root_cause_from_the_sql_error(
    tmp_path: Path, monkeypatch: Any
) -> None:
    report = _audit_with(tmp_path, monkeypatch, "observation")
    slow = session(report, "slow-1")
    assert [(c["name"], c["metrics"]) for c in slow["root_causes"]] == [
        ("run_sql", ["tool_execution"])
    ]
    noted = {c["name"] for c in slow["observations"]}
    assert "ask_analyst" in noted  # the delegation took > 1.5 s: reported, not a cause
    assert all(c["metrics"] == ["team.latency"] for c in slow["observations"])
    assert {r["metric"] for r in report["observations"]} == {"team.latency"}
    assert all(r["metric"] != "team.latency" for r in report["ranking"])


def test_the_same_plugin_as_a_cause_would_steal_it(tmp_path: Path, monkeypatch: Any) -> None:
    """Why the role matters: as a cause, the slow delegation (an ancestor of the SQL call)
    becomes the root cause and the SQL error a mere consequence."""
    slow = session(_audit_with(tmp_path, monkeypatch, "cause"), "slow-1")
    assert slow["root_causes"][0]["name"] == "ask_analyst"
    sql = next(t for t in slow["turns"] if t["name"] == "run_sql")
    assert sql["label"] == "prior_action_failed"


def _answer_only(recording: Session) -> None:
    agent = GenAIAgent(recording, "plain-1", "gpt-4o", [])
    with agent.invoke_agent("helper", root=True):
        agent.chat([message("user", text_part("Say hello."))], text="Hello!")


def _untraced_call(recording: Session) -> None:
    """A call the model asked for whose run was not traced and whose result never shows."""
    agent = GenAIAgent(recording, "plain-1", "gpt-4o", [])
    with agent.invoke_agent("helper", root=True):
        agent.chat(
            [message("user", text_part("Look x up."))],
            calls=[ToolCall("c1", "lookup", {"q": "x"}, "")],
        )


def test_a_turn_nothing_checked_is_shown_and_counted_as_not_checked(tmp_path: Path) -> None:
    path = record(tmp_path / "t.jsonl", "plain-1", _untraced_call)
    no_loop_check = "metrics.disabled=['tool_repetition']"
    _, report, _ = run_audit(str(path), "--set", no_loop_check)
    plain = session(report, "plain-1")
    unchecked = [
        t for t in plain["turns"] if not any(m["outcome"] in ("pass", "fail") for m in t["metrics"])
    ]
    assert unchecked and plain["unchecked_turns"] == len(unchecked)
    assert all(t["label"] == "ok" for t in unchecked)  # labels keep their values
    from aem.cli import app

    shown = CliRunner().invoke(
        app, ["audit", str(path), "--set", no_loop_check, "--no-progress"], env={"COLUMNS": "200"}
    )
    assert f"– not checked ({len(unchecked[0]['metrics'])} skipped)" in shown.stdout
    assert "no case matched any session" in shown.stdout
    assert f"{len(unchecked)} turns not checked" in shown.stdout


def _replayed(path: Path, trace_id: str) -> Path:
    """The same spans under another trace id, as a replay or re-id tool writes them."""
    lines = []
    for line in path.read_text().splitlines():
        document = json.loads(line)
        for resource in document["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    span["traceId"] = trace_id
        lines.append(json.dumps(document))
    out = path.with_name("replay.jsonl")
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.parametrize("copies", [1, 2])
def test_a_span_id_shared_across_traces_is_not_a_duplicate(tmp_path: Path, copies: int) -> None:
    path = record(tmp_path / "t.jsonl", "plain-1", _answer_only)
    paths = [path] + [_replayed(path, "ab" * 16)] * (copies - 1)
    _, report, _ = run_audit(*map(str, paths))
    plain = session(report, "plain-1")
    assert len(plain["trace_ids"]) == copies
    assert len({t["trace_id"] for t in plain["turns"]}) == copies
    once = {tuple(t["span_ids"]) for t in plain["turns"]}
    assert len(plain["turns"]) == copies * len(once)  # every turn of every trace kept
    assert all(len(s) == 16 for t in plain["turns"] for s in t["span_ids"])  # real ids
    kinds = {i["kind"] for i in plain["issues"]}
    assert "duplicate_span" not in kinds
    assert ("shared_span_id" in kinds) == (copies == 2)
