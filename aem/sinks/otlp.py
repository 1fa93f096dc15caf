"""OTLP emitter: ``gen_ai.evaluation.result`` events and evaluation spans.

Why the exporters are called directly instead of through a ``BatchSpanProcessor``: the SDK
processors drop data when their queue is full and never say whether an export succeeded.
The outbox needs a yes/no per batch to retry until the downstream accepts, so this sink
builds SDK ``ReadableSpan`` / ``ReadableLogRecord`` objects and hands them to the OTLP
exporters synchronously.

What goes out (the GenAI semantic conventions' evaluation event, plus AEM's own span):

* per metric result, a LogRecord with ``event_name="gen_ai.evaluation.result"`` carrying the
  evaluated span's trace id and span id — parented to the span it judges, as the GenAI
  conventions ask ("SHOULD be parented to the GenAI operation span being evaluated") —
  and ``gen_ai.evaluation.{name,score.value,score.label,explanation}``;
* per turn, an ``evaluate {turn}`` span in a trace of its own, linked to the span it judges
  (``aem.link = evaluated_span``), with ``aem.label``, ``aem.inherited_from``,
  ``aem.root_cause.span_id`` and ``aem.failed_metrics`` (a ``suspect`` turn, which failed
  nothing, also ``aem.unverified_metrics``), status UNSET whatever the label (a verdict
  is data, not a failed evaluation), and the evaluator's provenance
  (:mod:`aem.foundation.provenance`, ``docs/provenance.md``). Not in the agent's trace: a span
  added there after the fact would stretch the trace's duration and change its tree in
  every backend. Its trace and span ids are derived from the idempotency key, so a re-sent
  span has the same ids and a backend can de-duplicate it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from opentelemetry import trace as trace_api
from opentelemetry._logs import LogRecord
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags
from opentelemetry.trace.status import Status, StatusCode
from pydantic import Field

from aem.sinks.base import SinkSettings
from aem.sinks.http import BoundedHttp
from aem.sinks.records import OutboxItem

EVENT_NAME = "gen_ai.evaluation.result"
SCOPE = InstrumentationScope("aem.serve", "0.1.0")


def _span_id_from_key(key: str) -> int:
    value = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return value or 1


def _trace_id_from_key(key: str) -> int:
    """The evaluation span's own trace: stable per item, so a re-sent span is the same."""
    value = int.from_bytes(
        hashlib.sha256(b"aem.evaluation\x1f" + key.encode()).digest()[:16], "big"
    )
    return value or 1


def _context(trace_id: str, span_id: int | str) -> SpanContext:
    return SpanContext(
        trace_id=int(trace_id, 16),
        span_id=int(span_id, 16) if isinstance(span_id, str) else span_id,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )


