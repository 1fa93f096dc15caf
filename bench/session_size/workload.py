"""A long agent session of any size, shaped like real instrumented traffic.

Why this shape: session building and the turn graph must be linear in spans, and a
workload that only repeats one tiny pattern would hide the pairwise scans. Each episode
is one trace of a support conversation (``gen_ai.conversation.id`` shared): the user
asks, the agent searches (one or two parallel tool calls with ids), looks an order up
with an id it read in a search result (argument reuse), and answers with values from the
results (support checks). Model inputs carry the conversation as the OTel GenAI
instrumentations record it (``gen_ai.input.messages``): the system prompt and the last
``window`` messages, tool calls and tool results included — what an agent whose
framework trims history to the model's context window sends. ``window=None`` carries
the whole history, whose bytes grow quadratically with the session by themselves.
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from aem.foundation.model import SpanRecord

SYSTEM = "You are a support agent for an online shop. Use the tools; never guess values."
DEFAULT_WINDOW = 24  # messages of history in each model input
_START = 1_776_852_000_000_000_000
_STEP = 1_000_000  # 1 ms between consecutive span starts


@dataclass
class _Episode:
    """The growing conversation and the clocks/ids of one generated session."""

    session_id: str
    window: int | None
    rng: random.Random
    history: list[dict[str, Any]] = field(default_factory=list)
    spans: list[SpanRecord] = field(default_factory=list)
    clock: int = _START
    counter: int = 0

    def next_id(self, width: int) -> str:
        self.counter += 1
        return f"{self.counter:0{width}x}"

    def tick(self) -> int:
        self.clock += _STEP
        return self.clock

    def input_messages(self) -> str:
        kept = self.history if self.window is None else self.history[-self.window :]
        system = {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]}
        return json.dumps([system, *kept], separators=(",", ":"))


def _trace_id(session_id: str, number: int) -> str:
    """Trace ids distinct between generated sessions (so two never share a trace)."""
    return f"{zlib.crc32(session_id.encode()):08x}{number:024x}"


def _chat(ep: _Episode, trace_id: str, parent: str, output: list[dict[str, Any]]) -> SpanRecord:
    start = ep.tick()
    span = SpanRecord(
        trace_id=trace_id,
        span_id=ep.next_id(16),
        parent_span_id=parent,
        name="chat gpt-4o",
        kind=3,
        start_unix_nano=start,
        end_unix_nano=start + _STEP // 2,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.conversation.id": ep.session_id,
            "gen_ai.input.messages": ep.input_messages(),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": output}], separators=(",", ":")
            ),
        },
    )
    ep.spans.append(span)
    ep.history.append({"role": "assistant", "parts": output})
    return span


def _tool(ep: _Episode, trace_id: str, parent: str, call: dict[str, Any], result: Any) -> None:
    start = ep.tick()
    raw_result = json.dumps(result, separators=(",", ":"))
    ep.spans.append(
        SpanRecord(
            trace_id=trace_id,
            span_id=ep.next_id(16),
            parent_span_id=parent,
            name=f"execute_tool {call['name']}",
            kind=1,
            start_unix_nano=start,
            end_unix_nano=start + _STEP // 2,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call["name"],
                "gen_ai.tool.call.id": call["id"],
                "gen_ai.tool.call.arguments": json.dumps(call["arguments"]),
                "gen_ai.tool.call.result": raw_result,
                "gen_ai.conversation.id": ep.session_id,
            },
        )
    )
    ep.history.append(
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": call["id"], "response": result}],
        }
    )


def _episode(ep: _Episode, number: int, top: SpanRecord | None = None) -> None:
    """One user request: search, look up (reusing an id from a result), answer."""
    trace_id = top.trace_id if top is not None else _trace_id(ep.session_id, number + 1)
    root = SpanRecord(
        trace_id=trace_id,
        span_id=ep.next_id(16),
        parent_span_id=top.span_id if top is not None else None,
        name="invoke_agent support",
        start_unix_nano=ep.tick(),
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "support",
            "gen_ai.conversation.id": ep.session_id,
        },
    )
    ep.spans.append(root)
    customer = f"C{ep.rng.randrange(10_000, 99_999)}"
    question = f"Where is my latest order? My customer id is {customer}. (request {number})"
    ep.history.append({"role": "user", "parts": [{"type": "text", "content": question}]})
    order = f"ORD-{number:07d}"
    total = round(ep.rng.uniform(120, 990), 2)
    searches = [
        {
            "type": "tool_call",
            "id": f"call_{number}_s",
            "name": "search_orders",
            "arguments": {"customer_id": customer},
        }
    ]
    if number % 3 == 0:  # parallel calls from one output
        searches.append(
            {
                "type": "tool_call",
                "id": f"call_{number}_p",
                "name": "get_profile",
                "arguments": {"customer_id": customer},
            }
        )
    _chat(ep, trace_id, root.span_id, searches)
    _tool(ep, trace_id, root.span_id, searches[0], {"orders": [order], "count": 1})
    if len(searches) > 1:
        _tool(ep, trace_id, root.span_id, searches[1], {"tier": "gold", "since": 2019})
    lookup = {
        "type": "tool_call",
        "id": f"call_{number}_o",
        "name": "get_order",
        "arguments": {"order_id": order},
    }
    reasoning = {"type": "text", "content": f"Found {order}; looking it up."}
    _chat(ep, trace_id, root.span_id, [reasoning, lookup])
    _tool(
        ep,
        trace_id,
        root.span_id,
        lookup,
        {"order_id": order, "status": "shipped", "total": total, "carrier": "UPS"},
    )
    answer = f"Your order {order} has shipped with UPS; the total was ${total:.2f}."
    _chat(ep, trace_id, root.span_id, [{"type": "text", "content": answer}])
    root.end_unix_nano = ep.tick()


def iter_spans(
    spans: int,
    *,
    window: int | None = DEFAULT_WINDOW,
    seed: int = 14,
    session_id: str = "long-session",
    one_trace: bool = False,
) -> Iterator[SpanRecord]:
    """At least ``spans`` spans of one session (whole episodes, about 7.3 spans each),
    yielded episode by episode so that a million spans need not be held at once.

    ``one_trace`` puts every episode in one trace under one root span, yielded last (as
    an exporter sends a root when it ends): a single huge trace.
    """
    ep = _Episode(session_id=session_id, window=window, rng=random.Random(seed))
    top = (
        SpanRecord(
            _trace_id(session_id, 0),
            ep.next_id(16),
            None,
            "invoke_agent concierge",
            start_unix_nano=_START,
        )
        if one_trace
        else None
    )
    emitted = 0
    number = 0
    while emitted < spans:
        _episode(ep, number, top)
        number += 1
        emitted += len(ep.spans)
        yield from ep.spans
        ep.spans.clear()
        if window is not None:
            del ep.history[: -window - 1]  # only the window is ever sent again
    if top is not None:
        top.attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "concierge",
            "gen_ai.conversation.id": session_id,
        }
        top.end_unix_nano = ep.tick()
        yield top


def generate(spans: int, **kw: Any) -> list[SpanRecord]:
    """The spans of :func:`iter_spans` as a list."""
    return list(iter_spans(spans, **kw))


def otlp_line(spans: list[SpanRecord]) -> str:
    """One OTLP/JSON request line holding ``spans`` (string attributes, as generated)."""

    def span_doc(span: SpanRecord) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "traceId": span.trace_id,
            "spanId": span.span_id,
            "name": span.name,
            "kind": span.kind or 1,
            "startTimeUnixNano": str(span.start_unix_nano),
            "endTimeUnixNano": str(span.end_unix_nano),
            "attributes": [
                {"key": k, "value": {"stringValue": str(v)}} for k, v in span.attributes.items()
            ],
        }
        if span.parent_span_id:
            doc["parentSpanId"] = span.parent_span_id
        return doc

    scope = {"scope": {"name": "bench.session_size"}, "spans": [span_doc(s) for s in spans]}
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [scope]}]})
