"""The public Python API (``import aem``): one test per entry point, through ``aem``."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import aem
from aem.cases import CasesError
from tests.conftest import SAMPLES

PARALLEL = SAMPLES / "parallel_tools.otlp.jsonl"


def _sdk_spans() -> list:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    agent = {"session.id": "s-42", "openinference.span.kind": "AGENT", "input.value": "Paris?"}
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "get_weather",
        "input.value": json.dumps({"city": "Paris"}),
        "output.value": json.dumps({"temp": 14}),
    }
    with (
        tracer.start_as_current_span("agent", attributes=agent),
        tracer.start_as_current_span("get_weather", attributes=tool),
    ):
        pass
    return list(exporter.get_finished_spans())


def test_sessions_from_sdk_spans_are_built_and_evaluated() -> None:
    [session] = aem.sessions_from_spans(_sdk_spans())
    assert session.session_id == "s-42"
    assert [(t.kind.value, t.name) for t in session.turns] == [("tool_call", "get_weather")]
    report = aem.evaluate_session(session)
    assert [(v.name, v.label.value) for v in report.turns] == [("get_weather", "ok")]


def _base64_ids(line: str) -> str:
    """OTLP/JSON writes ids in hex; protobuf's JSON mapping of bytes is base64."""
    return re.sub(
        r'"(traceId|spanId|parentSpanId)": ?"([0-9a-fA-F]*)"',
        lambda m: f'"{m[1]}": "{base64.b64encode(bytes.fromhex(m[2])).decode()}"',
        line,
    )


@pytest.mark.slow
def test_sessions_from_otlp_messages_match_the_audit_of_the_same_file() -> None:
    messages = [
        Parse(_base64_ids(line), ExportTraceServiceRequest())
        for line in PARALLEL.read_text().splitlines()
        if line.strip()
    ]
    sessions = aem.sessions_from_spans(messages)
    from_api = [aem.evaluate_session(s).model_dump() for s in sessions]
    audited = [s.model_dump() for s in aem.audit_paths(PARALLEL).sessions]
    assert from_api == audited
    assert any(s["root_causes"] for s in from_api)


def test_sessions_from_spans_refuses_what_is_not_a_span() -> None:
    with pytest.raises(TypeError, match="expected ReadableSpan"):
        aem.sessions_from_spans(["not a span"])


@pytest.mark.parametrize("form", [str, Path, lambda p: [str(p)], lambda p: [Path(p)]])
def test_audit_paths_takes_one_path_or_a_list(form) -> None:
    report = aem.audit_paths(form(PARALLEL))
    assert [s.session_id for s in report.sessions] == ["trip-planner-7"]


def test_audit_paths_raises_on_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no-such"):
        aem.audit_paths(str(tmp_path / "no-such"))


def test_load_cases_takes_str_or_path_and_raises_when_missing(tmp_path: Path) -> None:
    by_str = aem.load_cases(str(SAMPLES / "cases.jsonl"))
    assert by_str == aem.load_cases(SAMPLES / "cases.jsonl") and "trip-planner-7" in by_str
    with pytest.raises(FileNotFoundError):
        aem.load_cases(tmp_path / "none.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    with pytest.raises(CasesError, match=r"bad\.jsonl:1"):
        aem.load_cases(bad)


def test_public_names_are_exported_and_documented() -> None:
    assert set(aem.__all__) <= set(dir(aem))
    for name in aem.__all__:
        assert getattr(aem, name).__doc__, name
    assert "docs/metrics.md" in (aem.__doc__ or "")
    assert (Path(__file__).parents[2] / "docs" / "metrics.md").is_file()
