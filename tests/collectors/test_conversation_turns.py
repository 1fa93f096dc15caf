"""Turns of the conversation from the GenAI conventions: ``handle_conversation_turn``
bounds one exchange, ``gen_ai.invocation.is_nested`` and internal invocations hang under
it, and the older shape (outermost ``invoke_agent`` spans) still works — inferred.

Traces are recorded with the real OpenTelemetry SDK and read back as ``aem audit`` reads
them (:func:`aem.sessions_from_spans`); the report and the terminal are checked through
the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aem_record import otlp_json
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

import aem
from aem.foundation.model import Session

CONVERSATION = "conv-1"


def _tracer() -> tuple[Tracer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test.agent"), exporter


@contextmanager
def _span(
    tracer: Tracer, name: str, operation: str, conversation: str = CONVERSATION, **attrs: Any
) -> Iterator[None]:
    attributes = {"gen_ai.operation.name": operation, "gen_ai.conversation.id": conversation}
    attributes.update({k.replace("__", "."): v for k, v in attrs.items()})
    with tracer.start_as_current_span(name, attributes=attributes):
        yield


def _exchange(
    tracer: Tracer,
    question: str,
    *,
    stated: bool,
    nested_helper: bool,
    conversation: str = CONVERSATION,
) -> None:
    """One user message to answer: a runner turn (or not), the agent, maybe a helper."""
    at = {"conversation": conversation}

    def body() -> None:
        with _span(tracer, "invoke_agent helpdesk", "invoke_agent", **at,
                   gen_ai__agent__name="helpdesk"):  # fmt: skip
            chat = {
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": question}]}]
                ),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "Done."}]}]
                ),
            }
            with _span(tracer, "chat gpt-4o", "chat", **at, **{k.replace(".", "__"): v
                                                          for k, v in chat.items()}):  # fmt: skip
                pass
            if nested_helper:
                with _span(tracer, "invoke_agent helpdesk", "invoke_agent", **at,
                           gen_ai__agent__name="helpdesk",
                           gen_ai__invocation__is_nested=True):  # fmt: skip
                    pass

    if stated:
        with _span(tracer, "handle_conversation_turn", "handle_conversation_turn", **at):
            body()
    else:
        body()


def _session(shapes: list[bool], *, nested_helper: bool = False) -> Session:
    tracer, exporter = _tracer()
    for i, stated in enumerate(shapes):
        _exchange(tracer, f"question {i}", stated=stated, nested_helper=nested_helper)
    (session,) = aem.sessions_from_spans(exporter.get_finished_spans())
    return session


def test_runner_turns_bound_the_conversation_from_the_conventions() -> None:
    session = _session([True, True, True], nested_helper=True)
    assert (session.boundaries, session.conversation_turns) == ("conventions", 3)


def test_the_old_shape_is_inferred_from_outermost_agent_invocations() -> None:
    session = _session([False, False], nested_helper=True)
    assert (session.boundaries, session.conversation_turns) == ("inferred", 2)


def test_a_trace_mixing_both_shapes_counts_both_and_says_inferred() -> None:
    session = _session([True, False, True])
    assert (session.boundaries, session.conversation_turns) == ("inferred", 3)


def test_internal_invocations_never_start_a_turn_of_the_conversation() -> None:
    tracer, exporter = _tracer()
    with (
        _span(tracer, "invoke_agent planner", "invoke_agent", gen_ai__agent__name="planner"),
        _span(tracer, "inner", "gen_ai.invocation.internal", gen_ai__agent__name="coder"),
    ):
        pass
    with _span(tracer, "orphan", "gen_ai.invocation.internal", gen_ai__agent__name="coder"):
        pass
    (session,) = aem.sessions_from_spans(exporter.get_finished_spans())
    assert (session.boundaries, session.conversation_turns) == ("inferred", 1)


def _write(spans: list[ReadableSpan], path: Path) -> Path:
    path.write_text(json.dumps(otlp_json(spans)) + "\n", encoding="utf-8")
    return path


def test_the_report_says_how_each_session_was_bounded_and_the_terminal_counts_inferred(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from aem.cli import app

    tracer, exporter = _tracer()
    for conversation, stated in (("stated", True), ("guessed", False)):
        _exchange(tracer, "hello", stated=stated, nested_helper=False, conversation=conversation)
    trace = _write(list(exporter.get_finished_spans()), tmp_path / "t.jsonl")
    result = CliRunner().invoke(app, ["audit", str(trace), "--json", "--no-progress"])
    report = json.loads(result.stdout)
    found = {
        s["session_id"]: (s["boundaries"], s["conversation_turns"]) for s in report["sessions"]
    }
    assert found == {"stated": ("conventions", 1), "guessed": ("inferred", 1)}
    view = CliRunner().invoke(app, ["audit", str(trace), "--no-progress"], env={"COLUMNS": "200"})
    assert "2 sessions, 0 with a root cause" in " ".join(view.stdout.split())
    assert "1 with inferred turn boundaries" in " ".join(view.stdout.split())
