"""Decode OTLP trace data — protobuf messages or OTLP/JSON documents — into SpanRecords.

Two traps drive this module (see docs/architecture.md):

* OTLP/JSON ids are **hex**, not the base64 that proto3-JSON uses for ``bytes``;
  ``google.protobuf.json_format`` would silently read a 32-hex trace id as 24 bytes.
  So JSON is walked by hand and ids are validated here, once.
* ``AnyValue`` may be structured (``kvlistValue``, ``arrayValue``) or a JSON string;
  both decode to plain Python values.

A bad span never spoils its neighbours: it becomes an :class:`InputIssue` naming the
record, and decoding carries on with the rest of the request.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from aem.model import InputIssue, SourceRef, SpanEvent, SpanRecord

_HEX = frozenset("0123456789abcdefABCDEF")

# Attribute values above this size are truncated (and reported): a 5 MB prompt must not
# cost 5 MB per copy through the whole pipeline.
DEFAULT_MAX_ATTRIBUTE_BYTES = 1_000_000


class DecodeError(ValueError):
    """A record that cannot be decoded at all (not JSON, not OTLP)."""


def _hex_id(value: Any, length: int, what: str) -> str:
    if not isinstance(value, str):
        raise DecodeError(f"{what} must be a hex string, got {type(value).__name__}")
    if len(value) != length or not _HEX.issuperset(value):
        raise DecodeError(f"{what} {value!r} is not {length} hex characters")
    if value == "0" * length:
        raise DecodeError(f"{what} is all zeros (invalid per OTLP)")
    return value.lower()


def _int(value: Any) -> int:
    if value is None or value == "":
        return 0
    return int(value)


def json_any_value(value: Any) -> Any:
    """Decode an OTLP/JSON ``AnyValue`` object into a plain Python value."""
    if not isinstance(value, Mapping) or not value:
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [json_any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return {
            kv.get("key", ""): json_any_value(kv.get("value"))
            for kv in (value["kvlistValue"] or {}).get("values") or []
        }
    if "bytesValue" in value:
        return base64.b64decode(value["bytesValue"])
    return None


def json_attributes(items: Iterable[Mapping[str, Any]] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items or ():
        out[kv["key"]] = json_any_value(kv.get("value"))
    return out


def proto_any_value(value: AnyValue) -> Any:
    """Decode a protobuf ``AnyValue`` into a plain Python value."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [proto_any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: proto_any_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which)


def proto_attributes(items: Iterable[KeyValue]) -> dict[str, Any]:
    return {kv.key: proto_any_value(kv.value) for kv in items}


def _truncate_attributes(
    attributes: dict[str, Any], limit: int, span: SpanRecord, issues: list[InputIssue]
) -> None:
    for key, value in attributes.items():
        if isinstance(value, str | bytes) and len(value) > limit:
            attributes[key] = value[:limit]
            issues.append(
                InputIssue(
                    kind="attribute_truncated",
                    message=(
                        f"attribute {key!r} of span {span.span_id} is {len(value):,} bytes; "
                        f"kept the first {limit:,}"
                    ),
                    source=span.origin.source if span.origin else None,
                    line=span.origin.line if span.origin else None,
                    span_id=span.span_id,
                    trace_id=span.trace_id,
                )
            )


def _issue(kind: str, message: str, origin: SourceRef | None, **extra: Any) -> InputIssue:
    return InputIssue(
        kind=kind,
        message=message,
        source=origin.source if origin else None,
        line=origin.line if origin else None,
        **extra,
    )


