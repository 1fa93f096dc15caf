"""Evaluation paused (``serve.spool_only``): requests are spooled raw, decoded at the next
start; a span the decoder refuses after the acknowledgement is dead-lettered with the
reason and the rest of its request is evaluated. Real OTLP exporters, real servers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanContext, TraceFlags

from tests.live.conftest import metric, wait_for
from tests.live.expected import (
    CASES,
    SAMPLES,
    assert_same_verdicts,
    delivered_verdicts,
    expected_verdicts,
)
from tests.live.sender import read_lines

pytestmark = pytest.mark.slow

GRPC_FILE = SAMPLES / "weather_openinference.otlp.jsonl"  # session "weather-oi"
HTTP_FILE = SAMPLES / "weather_genai.otlp.jsonl"
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def _rows(spool: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(spool) as conn:
        return conn.execute(sql).fetchall()


def _one_batch_with_a_poisoned_span(path: Path) -> list:
    """Every span of ``path`` in one export, plus a span whose span id is all zeros (the
    SDK encodes it; the OTLP decoder refuses it)."""
    batch = [span for line in read_lines([str(path)]) for span in line]
    first = batch[0]
    zero = SpanContext(first.context.trace_id, 0, False, TraceFlags(TraceFlags.SAMPLED))
    poisoned = type(first)(
        name="poisoned",
        context=zero,
        parent=first.context,
        resource=first.resource,
        start_time=first.start_time,
        end_time=first.end_time,
        instrumentation_scope=first.instrumentation_scope,
    )
    return [*batch, poisoned]


def test_paused_requests_are_spooled_raw_and_bad_spans_dead_lettered_later(
    serve_factory,
) -> None:
    paused = serve_factory("paused", "--spool-only", "true")
    batch = _one_batch_with_a_poisoned_span(GRPC_FILE)
    exporter = OTLPSpanExporter(endpoint=paused.grpc, insecure=True, timeout=30)
    assert exporter.export(batch) is SpanExportResult.SUCCESS
    exporter.shutdown()
    http = HttpSpanExporter(endpoint=f"{paused.http}/v1/traces", timeout=30)
    http_batch = [span for line in read_lines([str(HTTP_FILE)]) for span in line]
    assert http.export(http_batch) is SpanExportResult.SUCCESS
    http.shutdown()
    # Garbage is still refused at the door, on both transports.
    with grpc.insecure_channel(paused.grpc) as channel, pytest.raises(grpc.RpcError) as garbage:
        channel.unary_unary(EXPORT)(b"\xff\x00garbage", timeout=10)
    assert garbage.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    bad = httpx.post(
        f"{paused.http}/v1/traces",
        content=b"\xff\x00garbage",
        headers={"Content-Type": "application/x-protobuf"},
    )
    assert bad.status_code == 400
    # Acknowledged means on disk, as the requests came: no span decoded yet.
    assert _rows(paused.spool, "SELECT count(*), sum(spans) FROM requests") == [
        (2, len(batch) + len(http_batch))
    ]
    assert _rows(paused.spool, "SELECT count(*) FROM spans") == [(0,)]
    assert paused.stop() == 0

    again = serve_factory("again", "--cases", str(CASES), reuse_spool=paused.spool)
    expected = expected_verdicts([GRPC_FILE, HTTP_FILE])
    wait_for(lambda: len(again.verdicts()) >= len(expected), timeout=300, what="verdicts")
    assert metric(again.http, "aem_dead_letter_sessions") == 1
    assert again.stop() == 0
    # The rest of the poisoned batch was evaluated exactly as `aem audit` evaluates it.
    assert_same_verdicts(delivered_verdicts(again.verdicts()), expected)
    [(name, spans, error)] = _rows(again.spool, "SELECT session_id, spans, error FROM dead_letter")
    assert name.startswith("request:") and spans == 1
    assert "span_id" in error and "zeros" in error, error
    # The refused span cannot be rebuilt from the decoder's output: the request is kept.
    [(trace_id, span_id, size)] = _rows(
        again.spool, "SELECT trace_id, span_id, length(data) FROM dead_spans"
    )
    assert (trace_id, span_id) == ("", "") and size > 0
    assert _rows(again.spool, "SELECT count(*) FROM requests") == [(0,)]
    assert _rows(again.spool, "SELECT count(*) FROM spans") == [(0,)]
