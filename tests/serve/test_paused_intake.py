"""Evaluation paused (``serve.spool_only``): requests are spooled raw, decoded at the next
start; a span the decoder refuses after the acknowledgement is dead-lettered with the
reason and the rest of its request is evaluated. Real OTLP exporters, real servers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanContext, TraceFlags

from tests.serve.conftest import metric, wait_for
from tests.serve.expected import (
    CASES,
    SAMPLES,
    assert_same_verdicts,
    delivered_verdicts,
    expected_verdicts,
)
from tests.serve.sender import read_lines

pytestmark = pytest.mark.slow

GRPC_FILE = SAMPLES / "weather_openinference.otlp.jsonl"  # session "weather-oi"
HTTP_FILE = SAMPLES / "weather_genai.otlp.jsonl"
CRAFTED_FILE = SAMPLES / "weather_openllmetry.otlp.jsonl"
LIMIT = 300_000  # max_request_decoded_bytes of the paused server
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


def _with_a_span_that_is_not_protobuf(path: Path, pad: int = 0) -> tuple[bytes, int]:
    """The SDK's encoding of ``path``'s spans as one request, plus bytes in the place of
    a span that are no protobuf ``Span`` (the envelope around them is sound), ``pad``
    bytes of them beyond the first three."""
    from aem.serve.envelope import Envelope

    spans = [span for line in read_lines([str(path)]) for span in line]
    envelope = Envelope.FromString(encode_spans(spans).SerializeToString())
    envelope.resource_spans[0].scope_spans[0].spans.append(b"\xff\xff\xff" + b"\0" * pad)
    return envelope.SerializeToString(), len(spans) + 1


def test_paused_requests_are_spooled_raw_and_bad_spans_dead_lettered_later(
    serve_factory,
) -> None:
    paused = serve_factory(
        "paused", "--spool-only", "true", "--max-request-decoded-bytes", str(LIMIT)
    )
    batch = _one_batch_with_a_poisoned_span(GRPC_FILE)
    exporter = OTLPSpanExporter(endpoint=paused.grpc, insecure=True, timeout=30)
    assert exporter.export(batch) is SpanExportResult.SUCCESS
    exporter.shutdown()
    http = HttpSpanExporter(endpoint=f"{paused.http}/v1/traces", timeout=30)
    http_batch = [span for line in read_lines([str(HTTP_FILE)]) for span in line]
    assert http.export(http_batch) is SpanExportResult.SUCCESS
    http.shutdown()
    crafted, crafted_spans = _with_a_span_that_is_not_protobuf(CRAFTED_FILE)
    with grpc.insecure_channel(paused.grpc) as channel:
        channel.unary_unary(EXPORT)(crafted, timeout=10)
        # Garbage is still refused at the door, on both transports; so is a request
        # heavier than a request may decode into (its serialized size counts).
        with pytest.raises(grpc.RpcError) as garbage:
            channel.unary_unary(EXPORT)(b"\xff\x00garbage", timeout=10)
        heavy, _ = _with_a_span_that_is_not_protobuf(CRAFTED_FILE, pad=LIMIT)
        with pytest.raises(grpc.RpcError) as too_large:
            channel.unary_unary(EXPORT)(heavy, timeout=10)
    assert garbage.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert too_large.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "decoded-bytes limit" in str(too_large.value.details())
    bad = httpx.post(
        f"{paused.http}/v1/traces",
        content=b"\xff\x00garbage",
        headers={"Content-Type": "application/x-protobuf"},
    )
    assert bad.status_code == 400
    # Acknowledged means on disk, as the requests came: no span decoded yet.
    assert _rows(paused.spool, "SELECT count(*), sum(spans) FROM requests") == [
        (3, len(batch) + len(http_batch) + crafted_spans)
    ]
    assert _rows(paused.spool, "SELECT count(*) FROM spans") == [(0,)]
    assert paused.stop() == 0

    again = serve_factory("again", "--cases", str(CASES), reuse_spool=paused.spool)
    expected = expected_verdicts([GRPC_FILE, HTTP_FILE, CRAFTED_FILE])
    wait_for(lambda: len(again.verdicts()) >= len(expected), timeout=300, what="verdicts")
    assert metric(again.http, "aem_dead_letter_sessions") == 2
    assert again.stop() == 0
    # The rest of each poisoned request was evaluated exactly as `aem audit` evaluates it.
    assert_same_verdicts(delivered_verdicts(again.verdicts()), expected)
    dead = _rows(again.spool, "SELECT session_id, spans, error FROM dead_letter ORDER BY 1")
    assert [(name.split(":")[0], spans) for name, spans, _ in dead] == [("request", 1)] * 2
    zero_id, not_protobuf = dead[0][2], dead[1][2]  # in arrival order
    assert "span_id" in zero_id and "zeros" in zero_id, zero_id
    assert "not an OTLP Span" in not_protobuf, not_protobuf
    # Neither refused span can be rebuilt from the decoder's output: their bytes are kept
    # (the request holding the all-zero id, the three bytes that are not a span).
    kept = _rows(again.spool, "SELECT trace_id, span_id, data FROM dead_spans ORDER BY 1, 3")
    assert [(t, s) for t, s, _ in kept] == [("", "")] * 2
    assert b"\xff\xff\xff" in [data for _, _, data in kept]
    assert _rows(again.spool, "SELECT count(*) FROM requests") == [(0,)]
    assert _rows(again.spool, "SELECT count(*) FROM spans") == [(0,)]