def event_attributes(payload: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The ``gen_ai.evaluation.result`` attributes of one metric item."""
    attrs: dict[str, Any] = {
        "gen_ai.evaluation.name": payload["name"],
        "gen_ai.evaluation.score.label": payload["outcome"],
        "gen_ai.evaluation.explanation": payload.get("explanation") or "",
        "aem.session.id": payload["session_id"],
        "aem.turn.id": payload["turn_id"],
        "aem.idempotency_key": key,
    }
    if payload.get("score") is not None:
        attrs["gen_ai.evaluation.score.value"] = float(payload["score"])
    if payload.get("threshold") is not None:
        attrs["aem.threshold"] = float(payload["threshold"])
    if payload["outcome"] == "error":
        attrs["error.type"] = "aem.evaluation_error"
    if not payload.get("session_key_fallback"):
        attrs["gen_ai.conversation.id"] = payload["session_id"]
    attrs.update(payload.get("attributes") or {})  # an item's own extras (scorecard totals)
    return attrs


def span_attributes(payload: Mapping[str, Any], key: str) -> dict[str, Any]:
    """AEM's per-turn attributes on the evaluation span."""
    attrs: dict[str, Any] = {
        "aem.label": payload["label"],
        "aem.session.id": payload["session_id"],
        "aem.turn.id": payload["turn_id"],
        "aem.turn.kind": payload["turn_kind"],
        "aem.evaluated_span_id": payload["span_id"],
        "aem.evaluated_trace_id": payload["trace_id"],  # for backends that drop links
        "aem.failed_metrics": list(payload.get("failed_metrics") or []),
        "aem.inherited_from": list(payload.get("inherited_from") or []),
        "aem.idempotency_key": key,
        "openinference.span.kind": "EVALUATOR",
    }
    unverified = payload.get("unverified_metrics") or []
    if unverified:  # a suspect's "where to look" (it failed nothing)
        attrs["aem.unverified_metrics"] = list(unverified)
    roots = payload.get("root_cause_span_ids") or []
    if roots:
        attrs["aem.root_cause.span_id"] = roots[0]
        attrs["aem.root_cause.span_ids"] = list(roots)
    if payload.get("cut"):
        attrs["aem.session.cut"] = True
    if payload.get("revision"):  # aem serve evaluated a returning conversation again
        attrs["aem.session.revision"] = int(payload["revision"])
    attrs.update(payload.get("attributes") or {})
    return attrs


# One export attempt's budget, with settings or without.
EXPORT_TIMEOUT_SECONDS = 5.0


class OtlpSettings(SinkSettings):
    endpoint: str = Field(
        description="where evaluation events and spans go (e.g. http://127.0.0.1:4317)"
    )
    protocol: Literal["grpc", "http/protobuf"] = "grpc"
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_seconds: float = Field(
        EXPORT_TIMEOUT_SECONDS,
        gt=0,
        description="one export attempt's whole deadline (http/protobuf: connect to last "
        "byte read; grpc: the call's deadline)",
    )
    service_name: str = Field(
        "aem",
        min_length=1,
        description="service.name of the evaluation spans and events: their own service, so "
        "a backend can route them to a project of their own, apart from the agent's",
    )
    resource: dict[str, str] = Field(
        default_factory=dict,
        description="more resource attributes of the evaluation spans and events, e.g. "
        '{"openinference.project.name" = "aem-evals"} to give them a Phoenix project of '
        "their own",
    )
    signals: Literal["spans", "logs", "both"] = Field(
        "both",
        description="what to send: evaluation spans, gen_ai.evaluation.result log events, or "
        "both (a backend that takes no logs, e.g. Phoenix, needs 'spans': otherwise the "
        "events are retried forever)",
    )


class OtlpSink:
    """Sends evaluation events (logs signal) and evaluation spans (traces signal)."""

    name = "otlp"
    Settings = OtlpSettings

    @classmethod
    def from_settings(cls, settings: OtlpSettings, services: object = None) -> OtlpSink:
        return cls(
            settings.endpoint,
            protocol=settings.protocol,
            headers=settings.headers,
            timeout=settings.timeout_seconds,
            signals=settings.signals,
            service_name=settings.service_name,
            resource=settings.resource,
        )

    def __init__(
        self,
        endpoint: str,
        *,
        protocol: Literal["grpc", "http/protobuf"] = "grpc",
        headers: Mapping[str, str] | None = None,
        timeout: float = EXPORT_TIMEOUT_SECONDS,
        service_name: str = "aem",
        resource: Mapping[str, str] | None = None,
        name: str = "otlp",
        signals: Literal["spans", "logs", "both"] = "both",
    ) -> None:
        self.name = name
        # A signal not sent counts as delivered: the outbox must not hold it forever.
        self._send_spans, self._send_logs = signals != "logs", signals != "spans"
        self._resource = Resource.create({**dict(resource or {}), "service.name": service_name})
        headers = dict(headers or {})
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

            target = endpoint.split("://", 1)[-1]
            insecure = not endpoint.startswith("https://")
            self._spans: Any = OTLPSpanExporter(
                endpoint=target, insecure=insecure, headers=headers, timeout=timeout
            )
            self._logs: Any = OTLPLogExporter(
                endpoint=target, insecure=insecure, headers=headers, timeout=timeout
            )
        else:
            # Not the SDK's HTTP exporters: they read the answer whole with per-read
            # timeouts (an endless 200 body took the server to 3 GB; a dripping one held
            # delivery and shutdown). The same protobuf goes through aem.sinks.http.
            from aem.sinks.otlp_http import OtlpHttpExporter

            http = BoundedHttp(endpoint, deadline_seconds=timeout, headers=headers, what="otlp")
            self._spans = self._logs = OtlpHttpExporter(http)

    def _span(self, item: OutboxItem, now_ns: int) -> ReadableSpan:
        p = item.payload
        evaluated = _context(p["trace_id"], p["span_id"])
        own = SpanContext(
            trace_id=_trace_id_from_key(item.key),
            span_id=_span_id_from_key(item.key),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )
        return ReadableSpan(
            name=f"evaluate {p.get('turn_name') or p['turn_id']}",
            context=own,
            parent=None,  # a trace of its own: the agent's trace keeps its shape and duration
            resource=self._resource,
            attributes=span_attributes(p, item.key),
            links=[Link(evaluated, {"aem.link": "evaluated_span"})],
            kind=SpanKind.INTERNAL,
            # A verdict is data, not a failure of the evaluation: a root-cause turn's span
            # left ERROR would turn the agent project's error chart red for a run that did
            # not error. The label is in aem.label and the gen_ai.evaluation.result events.
            status=Status(StatusCode.UNSET),
            start_time=int(p.get("completed_at", now_ns / 1e9) * 1e9),
            end_time=now_ns,
            instrumentation_scope=SCOPE,
        )

    def _event(self, item: OutboxItem, now_ns: int) -> ReadableLogRecord:
        p = item.payload
        ctx = trace_api.set_span_in_context(
            trace_api.NonRecordingSpan(_context(p["trace_id"], p["span_id"]))
        )
        record = LogRecord(
            timestamp=now_ns,
            observed_timestamp=now_ns,
            context=ctx,
            event_name=EVENT_NAME,
            attributes=event_attributes(p, item.key),
        )
        return ReadableLogRecord(record, resource=self._resource, instrumentation_scope=SCOPE)

    def deliver(self, items: Sequence[OutboxItem]) -> list[str]:
        now_ns = time.time_ns()
        accepted: list[str] = []
        turns = [i for i in items if i.kind == "turn"]
        metrics = [i for i in items if i.kind == "metric"]
        if turns and not self._send_spans:
            accepted += [i.key for i in turns]
        elif turns:
            spans = [self._span(i, now_ns) for i in turns]
            if self._spans.export(spans) is SpanExportResult.SUCCESS:
                accepted += [i.key for i in turns]
        if metrics and not self._send_logs:
            accepted += [i.key for i in metrics]
        elif metrics:
            events = [self._event(i, now_ns) for i in metrics]
            if self._logs.export(events) is LogRecordExportResult.SUCCESS:
                accepted += [i.key for i in metrics]
        return accepted

    def close(self) -> None:
        self._spans.shutdown()
        if self._logs is not self._spans:
            self._logs.shutdown()
