"""Two runs of a script appended to one file under one conversation id are one session
to the assembler; the report says so (``runs: 2``) and the terminal too, while a
conversation that goes on (history carried) or a fresh file stays one run. The exporter
starts a fresh file with ``mode="w"``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aem_record import OtlpJsonFileExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from typer.testing import CliRunner

from aem.cli import app
from tests.agent_kit import GenAIAgent, ToolCall, ToolSpec, message, record, text_part
from tests.conftest import run_audit

QUESTION = "What is the weather in Paris?"


def _run(conversation: str, *, follow_up: bool = False) -> Any:
    def build(recording: Any) -> None:
        spec = ToolSpec("get_weather", "Weather.", {"type": "object"})
        agent = GenAIAgent(recording, conversation, "gpt-4o", [spec])
        call = ToolCall("c1", "get_weather", {"city": "Paris"}, '{"temp": 14}')
        asked = [message("user", text_part(QUESTION))]
        with agent.invoke_agent("weather", root=True):
            said = agent.chat(asked, calls=[call])
            with agent.execute_tool(call):
                pass
            answer = agent.chat([*asked, said], text="It is 14C in Paris.")
            if follow_up:
                again = [*asked, said, answer, message("user", text_part("And tomorrow?"))]
                agent.chat(again, text="Probably similar.")

    return build


def test_two_runs_appended_under_one_id_are_reported_as_two(tmp_path: Path) -> None:
    first = record(tmp_path / "a.jsonl", "r1", _run("dev-1"))
    second = record(tmp_path / "b.jsonl", "r2", _run("dev-1"))
    merged = tmp_path / "traces.jsonl"
    merged.write_text(first.read_text() + second.read_text())
    _, report, _ = run_audit(str(merged))
    (session,) = report["sessions"]
    assert session["runs"] == 2
    view = CliRunner().invoke(app, ["audit", str(merged), "--no-progress"], env={"COLUMNS": "200"})
    assert "2 runs under one conversation id" in " ".join(view.stdout.split())


def test_a_conversation_that_goes_on_is_one_run(tmp_path: Path) -> None:
    trace = record(tmp_path / "t.jsonl", "r1", _run("chat-1", follow_up=True))
    _, report, _ = run_audit(str(trace))
    assert [s["runs"] for s in report["sessions"]] == [1]


def test_model_calls_without_history_in_one_trace_are_one_run(tmp_path: Path) -> None:
    """An agent that sends each model call only the user's message (no history) repeats
    the first message in every call of one trace: one run, nothing to say about it."""

    def build(recording: Any) -> None:
        spec = ToolSpec("get_weather", "Weather.", {"type": "object"})
        agent = GenAIAgent(recording, "stateless-1", "gpt-4o", [spec])
        call = ToolCall("c1", "get_weather", {"city": "Paris"}, '{"temp": 14}')
        asked = [message("user", text_part(QUESTION))]
        with agent.invoke_agent("weather", root=True):
            agent.chat(asked, calls=[call])
            with agent.execute_tool(call):
                pass
            agent.chat(asked, text="It is 14C in Paris.")

    trace = record(tmp_path / "t.jsonl", "r1", build)
    _, report, _ = run_audit(str(trace))
    assert [s["runs"] for s in report["sessions"]] == [1]
    view = CliRunner().invoke(app, ["audit", str(trace), "--no-progress"], env={"COLUMNS": "200"})
    assert "runs under one conversation id" not in " ".join(view.stdout.split())


def test_the_exporter_starts_afresh_with_mode_w(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    for mode in ("w", "w"):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path, mode=mode)))
        with provider.get_tracer("t").start_as_current_span("s"):
            pass
        provider.shutdown()
    assert len(path.read_text().splitlines()) == 1
    assert json.loads(path.read_text())["resourceSpans"]
