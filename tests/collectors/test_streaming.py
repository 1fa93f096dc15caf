"""Streaming: sessions close while the file is still being read; stdin; late spans."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from aem.cli import app
from aem.foundation.model import ClosedSession, InputIssue, SpanRecord
from collectors.assembler import SessionAssembler
from collectors.dialects.registry import session_keys
from collectors.readers import read_batches
from tests.conftest import SAMPLES, run_audit

WEATHER = (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines()


def _copies(n: int) -> list[str]:
    """``n`` distinct sessions: the weather run with fresh trace ids and conversation ids."""
    out = []
    for copy in range(n):
        for line in WEATHER:
            document = json.loads(line)
            for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
                span["traceId"] = f"{copy:08x}" + span["traceId"][8:]
                for attribute in span["attributes"]:
                    if attribute["key"] == "gen_ai.conversation.id":
                        attribute["value"] = {"stringValue": f"weather-{copy}"}
            out.append(json.dumps(document))
    return out


def _new_trace_keyed_late(spans: list, keys: tuple[str, ...]) -> tuple:
    """Two spans of a new trace: the first without a session key, the second naming the
    session of ``spans`` (its key arrives after the trace opened)."""
    unkeyed = replace(
        spans[0],
        trace_id="f" * 32,
        span_id="1" * 16,
        attributes={k: v for k, v in spans[0].attributes.items() if k not in keys},
    )
    return unkeyed, replace(spans[-1], trace_id="f" * 32, span_id="2" * 16)


def test_sessions_are_evaluated_as_they_close_not_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(_copies(60)))
    _, report, _ = run_audit(str(path), "--set", "assembly.idle_spans=10")
    assert len(report["sessions"]) == 60
    assert all(len(s["turns"]) == 3 for s in report["sessions"])
    # With a 10-span idle window only a handful of 5-span sessions are ever open at once.
    assert report["peak_open_sessions"] <= 5
    _, whole, _ = run_audit(str(path))
    assert whole["peak_open_sessions"] == 60  # the default window holds them all


def test_stdin_is_read_like_a_file() -> None:
    data = "\n".join(_copies(2)) + "\n"
    result = CliRunner().invoke(app, ["audit", "-", "--json"], input=data)
    report = json.loads(result.stdout)
    assert sorted(s["session_id"] for s in report["sessions"]) == ["weather-0", "weather-1"]
    assert result.exit_code == 0


def test_late_spans_are_counted_not_merged() -> None:
    spans = [s for b in read_batches(str(SAMPLES / "weather_genai.otlp.jsonl")) for s in b.spans]
    issues: list[InputIssue] = []
    assembler = SessionAssembler(idle=5, on_issue=issues.append)
    for clock, span in enumerate(spans):
        assembler.add(span, clock)
    assert assembler.pop_complete(len(spans)) == []  # not idle long enough yet
    [closed] = assembler.pop_complete(len(spans) + 5)
    assert len(closed.spans) == len(spans)
    assembler.add(spans[0], 100)  # a straggler of the evaluated session
    assert assembler.late_spans == 1
    assert [(i.kind, i.session_id) for i in issues] == [("late_span", "weather-genai")]
    assert assembler.open_sessions == 0 and assembler.drain() == []


def test_a_trace_that_names_an_evaluated_session_late_is_late_not_a_second_session() -> None:
    # A trace of the session starts with spans that carry no session key (a child span
    # exported first) and names the session only in a later span, after it was evaluated.
    spans = [s for b in read_batches(str(SAMPLES / "weather_genai.otlp.jsonl")) for s in b.spans]
    keys = session_keys()
    issues: list[InputIssue] = []
    assembler = SessionAssembler(idle=5, on_issue=issues.append)
    for span in spans:
        assembler.add(span, 0)
    [closed] = assembler.pop_complete(10)
    unkeyed, keyed = _new_trace_keyed_late(spans, keys)
    assembler.add(unkeyed, 11)
    assert assembler.open_sessions == 1 and assembler.late_spans == 0  # cannot tell yet
    assembler.add(keyed, 12)
    assert assembler.late_spans == 2 and assembler.open_sessions == 0
    assert assembler.spans_added == len(spans)  # the two are not held, so not in flight
    assert {(i.kind, i.session_id) for i in issues} == {("late_span", closed.session_id)}
    assert assembler.drain() == []


def _weather_spans() -> list[SpanRecord]:
    return [s for b in read_batches(str(SAMPLES / "weather_genai.otlp.jsonl")) for s in b.spans]


def _new_run(spans: list[SpanRecord], tag: str) -> list[SpanRecord]:
    """The same spans as a new run of the same conversation: fresh trace ids, same key."""
    return [replace(s, trace_id=tag + s.trace_id[len(tag) :]) for s in spans]


def _evaluated(assembler: SessionAssembler, spans: list[SpanRecord], now: float) -> ClosedSession:
    for span in spans:
        assembler.add(span, now)
    [closed] = assembler.pop_complete(now + 10)
    return closed


def test_a_returning_conversation_is_late_for_files_and_reopened_for_revisions() -> None:
    spans = _weather_spans()
    again = _new_run(spans, "ffff")
    files = SessionAssembler(idle=5)
    _evaluated(files, spans, 0)
    for span in again:
        files.add(span, 20)
    assert files.late_spans == len(again) and files.open_sessions == 0  # audit: unchanged

    live = SessionAssembler(idle=5, revisions=True)
    first = _evaluated(live, spans, 0)
    second = _evaluated(live, again, 20)  # opened again under the same id, not late
    assert live.late_spans == 0
    assert first.session_id == second.session_id == "weather-genai"
    assert {s.span_id for s in second.spans} == {s.span_id for s in again}
    assert second.trace_ids == sorted({s.trace_id for s in again}) != first.trace_ids
    third = _evaluated(live, _new_run(spans, "eeee"), 40)  # and again
    assert third.session_id == "weather-genai" and live.late_spans == 0


def test_revisions_keep_spans_of_an_evaluated_trace_late() -> None:
    spans = _weather_spans()
    issues: list[InputIssue] = []
    assembler = SessionAssembler(idle=5, on_issue=issues.append, revisions=True)
    _evaluated(assembler, spans, 0)
    for span in spans:  # re-sent: the same traces, already evaluated
        assembler.add(span, 20)
    assert assembler.late_spans == len(spans) and assembler.open_sessions == 0
    assert {i.kind for i in issues} == {"late_span"}
    assert assembler.drain() == []


def test_revisions_keep_a_cut_session_closed() -> None:
    spans = _weather_spans()
    # Cut at its span limit: further runs are the same stream past its limit, not revisions.
    limited = SessionAssembler(idle=5, revisions=True, max_session_spans=2)
    assert _evaluated(limited, spans, 0).cut
    again = _new_run(spans, "ffff")
    for span in again:
        limited.add(span, 20)
    assert limited.late_spans == len(again) and limited.open_sessions == 0
    # Cut at its lifetime: the same.
    aged = SessionAssembler(idle=5, max_lifetime=3, revisions=True)
    for span in spans[:-1]:  # the root never ends: only the lifetime closes it
        aged.add(span, 0)
    [closed] = aged.pop_complete(3)
    assert closed.cut
    for span in again:
        aged.add(span, 20)
    assert aged.late_spans == len(again) and aged.open_sessions == 0


def test_revisions_let_a_trace_that_names_an_evaluated_session_late_reopen_it() -> None:
    spans = _weather_spans()
    keys = session_keys()
    assembler = SessionAssembler(idle=5, revisions=True)
    _evaluated(assembler, spans, 0)
    unkeyed, keyed = _new_trace_keyed_late(spans, keys)
    assembler.add(unkeyed, 11)
    assembler.add(keyed, 12)  # names the evaluated session: the trace moves into it
    assert assembler.late_spans == 0 and assembler.open_sessions == 1
    [revision] = assembler.drain()
    assert revision.session_id == "weather-genai"
    assert [s.span_id for s in revision.spans] == ["1" * 16, "2" * 16]


def test_memory_of_closed_sessions_is_bounded() -> None:
    spans = [s for b in read_batches(str(SAMPLES / "weather_genai.otlp.jsonl")) for s in b.spans]
    assembler = SessionAssembler(idle=1, remember_closed=1)
    for clock, span in enumerate(spans):
        assembler.add(span, clock)
    assert len(assembler.pop_complete(100)) == 1
    assembler.add(spans[0], 101)
    assert assembler.late_spans == 1  # still remembered
    other = [s for b in read_batches(str(SAMPLES / "parallel_tools.otlp.jsonl")) for s in b.spans]
    for span in other:
        assembler.add(span, 200)
    assert len(assembler.pop_complete(300)) == 1  # pushes the weather session out of memory
    assembler.add(spans[0], 301)
    assert assembler.late_spans == 1 and assembler.open_sessions == 1  # now a new session


def test_progress_bar_counts_the_files(tmp_path: Path) -> None:
    lines = _copies(3)
    per_file = len(WEATHER)
    for n in range(3):
        part = lines[n * per_file : (n + 1) * per_file]
        (tmp_path / f"part{n}.otlp.jsonl").write_text("\n".join(part))
    result = CliRunner().invoke(app, ["audit", str(tmp_path), "--json", "--progress"])
    assert result.exit_code == 0
    assert "3/3" in result.stderr and "read" in result.stderr
    assert len(json.loads(result.stdout)["sessions"]) == 3
