"""Just enough OTLP JSON reading for the baselines: the spans of each session, in order.

Why not AEM's reader: a baseline must not depend on the code it is compared with, and
the development sets are one session per line with plain GenAI attributes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SESSION_KEY = "gen_ai.conversation.id"
STATUS_ERROR = 2


@dataclass(frozen=True)
class SpanView:
    """The few facts of a span a baseline reads."""

    span_id: str
    name: str
    start: int
    attributes: dict[str, Any]
    error: str | None = None  # the status message of a span whose status is ERROR

    @property
    def operation(self) -> str:
        return str(self.attributes.get("gen_ai.operation.name") or self.name.split(" ")[0])


def attribute_value(value: dict[str, Any]) -> Any:
    """An OTLP ``AnyValue`` as a plain value (strings, numbers, booleans; else as given)."""
    for key in ("stringValue", "intValue", "doubleValue", "boolValue"):
        if key in value:
            return value[key]
    return value


def spans_of(record: dict[str, Any]) -> list[SpanView]:
    """Every span of one OTLP JSON export, ordered by start time."""
    views = []
    for resource in record.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                status = span.get("status") or {}
                views.append(
                    SpanView(
                        span_id=span["spanId"],
                        name=span.get("name", ""),
                        start=int(span.get("startTimeUnixNano") or 0),
                        attributes={
                            a["key"]: attribute_value(a["value"])
                            for a in span.get("attributes", [])
                        },
                        error=status.get("message", "")
                        if status.get("code") == STATUS_ERROR
                        else None,
                    )
                )
    return sorted(views, key=lambda v: v.start)


def sessions(path: Path) -> Iterator[tuple[str, list[SpanView]]]:
    """(session id, spans) per line of a one-session-per-line OTLP JSON file."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            spans = spans_of(json.loads(line))
            key = next(
                (s.attributes[SESSION_KEY] for s in spans if SESSION_KEY in s.attributes), ""
            )
            yield str(key), spans
