"""Requests spooled raw while evaluation was paused, decoded at the next start.

Why a separate step: with ``serve.spool_only`` the receiver acknowledges a protobuf request
once its bytes are on disk (:meth:`aem.serve.intake.Intake.spool_raw`), so nothing it
holds has been decoded. Before the spool is replayed, each such request is decoded as a
live one would have been — the same decoder, the same :func:`~aem.serve.intake.screen` —
and settled in one transaction: its spans become rows of ``spans``, what is refused goes
to the dead-letter tables under ``request:<seq>`` with the reasons. A span that is not
even a protobuf ``Span`` costs only itself: the request is rebuilt from its envelope
without it.
"""

from __future__ import annotations

import logging
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from aem.foundation.model import InputIssue, SourceRef
from aem.serve.envelope import parse_envelope
from aem.serve.intake import BadRequest, parse_request, screen, summarize
from aem.serve.spool import DeadRows, SpanRow, Spool, encode_span
from collectors.otlp import decode_proto_request

log = logging.getLogger("aem.serve.rawrequests")


def settle_raw_requests(spool: Spool) -> tuple[int, int]:
    """Decode every raw request into span rows; (requests settled, spans dead-lettered).

    A crash midway leaves each request either raw or settled, never both.
    """
    settled = dead_spans = 0
    for seq, origin, spans, body in spool.raw_requests():
        kept, dead = decoded_rows(body, origin, spans)
        if spool.settle_request(seq, kept, dead):
            settled += 1
            if dead is not None:
                dead_spans += dead.spans
                log.warning(
                    "spooled request held spans that cannot be evaluated; dead-lettered",
                    extra={"request": f"request:{seq}", "spans": dead.spans, "error": dead.error},
                )
    return settled, dead_spans


def decoded_rows(body: bytes, origin: str, spans: int) -> tuple[list[SpanRow], DeadRows | None]:
    """A raw request's span rows to keep, and what to dead-letter (None: nothing)."""
    unparsed: list[SpanRow] = []
    issues: list[InputIssue] = []
    try:
        try:
            request = parse_request(body)
        except BadRequest:
            request = _salvage(body, unparsed, issues)
        decoded, decode_issues = decode_proto_request(request, SourceRef(origin))
    except Exception as exc:  # a corrupted row, or a decoder bug: keep the bytes, say why
        return [], DeadRows([("", "", body)], spans, f"{type(exc).__name__}: {exc}")
    issues += decode_issues
    undecodable = sum(i.spans_skipped for i in decode_issues)
    good = screen(decoded, issues)
    kept = [(s.trace_id, s.span_id, encode_span(s)) for s in good]
    answer = summarize(issues)
    if not answer.rejected_spans:
        return kept, None
    chosen = {id(s) for s in good}
    rows = [
        (str(s.trace_id), str(s.span_id), encode_span(s)) for s in decoded if id(s) not in chosen
    ]
    if undecodable:  # spans the decoder could not even build: only the request holds them
        rows.append(("", "", body))
    return kept, DeadRows(rows + unparsed, answer.rejected_spans, answer.error_message)


def _salvage(body: bytes, unparsed: list[SpanRow], issues: list[InputIssue]) -> Any:
    """The request rebuilt from its envelope without the parts that do not parse; each
    left-out span is added to ``unparsed`` (its bytes) and ``issues`` (why)."""
    request = ExportTraceServiceRequest()
    for i, raw_rs in enumerate(parse_envelope(body).resource_spans):
        resource_spans = request.resource_spans.add()
        for j, raw_ss in enumerate(raw_rs.scope_spans):
            scope_spans = resource_spans.scope_spans.add()
            where = f"resource {i}, scope {j}"
            try:
                resource_spans.resource.ParseFromString(raw_rs.resource)
                scope_spans.scope.ParseFromString(raw_ss.scope)
            except Exception as exc:
                _left_out(list(raw_ss.spans), f"{where}: not OTLP ({exc})", unparsed, issues)
                del resource_spans.scope_spans[-1]
                continue
            for k, raw in enumerate(raw_ss.spans):
                span = Span()
                try:
                    span.ParseFromString(raw)
                except Exception as exc:
                    _left_out(
                        [raw], f"{where}, span {k}: not an OTLP Span ({exc})", unparsed, issues
                    )
                    continue
                scope_spans.spans.append(span)
    return request


def _left_out(
    raws: list[bytes], why: str, unparsed: list[SpanRow], issues: list[InputIssue]
) -> None:
    unparsed.extend(("", "", raw) for raw in raws)
    issues.append(
        InputIssue(kind="invalid_span", message=f"{why}; refused", spans_skipped=len(raws))
    )