def decode_json_traces(
    document: Mapping[str, Any],
    origin: SourceRef | None = None,
    *,
    max_attribute_bytes: int = DEFAULT_MAX_ATTRIBUTE_BYTES,
) -> tuple[list[SpanRecord], list[InputIssue]]:
    """Decode one OTLP/JSON ``TracesData`` / ``ExportTraceServiceRequest`` document.

    >>> doc = {"resourceSpans": [{"scopeSpans": [{"spans": [{
    ...     "traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "EEE19B7EC3C1B174",
    ...     "name": "chat", "attributes": [{"key": "n", "value": {"intValue": "3"}}]}]}]}]}
    >>> spans, issues = decode_json_traces(doc)
    >>> spans[0].trace_id, spans[0].attributes["n"], issues
    ('5b8efff798038103d269b633813fc60c', 3, [])
    """
    if not isinstance(document, Mapping) or not isinstance(document.get("resourceSpans", []), list):
        raise DecodeError("not an OTLP trace document (no resourceSpans list)")
    spans: list[SpanRecord] = []
    issues: list[InputIssue] = []
    for resource_spans in document.get("resourceSpans") or []:
        resource = json_attributes((resource_spans.get("resource") or {}).get("attributes"))
        for scope_spans in resource_spans.get("scopeSpans") or []:
            scope = (scope_spans.get("scope") or {}).get("name", "")
            for raw in scope_spans.get("spans") or []:
                try:
                    span = _json_span(raw, resource, scope, origin)
                except (DecodeError, KeyError, TypeError, ValueError) as exc:
                    issues.append(
                        _issue(
                            "bad_span",
                            f"span skipped: {exc}",
                            origin,
                            span_id=str(raw.get("spanId")) if isinstance(raw, Mapping) else None,
                            spans_skipped=1,
                        )
                    )
                    continue
                _truncate_attributes(span.attributes, max_attribute_bytes, span, issues)
                spans.append(span)
    return spans, issues


def _json_span(
    raw: Mapping[str, Any], resource: dict[str, Any], scope: str, origin: SourceRef | None
) -> SpanRecord:
    parent = raw.get("parentSpanId") or None
    status = raw.get("status") or {}
    return SpanRecord(
        trace_id=_hex_id(raw.get("traceId"), 32, "traceId"),
        span_id=_hex_id(raw.get("spanId"), 16, "spanId"),
        parent_span_id=_hex_id(parent, 16, "parentSpanId") if parent else None,
        name=str(raw.get("name", "")),
        kind=_int(raw.get("kind")),
        start_unix_nano=_int(raw.get("startTimeUnixNano")),
        end_unix_nano=_int(raw.get("endTimeUnixNano")),
        status_code=_int(status.get("code")),
        status_message=str(status.get("message") or ""),
        attributes=json_attributes(raw.get("attributes")),
        events=[
            SpanEvent(
                name=str(e.get("name", "")),
                time_unix_nano=_int(e.get("timeUnixNano")),
                attributes=json_attributes(e.get("attributes")),
            )
            for e in raw.get("events") or []
        ],
        resource=resource,
        links=[
            (str(link.get("traceId", "")).lower(), str(link.get("spanId", "")).lower())
            for link in raw.get("links") or []
        ],
        scope=scope,
        origin=origin,
    )


def decode_proto_request(
    request: ExportTraceServiceRequest,
    origin: SourceRef | None = None,
    *,
    max_attribute_bytes: int = DEFAULT_MAX_ATTRIBUTE_BYTES,
) -> tuple[list[SpanRecord], list[InputIssue]]:
    """Decode a protobuf ``ExportTraceServiceRequest`` (or ``TracesData``)."""
    spans: list[SpanRecord] = []
    issues: list[InputIssue] = []
    for resource_spans in request.resource_spans:
        resource = proto_attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope.name
            for raw in scope_spans.spans:
                try:
                    span = SpanRecord(
                        trace_id=_hex_id(raw.trace_id.hex(), 32, "trace_id"),
                        span_id=_hex_id(raw.span_id.hex(), 16, "span_id"),
                        parent_span_id=(
                            _hex_id(raw.parent_span_id.hex(), 16, "parent_span_id")
                            if raw.parent_span_id
                            else None
                        ),
                        name=raw.name,
                        kind=int(raw.kind),
                        start_unix_nano=raw.start_time_unix_nano,
                        end_unix_nano=raw.end_time_unix_nano,
                        status_code=int(raw.status.code),
                        status_message=raw.status.message,
                        attributes=proto_attributes(raw.attributes),
                        events=[
                            SpanEvent(e.name, e.time_unix_nano, proto_attributes(e.attributes))
                            for e in raw.events
                        ],
                        resource=resource,
                        links=[(lk.trace_id.hex(), lk.span_id.hex()) for lk in raw.links],
                        scope=scope,
                        origin=origin,
                    )
                except DecodeError as exc:
                    issues.append(
                        _issue(
                            "bad_span",
                            f"span skipped: {exc}",
                            origin,
                            span_id=raw.span_id.hex(),
                            spans_skipped=1,
                        )
                    )
                    continue
                _truncate_attributes(span.attributes, max_attribute_bytes, span, issues)
                spans.append(span)
    return spans, issues
