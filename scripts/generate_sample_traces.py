"""Generate ``sample_traces/``: agent sessions recorded with the real OpenTelemetry SDK.

Why a script and not hand-typed JSON: the samples are what ``aem audit sample_traces/``
runs on out of the box and what the collectors' tests lean on, so they must look like
what an instrumented agent really exports. Spans are created with the SDK's
``TracerProvider`` and encoded by the OTLP exporter's own protobuf encoder; only the last
step (protobuf -> OTLP/JSON with **hex** ids) is done here, because proto3-JSON would
write ids as base64.

Output format (the Collector ``file`` exporter's ``format: json``): JSON Lines, one
``ExportTraceServiceRequest``-shaped object per line, one span per line (a simple span
processor exports each span as it ends, so children come before their parents),
lowerCamelCase keys, int64 as decimal strings, enums as integers.

Determinism: every timestamp is explicit, trace and span ids come from a per-session
seeded :class:`SeededIdGenerator`, the resource is fixed (no random
``service.instance.id``, no ``OTEL_RESOURCE_ATTRIBUTES``), and sampler and span limits are
passed explicitly so no environment variable can change the output. Re-running the script
reproduces the files byte for byte; ``tests/api/test_sample_traces_generator.py`` checks that.

Run: ``python scripts/generate_sample_traces.py [--out sample_traces]``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sqlite3
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import context as context_api
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import SpanKind, Status, StatusCode

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "sample_traces"

Json = Any
AttrValue = str | bool | int | float | Sequence[str]

# --------------------------------------------------------------------------------------
# SDK plumbing: ids, export to OTLP/JSON lines, a clock
# --------------------------------------------------------------------------------------


class SeededIdGenerator(IdGenerator):
    """Trace and span ids derived from a seed (the session id) and a counter.

    A random generator would change every id on every run; hashing ``seed/kind/n`` keeps
    the files stable while the ids still look like real, well-spread 128/64-bit ids.
    """

    def __init__(self, seed: str) -> None:
        self._seed = seed
        self._counter = 0

    def _next(self, kind: str, nbytes: int) -> int:
        while True:
            self._counter += 1
            digest = hashlib.sha256(f"{self._seed}/{kind}/{self._counter}".encode()).digest()
            value = int.from_bytes(digest[:nbytes], "big")
            if value:  # all-zero ids are invalid in OTLP
                return value

    def generate_span_id(self) -> int:
        return self._next("span", 8)

    def generate_trace_id(self) -> int:
        return self._next("trace", 16)


def _b64_to_hex(value: str) -> str:
    return base64.b64decode(value).hex()


def _hex_ids(request: dict[str, Json]) -> dict[str, Json]:
    """Rewrite the base64 ids that ``MessageToDict`` produces into OTLP/JSON hex ids."""
    for resource_spans in request.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _b64_to_hex(span[key])
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = _b64_to_hex(link[key])
    return request


def spans_to_otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """Encode SDK spans as one OTLP/JSON line (Collector file-exporter format).

    The protobuf comes from the OTLP exporter's encoder, so attribute typing, flags and
    status are exactly what ``OTLPSpanExporter`` would send; ``use_integers_for_enums``
    keeps span kind and status code numeric as OTLP/JSON requires.
    """
    request = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    return json.dumps(_hex_ids(request), separators=(",", ":"), ensure_ascii=False)


class OtlpJsonLinesExporter(SpanExporter):
    """A ``SpanExporter`` that keeps one OTLP/JSON line per export call in memory."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.lines.append(spans_to_otlp_json(spans))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def epoch_ns(year: int, month: int, day: int, hour: int, minute: int) -> int:
    """Nanoseconds since the epoch for a UTC wall-clock time (exact integer arithmetic)."""
    return int(datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp()) * 1_000_000_000


@dataclass
class Clock:
    """A fake wall clock: spans get explicit, increasing, reproducible timestamps."""

    now: int

    def advance(self, ms: int) -> int:
        self.now += ms * 1_000_000
        return self.now


@dataclass(frozen=True)
class Scope:
    """The instrumentation scope a span claims to come from (as real instrumentations do)."""

    name: str
    version: str | None = None


@dataclass
class Session:
    """One agent session being recorded: a tracer provider, a clock and the output lines."""

    seed: str
    resource: Mapping[str, AttrValue]
    start: int
    clock: Clock = field(init=False)
    exporter: OtlpJsonLinesExporter = field(init=False)
    provider: TracerProvider = field(init=False)

    def __post_init__(self) -> None:
        self.clock = Clock(self.start)
        self.exporter = OtlpJsonLinesExporter()
        self.provider = TracerProvider(
            sampler=ALWAYS_ON,
            resource=Resource(dict(self.resource)),
            shutdown_on_exit=False,
            id_generator=SeededIdGenerator(self.seed),
            # Explicit limits: OTEL_ATTRIBUTE_* variables must not truncate the samples.
            span_limits=SpanLimits(
                max_attributes=1000,
                max_events=128,
                max_links=128,
                max_span_attributes=1000,
                max_event_attributes=128,
                max_link_attributes=128,
                max_attribute_length=SpanLimits.UNSET,
                max_span_attribute_length=SpanLimits.UNSET,
            ),
        )
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    @contextmanager
    def span(
        self,
        scope: Scope,
        name: str,
        attributes: Mapping[str, AttrValue],
        *,
        kind: SpanKind = SpanKind.INTERNAL,
        ms: int = 5,
        root: bool = False,
    ) -> Iterator[trace.Span]:
        """Open a span as the current span; it ends ``ms`` after its last child ended.

        ``root=True`` starts a new trace even if a span is current.
        """
        tracer = self.provider.get_tracer(scope.name, scope.version)
        start = self.clock.advance(1)
        with tracer.start_as_current_span(
            name,
            context=context_api.Context() if root else None,
            kind=kind,
            attributes=dict(attributes),
            start_time=start,
            end_on_exit=False,
            record_exception=False,
            set_status_on_exception=False,
        ) as current:
            yield current
            current.end(end_time=self.clock.advance(ms))

    def parallel(self, branches: Sequence[Callable[[], None]]) -> None:
        """Run sibling branches that overlap in time (parallel tool calls start together)."""
        start = self.clock.now
        ends: list[int] = []
        for branch in branches:
            self.clock.now = start
            branch()
            ends.append(self.clock.now)
        self.clock.now = max(ends, default=start)

    def lines(self) -> list[str]:
        self.provider.shutdown()
        return self.exporter.lines


def fixed_resource(service_name: str) -> dict[str, AttrValue]:
    """The resource of every sample: fixed, so the files do not change between runs.

    ``telemetry.sdk.version`` is left out on purpose: an SDK upgrade must not force the
    samples to be regenerated. ``aem.sample.generator`` says where the data came from.
    """
    return {
        "telemetry.sdk.language": "python",
        "telemetry.sdk.name": "opentelemetry",
        "service.name": service_name,
        "aem.sample.generator": "scripts/generate_sample_traces.py",
    }


# --------------------------------------------------------------------------------------
# Message helpers per dialect
# --------------------------------------------------------------------------------------


def compact(value: Json) -> str:
    """JSON as the OTel GenAI util (opentelemetry-util-genai) writes message attributes."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def spaced(value: Json) -> str:
    """JSON with ``json.dumps`` defaults, as OpenInference, Traceloop and app code write it."""
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a model output, with what the tool returned (or how it failed).

    ``result`` is the text the agent fed back to the model (tool messages are strings).
    """

    id: str
    name: str
    arguments: dict[str, Json]
    result: str
    error: BaseException | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A tool's declared interface (argument_validity checks calls against ``parameters``)."""

    name: str
    description: str
    parameters: dict[str, Json]

    def definition(self) -> dict[str, Json]:
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }


def schema(properties: dict[str, Json], required: Sequence[str] | None = None) -> dict[str, Json]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else list(required),
    }


def text_part(content: str) -> dict[str, Json]:
    return {"type": "text", "content": content}


def call_part(call: ToolCall) -> dict[str, Json]:
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}


def response_part(call: ToolCall) -> dict[str, Json]:
    return {"type": "tool_call_response", "id": call.id, "response": call.result}


def message(role: str, *parts: dict[str, Json]) -> dict[str, Json]:
    return {"role": role, "parts": list(parts)}


def tool_messages(calls: Sequence[ToolCall]) -> list[dict[str, Json]]:
    """The tool results fed back to the model: one ``tool`` message per call."""
    return [message("tool", response_part(call)) for call in calls]


# --------------------------------------------------------------------------------------
# OTel GenAI dialect
# --------------------------------------------------------------------------------------

GENAI_CHAT_SCOPE = Scope("opentelemetry.instrumentation.openai_v2", "2.4b0")
GENAI_APP_SCOPE = Scope("app")


@dataclass
class GenAIAgent:
    """Records an agent in the OTel GenAI dialect (like openai-v2 + hand-made agent spans)."""

    session: Session
    conversation_id: str
    model: str
    tools: Sequence[ToolSpec]
    responses: int = 0

    @contextmanager
    def invoke_agent(self, agent: str, *, root: bool = False) -> Iterator[trace.Span]:
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": "openai",
            "gen_ai.agent.name": agent,
            "gen_ai.request.model": self.model,
            "gen_ai.conversation.id": self.conversation_id,
        }
        with self.session.span(
            GENAI_APP_SCOPE, f"invoke_agent {agent}", attributes, root=root, ms=3
        ) as span:
            yield span

    def chat(
        self,
        inputs: Sequence[dict[str, Json]],
        *,
        text: str | None = None,
        calls: Sequence[ToolCall] = (),
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> dict[str, Json]:
        """Record one ``chat {model}`` span; return the assistant message for the history."""
        self.responses += 1
        finish_reason = "tool_calls" if calls else "stop"
        parts = ([text_part(text)] if text else []) + [call_part(call) for call in calls]
        output = {"role": "assistant", "parts": parts, "finish_reason": finish_reason}
        attributes: dict[str, AttrValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": self.model,
            "gen_ai.conversation.id": self.conversation_id,
            "gen_ai.tool.definitions": compact([tool.definition() for tool in self.tools]),
            "gen_ai.input.messages": compact(list(inputs)),
        }
        with self.session.span(
            GENAI_CHAT_SCOPE, f"chat {self.model}", attributes, kind=SpanKind.CLIENT, ms=900
        ) as span:
            span.set_attribute("gen_ai.response.model", f"{self.model}-2024-08-06")
            span.set_attribute(
                "gen_ai.response.id", f"chatcmpl-{self.conversation_id}-{self.responses}"
            )
            span.set_attribute("gen_ai.response.finish_reasons", [finish_reason])
            span.set_attribute("gen_ai.usage.input_tokens", input_tokens or 40 * len(inputs))
            span.set_attribute("gen_ai.usage.output_tokens", output_tokens or 12 + 20 * len(parts))
            span.set_attribute("gen_ai.output.messages", compact([output]))
        return message("assistant", *parts)

    def answer_task(
        self,
        name: str,
        prompt: str,
        task: str,
        call: ToolCall,
        answer: str,
        during_call: Callable[[], object] | None = None,
    ) -> None:
        """A sub-agent's whole run: its context is only its prompt and the delegated task;
        it makes one call (``during_call`` runs while the call is open) and answers."""
        history: list[dict[str, Json]] = [
            message("system", text_part(prompt)),
            message("user", text_part(task)),
        ]
        with self.invoke_agent(name):
            history.append(self.chat(history, calls=[call]))
            with self.execute_tool(call):
                if during_call is not None:
                    during_call()
            history += tool_messages([call])
            self.chat(history, text=answer)

    @contextmanager
    def execute_tool(self, call: ToolCall) -> Iterator[trace.Span]:
        """Record ``execute_tool {name}``; an error becomes status, ``error.type`` and an event."""
        spec = next((tool for tool in self.tools if tool.name == call.name), None)
        attributes: dict[str, AttrValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.call.arguments": spaced(call.arguments),
        }
        if spec is not None:
            attributes["gen_ai.tool.description"] = spec.description
        with self.session.span(
            GENAI_APP_SCOPE, f"execute_tool {call.name}", attributes, ms=40
        ) as span:
            yield span
            record_tool_outcome(span, call, self.session.clock, "gen_ai.tool.call.result")


def record_tool_outcome(span: trace.Span, call: ToolCall, clock: Clock, result_key: str) -> None:
    """Set the tool result, or mark the span failed the way instrumentations do.

    The exception is never raised: a raised one would carry a traceback with this
    machine's file paths and the files would differ between checkouts.
    """
    if call.error is None:
        span.set_attribute(result_key, call.result)
        return
    # The exception class name, qualified unless builtin, as record_exception writes it.
    cls = type(call.error)
    error_type = (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )
    span.set_attribute("error.type", error_type)
    span.record_exception(call.error, timestamp=clock.advance(1))
    span.set_status(Status(StatusCode.ERROR, f"{error_type}: {call.error}"))


# --------------------------------------------------------------------------------------
# Session 1: the March refunds (wrong year picked in the reasoning turn)
# --------------------------------------------------------------------------------------

PERIOD = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$"}
OBJECTS = {"type": "array", "items": {"type": "object"}}
REFUNDS_TOOLS = (
    ToolSpec(
        "get_orders",
        "List a customer's orders placed between two dates (inclusive).",
        schema(
            {
                "customer_id": {"type": "string", "pattern": "^C-[0-9]+$"},
                "start_date": {"type": "string", "format": "date"},
                "end_date": {"type": "string", "format": "date"},
            }
        ),
    ),
    ToolSpec(
        "filter_refunds",
        "Keep the refunds among the given orders for a period (YYYY-MM).",
        schema({"orders": OBJECTS, "period": PERIOD}),
    ),
    ToolSpec(
        "sum_refunds",
        "Total the refunds of a period; returns total, currency and period.",
        schema({"refunds": OBJECTS, "period": PERIOD}),
    ),
)

REFUNDS_QUESTION = "Calculate the refunds on customer C-1042's orders for March."


def march_refunds() -> list[str]:
    """The March refunds (docs/semantics.md): "today" is 2026-04-02, the agent picks March 2025.

    The 2025 date in the earlier exchange is what misleads it. Turn 1 (the reasoning
    text of chat 1) is the root cause on truthfulness; get_orders, filter_refunds,
    sum_refunds and the final answer only inherit the wrong period.
    """
    session = Session("refunds-march", fixed_resource("refunds-agent"), epoch_ns(2026, 4, 2, 9, 15))
    agent = GenAIAgent(session, "refunds-march", "gpt-4o", REFUNDS_TOOLS)
    get_orders = ToolCall(
        "call_orders",
        "get_orders",
        {"customer_id": "C-1042", "start_date": "2025-03-01", "end_date": "2025-03-31"},
        "[]",
    )
    filter_refunds = ToolCall(
        "call_filter", "filter_refunds", {"orders": [], "period": "2025-03"}, "[]"
    )
    sum_refunds = ToolCall(
        "call_sum",
        "sum_refunds",
        {"refunds": [], "period": "2025-03"},
        spaced({"total": 0, "currency": "EUR", "period": "2025-03"}),
    )
    history: list[dict[str, Json]] = [
        message(
            "system",
            text_part(
                "You are the refunds assistant of Acme Shop. Today is 2026-04-02. "
                "Amounts are in EUR. Use the tools to look up orders and refunds."
            ),
        ),
        message("user", text_part("Customer C-1042 asks for the invoice of order O-5531.")),
        message(
            "assistant",
            text_part(
                "I sent the invoice for order O-5531 (placed on 2025-03-14) to customer C-1042."
            ),
        ),
        message("user", text_part(REFUNDS_QUESTION)),
    ]
    with agent.invoke_agent("refunds_agent", root=True):
        history.append(
            agent.chat(
                history,
                text=(
                    "The user asks for refunds in March 2025 for customer C-1042; "
                    "I will fetch the orders for 2025-03-01 to 2025-03-31."
                ),
                calls=[get_orders],
            )
        )
        with agent.execute_tool(get_orders):
            pass
        history += tool_messages([get_orders])
        history.append(agent.chat(history, calls=[filter_refunds]))
        with agent.execute_tool(filter_refunds):
            pass
        history += tool_messages([filter_refunds])
        history.append(agent.chat(history, calls=[sum_refunds]))
        with agent.execute_tool(sum_refunds):
            pass
        history += tool_messages([sum_refunds])
        agent.chat(
            history,
            text="There were no refunds on customer C-1042's orders in March 2025 (total 0 EUR).",
        )
    return session.lines()


# --------------------------------------------------------------------------------------
# Session 2: three parallel tool calls from one model output, one of them times out
# --------------------------------------------------------------------------------------

TRIP_TOOLS = (
    ToolSpec("get_weather", "Weather forecast for a city.", schema({"city": {"type": "string"}})),
    ToolSpec(
        "get_hotels",
        "Available hotels in a city for a number of nights.",
        schema({"city": {"type": "string"}, "nights": {"type": "integer", "minimum": 1}}),
    ),
    ToolSpec(
        "get_flights",
        "Flights between two IATA airports on a date.",
        schema(
            {
                "origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "date": {"type": "string", "format": "date"},
            }
        ),
    ),
)

TRIP_QUESTION = (
    "I fly from Berlin to Lisbon on 2026-05-04 for 2 nights. "
    "What's the weather there, which hotels are free and which flights can I take?"
)


def parallel_tools() -> list[str]:
    """One chat emits three tool calls at once; their spans are overlapping siblings.

    ``get_hotels`` times out (status ERROR, ``error.type``, an ``exception`` event); the
    failure is fed back to the model as error text and the answer says hotels are unavailable.
    """
    session = Session("trip-planner-7", fixed_resource("trip-planner"), epoch_ns(2026, 4, 20, 8, 0))
    agent = GenAIAgent(session, "trip-planner-7", "gpt-4o", TRIP_TOOLS)
    weather = ToolCall(
        "call_weather",
        "get_weather",
        {"city": "Lisbon"},
        spaced({"city": "Lisbon", "forecast": "sunny", "temperature_c": 22}),
    )
    hotels_error = TimeoutError("hotel search for Lisbon timed out after 30 s")
    hotels = ToolCall(
        "call_hotels",
        "get_hotels",
        {"city": "Lisbon", "nights": 2},
        f"Error: TimeoutError: {hotels_error}",
        error=hotels_error,
    )
    flights = ToolCall(
        "call_flights",
        "get_flights",
        {"origin": "BER", "destination": "LIS", "date": "2026-05-04"},
        spaced(
            [
                {"flight": "TP 537", "departs": "09:40", "arrives": "12:05", "price_eur": 189},
                {"flight": "FR 1946", "departs": "17:15", "arrives": "19:40", "price_eur": 74},
            ]
        ),
    )
    calls = [weather, hotels, flights]
    history: list[dict[str, Json]] = [
        message("system", text_part("You are a travel planner. Use the tools; be concise.")),
        message("user", text_part(TRIP_QUESTION)),
    ]
    with agent.invoke_agent("trip_planner", root=True):
        history.append(agent.chat(history, calls=calls))

        def run(call: ToolCall) -> Callable[[], None]:
            def branch() -> None:
                with agent.execute_tool(call):
                    # a timeout takes longer than a successful lookup
                    session.clock.advance(30_000 if call.error else 150)

            return branch

        session.parallel([run(call) for call in calls])
        history += tool_messages(calls)
        agent.chat(
            history,
            text=(
                "Lisbon on 2026-05-04: sunny, 22C. Flights from BER to LIS: TP 537 at 09:40 "
                "(189 EUR) or FR 1946 at 17:15 (74 EUR). Hotels are unavailable right now: "
                "the hotel search timed out, please try again later."
            ),
        )
    return session.lines()


# --------------------------------------------------------------------------------------
# Session 3: a coordinator with two sub-agents in separate contexts
# --------------------------------------------------------------------------------------

COORDINATOR_TOOLS = (
    ToolSpec(
        "ask_researcher",
        "Delegate a literature question to the researcher agent.",
        schema({"task": {"type": "string"}}),
    ),
    ToolSpec(
        "ask_analyst",
        "Delegate a question about our data to the analyst agent (SQL).",
        schema({"task": {"type": "string"}}),
    ),
)
RESEARCHER_TOOLS = (
    ToolSpec(
        "search_papers",
        "Search a paper index; returns titles, years and venues.",
        schema({"query": {"type": "string"}}),
    ),
)
ANALYST_TOOLS = (
    ToolSpec(
        "run_query",
        "Run a read-only SQL query on the support database (table support_tickets).",
        schema({"sql": {"type": "string"}}),
    ),
)

RESEARCH_QUESTION = (
    "Which recent papers evaluate LLM agents step by step, and how many of our support "
    "tickets from Q1 2026 mention hallucinations?"
)


def multi_agent() -> list[str]:
    """Coordinator -> two parallel ``ask_*`` tools -> one sub-agent each, own context.

    The researcher branch is clean; the analyst's ``run_query`` fails (the table name is
    wrong), which is the only root cause; everything the analyst says afterwards, and
    what the coordinator builds on it, inherits it.
    """
    session = Session("research-31", fixed_resource("research-crew"), epoch_ns(2026, 4, 21, 14, 30))
    coordinator = GenAIAgent(session, "research-31", "gpt-4o", COORDINATOR_TOOLS)
    researcher = GenAIAgent(session, "research-31", "gpt-4o-mini", RESEARCHER_TOOLS)
    analyst = GenAIAgent(session, "research-31", "gpt-4o-mini", ANALYST_TOOLS)

    search = ToolCall(
        "call_search",
        "search_papers",
        {"query": "step-level evaluation of LLM agents"},
        spaced(
            [
                {"title": "AgentBoard: progress rate for multi-turn agents", "year": 2024},
                {"title": "Which Agent Causes Task Failures and When?", "year": 2025},
            ]
        ),
    )
    researcher_answer = (
        "Two relevant papers: 'AgentBoard' (2024) scores agents by progress rate per step, "
        "and 'Which Agent Causes Task Failures and When?' (2025) attributes failures to a "
        "specific agent and step."
    )
    query_error = sqlite3.OperationalError("no such table: tickets")
    query = ToolCall(
        "call_sql",
        "run_query",
        {
            "sql": "SELECT count(*) FROM tickets WHERE body LIKE '%hallucinat%' "
            "AND created_at >= '2026-01-01' AND created_at < '2026-04-01'"
        },
        f"Error: OperationalError: {query_error}",
        error=query_error,
    )
    analyst_answer = (
        "I could not count the tickets: the query failed with 'no such table: tickets'."
    )
    ask_researcher = ToolCall(
        "call_researcher",
        "ask_researcher",
        {"task": "Find recent papers that evaluate LLM agents step by step."},
        researcher_answer,
    )
    ask_analyst = ToolCall(
        "call_analyst",
        "ask_analyst",
        {"task": "Count the support tickets from Q1 2026 that mention hallucinations."},
        analyst_answer,
    )

    def sub_agent(agent: GenAIAgent, name: str, task: str, call: ToolCall, answer: str) -> None:
        prompt = f"You are the {name}. Answer the task you are given."
        agent.answer_task(name, prompt, task, call, answer, lambda: session.clock.advance(200))

    def delegate(
        call: ToolCall, agent: GenAIAgent, name: str, inner: ToolCall
    ) -> Callable[[], None]:
        def branch() -> None:
            with coordinator.execute_tool(call):
                sub_agent(agent, name, call.arguments["task"], inner, call.result)

        return branch

    history: list[dict[str, Json]] = [
        message("system", text_part("You coordinate a researcher and an analyst.")),
        message("user", text_part(RESEARCH_QUESTION)),
    ]
    with coordinator.invoke_agent("coordinator", root=True):
        history.append(coordinator.chat(history, calls=[ask_researcher, ask_analyst]))
        session.parallel(
            [
                delegate(ask_researcher, researcher, "researcher", search),
                delegate(ask_analyst, analyst, "analyst", query),
            ]
        )
        history += tool_messages([ask_researcher, ask_analyst])
        coordinator.chat(
            history,
            text=(
                "Papers: 'AgentBoard' (2024) measures progress per step and 'Which Agent "
                "Causes Task Failures and When?' (2025) locates the failing agent and step. "
                "The ticket count is not available: the analyst's query failed."
            ),
        )
    return session.lines()


# --------------------------------------------------------------------------------------
# Sessions 4-6: one weather run in three dialects (same input, calls, ids, results, answer)
# --------------------------------------------------------------------------------------

WEATHER_QUESTION = "Weather in Paris, and what is 2+3?"
WEATHER_ANSWER = "Paris is rainy (14C) and 2+3=5."
WEATHER_CALLS = (
    ToolCall("call_1", "get_weather", {"city": "Paris"}, "rainy, 14C in Paris"),
    ToolCall("call_2", "add", {"a": 2, "b": 3}, "5"),
)
WEATHER_TOOLS = (
    ToolSpec("get_weather", "Get the weather for a city.", schema({"city": {"type": "string"}})),
    ToolSpec(
        "add", "Add two integers.", schema({"a": {"type": "integer"}, "b": {"type": "integer"}})
    ),
)
WEATHER_MODEL = "gpt-4o"


def weather_genai() -> list[str]:
    """The weather run in OTel GenAI (like the openai-v2 fixture): tools under the agent."""
    session = Session(
        "weather-genai", fixed_resource("weather-agent"), epoch_ns(2026, 4, 22, 10, 0)
    )
    agent = GenAIAgent(session, "weather-genai", WEATHER_MODEL, WEATHER_TOOLS)
    history = [message("user", text_part(WEATHER_QUESTION))]
    with agent.invoke_agent("weather_agent", root=True):
        history.append(agent.chat(history, calls=WEATHER_CALLS))
        for call in WEATHER_CALLS:
            with agent.execute_tool(call):
                pass
        history += tool_messages(WEATHER_CALLS)
        agent.chat(history, text=WEATHER_ANSWER)
    return session.lines()


# OpenInference (like the LangGraph fixture: AGENT > CHAIN agent > LLM, CHAIN tools > TOOL)

OI_SCOPE = Scope("openinference.instrumentation.langchain", "0.1.80")


def oi_message_attrs(prefix: str, index: int, msg: dict[str, Json]) -> dict[str, AttrValue]:
    """Flatten one chat message into ``llm.{input,output}_messages.N.message.*``."""
    base = f"{prefix}.{index}.message"
    out: dict[str, AttrValue] = {f"{base}.role": msg["role"]}
    if msg.get("content"):
        out[f"{base}.content"] = msg["content"]
    for key in ("name", "tool_call_id"):
        if msg.get(key):
            out[f"{base}.{key}"] = msg[key]
    for m, call in enumerate(msg.get("tool_calls", [])):
        call_base = f"{base}.tool_calls.{m}.tool_call"
        out[f"{call_base}.id"] = call.id
        out[f"{call_base}.function.name"] = call.name
        out[f"{call_base}.function.arguments"] = spaced(call.arguments)
    return out


def lc_message(msg: dict[str, Json]) -> dict[str, Json]:
    """A LangChain message as OpenInference serializes state into ``input.value``."""
    kind = {"user": "human", "assistant": "ai", "tool": "tool"}[msg["role"]]
    data: dict[str, Json] = {"content": msg.get("content", ""), "type": kind}
    if msg.get("tool_calls"):
        data["tool_calls"] = [
            {"name": c.name, "args": c.arguments, "id": c.id, "type": "tool_call"}
            for c in msg["tool_calls"]
        ]
    if kind == "tool":
        data.update(name=msg["name"], tool_call_id=msg["tool_call_id"], status="success")
    return {"type": kind, "data": data}


def lc_tool_message(call: ToolCall) -> dict[str, Json]:
    return lc_message(
        {"role": "tool", "content": call.result, "name": call.name, "tool_call_id": call.id}
    )


def weather_openinference() -> list[str]:
    """The weather run as openinference-instrumentation-langchain records a LangGraph agent.

    Faithful to the real output's quirks: no ``tool.id`` on TOOL spans; the call id is in
    the parent ``tools`` CHAIN input (``tool_call_with_context``), in the TOOL output (a
    serialized ToolMessage) and in the next LLM input; a single-argument tool gets the
    bare value as ``input.value``.
    """
    session_id = "weather-oi"
    session = Session(session_id, fixed_resource("weather-agent"), epoch_ns(2026, 4, 22, 10, 5))
    user = {"role": "user", "content": WEATHER_QUESTION}
    assistant_calls = {"role": "assistant", "content": "", "tool_calls": list(WEATHER_CALLS)}
    tool_results = [
        {"role": "tool", "content": c.result, "name": c.name, "tool_call_id": c.id}
        for c in WEATHER_CALLS
    ]
    answer = {"role": "assistant", "content": WEATHER_ANSWER}
    tool_schemas = {
        f"llm.tools.{i}.tool.json_schema": spaced(tool.definition())
        for i, tool in enumerate(WEATHER_TOOLS)
    }

    def common(kind: str, step: int | None = None, node: str = "") -> dict[str, AttrValue]:
        metadata: dict[str, Json] = {"ls_integration": "langgraph"}
        if step is not None:
            metadata.update(langgraph_step=step, langgraph_node=node)
        return {
            "session.id": session_id,
            "metadata": spaced(metadata),
            "openinference.span.kind": kind,
        }

    def state(messages: Sequence[dict[str, Json]]) -> str:
        return spaced({"messages": [lc_message(m) for m in messages]})

    def ok(span: trace.Span) -> None:
        span.set_status(Status(StatusCode.OK))

    def llm_step(step: int, inputs: Sequence[dict[str, Json]], output: dict[str, Json]) -> None:
        with session.span(
            OI_SCOPE,
            "agent",
            {**common("CHAIN", step, "agent"), "input.value": state(inputs)},
        ) as chain:
            attributes: dict[str, AttrValue] = {
                **common("LLM", step, "agent"),
                "input.value": state(inputs),
                "input.mime_type": "application/json",
                "llm.model_name": WEATHER_MODEL,
                "llm.provider": "openai",
                "llm.system": "openai",
                "llm.invocation_parameters": spaced({"model": WEATHER_MODEL, "temperature": 0}),
                **tool_schemas,
            }
            for i, msg in enumerate(inputs):
                attributes.update(oi_message_attrs("llm.input_messages", i, msg))
            with session.span(OI_SCOPE, "ChatOpenAI", attributes, ms=900) as llm:
                llm.set_attribute("output.value", spaced(lc_message(output)))
                llm.set_attribute("output.mime_type", "application/json")
                for key, value in oi_message_attrs("llm.output_messages", 0, output).items():
                    llm.set_attribute(key, value)
                llm.set_attribute("llm.token_count.prompt", 40 * len(inputs))
                llm.set_attribute("llm.token_count.completion", 30)
                llm.set_attribute("llm.token_count.total", 40 * len(inputs) + 30)
                ok(llm)
            chain.set_attribute("input.mime_type", "application/json")
            chain.set_attribute("output.value", state([output]))
            chain.set_attribute("output.mime_type", "application/json")
            ok(chain)

    def tool_step(index: int, call: ToolCall) -> None:
        context_input = {
            "__type": "tool_call_with_context",
            "tool_call": {"name": call.name, "args": call.arguments, "id": call.id},
            "state": {"messages": [lc_message(user), lc_message(assistant_calls)]},
        }
        with session.span(
            OI_SCOPE,
            "tools",
            {
                **common("CHAIN", 2, "tools"),
                "input.value": spaced(context_input),
                "input.mime_type": "application/json",
            },
        ) as chain:
            spec = next(tool for tool in WEATHER_TOOLS if tool.name == call.name)
            # Real output: one argument -> its bare value; several -> a JSON object.
            single = len(call.arguments) == 1
            tool_input = (
                str(next(iter(call.arguments.values()))) if single else spaced(call.arguments)
            )
            attributes: dict[str, AttrValue] = {
                **common("TOOL", 2, "tools"),
                "input.value": tool_input,
                "tool.name": call.name,
                "tool.description": spec.description,
                "tool.parameters": spaced(spec.parameters),
            }
            if not single:
                attributes["input.mime_type"] = "application/json"
            with session.span(OI_SCOPE, call.name, attributes, ms=30) as tool:
                tool.set_attribute("output.value", spaced(lc_tool_message(call)))
                tool.set_attribute("output.mime_type", "application/json")
                ok(tool)
            chain.set_attribute("output.value", spaced({"messages": [lc_tool_message(call)]}))
            chain.set_attribute("output.mime_type", "application/json")
            ok(chain)

    with session.span(
        OI_SCOPE,
        "weather_agent",
        {**common("AGENT"), "input.value": state([user])},
        root=True,
    ) as root:
        llm_step(1, [user], assistant_calls)
        session.parallel([lambda i=i, c=c: tool_step(i, c) for i, c in enumerate(WEATHER_CALLS)])
        llm_step(3, [user, assistant_calls, *tool_results], answer)
        root.set_attribute("input.mime_type", "application/json")
        root.set_attribute("output.value", state([user, assistant_calls, *tool_results, answer]))
        root.set_attribute("output.mime_type", "application/json")
        ok(root)
    return session.lines()


# OpenLLMetry / Traceloop, current (semconv-ai >= 0.5): GenAI parts JSON + traceloop.* keys

TL_SCOPE = Scope("opentelemetry.instrumentation.langchain", "0.62.4")


def weather_openllmetry() -> list[str]:
    """The weather run as Traceloop's LangChain instrumentation records a LangGraph agent.

    Like the real output: ``execute_task`` spans for graph nodes, chat spans with parts
    JSON and ``finish_reason: ""``, tool spans without ``gen_ai.tool.call.id`` whose
    arguments and result are LangChain callback data (the call id is only inside the
    serialized ToolMessage). The session comes from ``Traceloop.set_association_properties``,
    which stamps ``traceloop.association.properties.session_id`` on every span.
    """
    session_id = "weather-tl"
    session = Session(session_id, fixed_resource("weather-agent"), epoch_ns(2026, 4, 22, 10, 10))
    association = {
        "traceloop.workflow.name": "weather_agent",
        "traceloop.association.properties.session_id": session_id,
    }
    user = message("user", text_part(WEATHER_QUESTION))
    assistant_calls = message("assistant", *[call_part(c) for c in WEATHER_CALLS])

    def task(name: str, step: int, node: str) -> dict[str, AttrValue]:
        return {
            **association,
            "traceloop.association.properties.langgraph_step": step,
            "traceloop.association.properties.langgraph_node": node,
            "traceloop.span.kind": "task",
            "traceloop.entity.name": name,
            "gen_ai.provider.name": "langgraph",
            "gen_ai.operation.name": "execute_task",
            "gen_ai.task.name": name,
        }

    def chat(step: int, inputs: Sequence[dict[str, Json]], output: dict[str, Json]) -> None:
        with session.span(TL_SCOPE, "execute_task agent", task("agent", step, "agent")) as node:
            attributes: dict[str, AttrValue] = {
                **association,
                "traceloop.association.properties.langgraph_step": step,
                "traceloop.association.properties.langgraph_node": "agent",
                "gen_ai.provider.name": "openai",
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": WEATHER_MODEL,
                "gen_ai.tool.definitions": spaced([t.definition() for t in WEATHER_TOOLS]),
                "gen_ai.input.messages": spaced(list(inputs)),
            }
            with session.span(
                TL_SCOPE, "ChatOpenAI.chat", attributes, kind=SpanKind.CLIENT, ms=900
            ) as span:
                span.set_attribute("gen_ai.response.model", f"{WEATHER_MODEL}-2024-08-06")
                span.set_attribute("gen_ai.output.messages", spaced([output]))
            node.set_attribute("gen_ai.task.status", "success")

    def tool(call: ToolCall) -> None:
        spec = next(t for t in WEATHER_TOOLS if t.name == call.name)
        metadata = {"langgraph_step": 2, "langgraph_node": "tools"}
        callback_input = spaced(
            {
                "input_str": repr(call.arguments),
                "tags": ["seq:step:1"],
                "metadata": metadata,
                "inputs": call.arguments,
                "kwargs": {"color": "green", "name": None, "tool_call_id": call.id},
            }
        )
        tool_message = {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "messages", "ToolMessage"],
            "kwargs": {
                "content": call.result,
                "type": "tool",
                "name": call.name,
                "tool_call_id": call.id,
                "status": "success",
            },
        }
        callback_output = spaced(
            {"output": tool_message, "kwargs": {"tags": ["seq:step:1"], "name": call.name}}
        )
        with session.span(TL_SCOPE, "execute_task tools", task("tools", 2, "tools")) as node:
            attributes: dict[str, AttrValue] = {
                **association,
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": call.name,
                "gen_ai.provider.name": "langgraph",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.type": "function",
                "gen_ai.tool.description": spec.description,
                "traceloop.entity.input": callback_input,
                "gen_ai.tool.call.arguments": callback_input,
            }
            with session.span(TL_SCOPE, f"execute_tool {call.name}", attributes, ms=30) as span:
                span.set_attribute("gen_ai.task.status", "success")
                span.set_attribute("traceloop.entity.output", callback_output)
                span.set_attribute("gen_ai.tool.call.result", callback_output)
            node.set_attribute("gen_ai.task.status", "success")

    root_attributes: dict[str, AttrValue] = {
        **association,
        "traceloop.span.kind": "workflow",
        "traceloop.entity.name": "weather_agent",
        "gen_ai.provider.name": "langgraph",
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather_agent",
    }
    with session.span(TL_SCOPE, "weather_agent.workflow", root_attributes, root=True) as root:
        chat(1, [user], {**assistant_calls, "finish_reason": ""})
        session.parallel([lambda c=c: tool(c) for c in WEATHER_CALLS])
        chat(
            3,
            [user, assistant_calls, *tool_messages(WEATHER_CALLS)],
            {**message("assistant", text_part(WEATHER_ANSWER)), "finish_reason": ""},
        )
        root.set_attribute("gen_ai.task.status", "success")
    return session.lines()


def returned_value(result: str) -> Json:
    """What the tool function returned, recovered from the text fed to the model."""
    try:
        return json.loads(result)
    except json.JSONDecodeError:
        return result


# OpenLLMetry / Traceloop legacy (semconv-ai < 0.5): flattened gen_ai.prompt/completion

TL_LEGACY_LLM_SCOPE = Scope("opentelemetry.instrumentation.openai.v1", "0.40.14")
TL_LEGACY_SDK_SCOPE = Scope("traceloop.tracer")


def weather_openllmetry_legacy() -> list[str]:
    """The weather run as older Traceloop packages record it (still seen in the wild).

    ``openai.chat`` spans with ``llm.request.type=chat`` and flattened
    ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``; tools from the ``@tool`` decorator
    with ``traceloop.entity.input`` = ``{"args": [], "kwargs": {...}}`` and the JSON-dumped
    return value as ``traceloop.entity.output``.
    """
    session_id = "weather-tl-legacy"
    session = Session(session_id, fixed_resource("weather-agent"), epoch_ns(2026, 4, 22, 10, 15))
    association = {
        "traceloop.workflow.name": "weather_agent",
        "traceloop.association.properties.session_id": session_id,
    }
    functions: dict[str, AttrValue] = {}
    for i, spec in enumerate(WEATHER_TOOLS):
        functions[f"llm.request.functions.{i}.name"] = spec.name
        functions[f"llm.request.functions.{i}.description"] = spec.description
        functions[f"llm.request.functions.{i}.parameters"] = spaced(spec.parameters)

    def prompts(history: Sequence[dict[str, Json]]) -> dict[str, AttrValue]:
        out: dict[str, AttrValue] = {}
        for n, msg in enumerate(history):
            base = f"gen_ai.prompt.{n}"
            out[f"{base}.role"] = msg["role"]
            if msg.get("content"):
                out[f"{base}.content"] = msg["content"]
            if msg.get("tool_call_id"):
                out[f"{base}.tool_call_id"] = msg["tool_call_id"]
            for m, call in enumerate(msg.get("tool_calls", [])):
                out[f"{base}.tool_calls.{m}.id"] = call.id
                out[f"{base}.tool_calls.{m}.name"] = call.name
                out[f"{base}.tool_calls.{m}.arguments"] = spaced(call.arguments)
        return out

    def chat(history: Sequence[dict[str, Json]], output: dict[str, Json]) -> None:
        attributes: dict[str, AttrValue] = {
            **association,
            "llm.request.type": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": WEATHER_MODEL,
            "llm.is_streaming": False,
            **functions,
            **prompts(history),
        }
        with session.span(
            TL_LEGACY_LLM_SCOPE, "openai.chat", attributes, kind=SpanKind.CLIENT, ms=900
        ) as span:
            calls: Sequence[ToolCall] = output.get("tool_calls", [])
            span.set_attribute("gen_ai.response.model", f"{WEATHER_MODEL}-2024-08-06")
            span.set_attribute("gen_ai.usage.prompt_tokens", 40 * len(history))
            span.set_attribute("gen_ai.usage.completion_tokens", 30)
            span.set_attribute("llm.usage.total_tokens", 40 * len(history) + 30)
            span.set_attribute(
                "gen_ai.completion.0.finish_reason", "tool_calls" if calls else "stop"
            )
            span.set_attribute("gen_ai.completion.0.role", "assistant")
            if output.get("content"):
                span.set_attribute("gen_ai.completion.0.content", output["content"])
            for m, call in enumerate(calls):
                span.set_attribute(f"gen_ai.completion.0.tool_calls.{m}.id", call.id)
                span.set_attribute(f"gen_ai.completion.0.tool_calls.{m}.name", call.name)
                span.set_attribute(
                    f"gen_ai.completion.0.tool_calls.{m}.arguments", spaced(call.arguments)
                )

    def tool(call: ToolCall) -> None:
        attributes: dict[str, AttrValue] = {
            **association,
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": call.name,
            "traceloop.entity.path": "weather_agent",
            "traceloop.entity.input": spaced({"args": [], "kwargs": call.arguments}),
        }
        with session.span(TL_LEGACY_SDK_SCOPE, f"{call.name}.tool", attributes, ms=30) as span:
            # The decorator json.dumps what the tool returned: a str comes out quoted, 5 as 5.
            returned = returned_value(call.result)
            span.set_attribute("traceloop.entity.output", spaced(returned))

    user = {"role": "user", "content": WEATHER_QUESTION}
    assistant_calls = {"role": "assistant", "tool_calls": list(WEATHER_CALLS)}
    tool_results = [
        {"role": "tool", "content": c.result, "tool_call_id": c.id} for c in WEATHER_CALLS
    ]
    root_attributes: dict[str, AttrValue] = {
        **association,
        "traceloop.span.kind": "workflow",
        "traceloop.entity.name": "weather_agent",
    }
    with session.span(
        TL_LEGACY_SDK_SCOPE, "weather_agent.workflow", root_attributes, root=True
    ) as root:
        root.set_attribute(
            "traceloop.entity.input", spaced({"args": [WEATHER_QUESTION], "kwargs": {}})
        )
        chat([user], assistant_calls)
        session.parallel([lambda c=c: tool(c) for c in WEATHER_CALLS])
        chat([user, assistant_calls, *tool_results], {"content": WEATHER_ANSWER})
        root.set_attribute("traceloop.entity.output", spaced(WEATHER_ANSWER))
    return session.lines()


# --------------------------------------------------------------------------------------
# Help-desk RAG sessions (groundedness and refusal): retrieval, then one answer
# --------------------------------------------------------------------------------------

HELPDESK_MODEL = "gpt-4o-mini"
HELPDESK_SYSTEM = (
    "You are the help desk of an online shop. Answer only from the numbered sources and "
    "cite them as [N]. If the sources do not answer the question, say that you do not "
    "know and offer to connect a manager."
)
RETURNS_DOCS = (
    ("kb-returns-1", "Refunds are accepted within 30 days of purchase."),
    ("kb-returns-2", "Shipping costs are not refunded."),
    (
        "kb-returns-3",
        "Refunds are paid back to the original payment method within 5 business days "
        "after the warehouse receives the item.",
    ),
)
DELIVERY_DOCS = (
    ("kb-delivery-1", "Standard delivery takes 3 to 5 business days and costs $4.99."),
    (
        "kb-delivery-2",
        "Express delivery costs $15 and arrives the next business day if ordered before 2 pm.",
    ),
    ("kb-delivery-3", "We deliver to the United States and Canada only."),
)
RU_DELIVERY_DOCS = (
    ("kb-ru-1", "Доставка по Москве стоит 300 рублей и занимает 1–2 рабочих дня."),
    ("kb-ru-2", "Бесплатная доставка действует для заказов от 5000 рублей."),
    ("kb-ru-3", "Курьер звонит за час до приезда."),
)


@dataclass(frozen=True)
class HelpdeskRun:
    """One help-desk exchange: the question, what retrieval returned, the answer."""

    session_id: str
    question: str
    documents: Sequence[tuple[str, str]]
    answer: str
    minute: int


HELPDESK_RUNS = (
    HelpdeskRun(
        "rag-cited",
        "How long do I have to return an item, and do I get the shipping costs back?",
        RETURNS_DOCS,
        "You can return an item within 30 days of purchase [1]. Shipping costs are not "
        "refunded [2]. Is there anything else I can help with?",
        0,
    ),
    HelpdeskRun(
        "rag-invented",
        "How long does it take to get my money back after a return?",
        RETURNS_DOCS,
        "The refund goes back to your original payment method within 5 business days after "
        "the warehouse receives the item [3]. You will also get a $10 store credit for the "
        "inconvenience.",
        5,
    ),
    HelpdeskRun(
        "rag-no-citation",
        "How much is express delivery?",
        DELIVERY_DOCS,
        "Express delivery costs $15 and arrives the next business day if you order before 2 pm.",
        10,
    ),
    HelpdeskRun(
        "rag-dangling",
        "Do you deliver to Canada?",
        DELIVERY_DOCS,
        "Yes, we deliver to the United States and Canada [4].",
        15,
    ),
    HelpdeskRun(
        "oos-honest",
        "Will your pick-up point in Kazan be open on 12 June 2026? It is a public holiday.",
        DELIVERY_DOCS,
        "I'm sorry, I don't have information about opening hours on 12 June 2026. I can "
        "connect you with a manager who will know, or leave your phone number and we will "
        "call you back.",
        20,
    ),
    HelpdeskRun(
        "oos-invented",
        "What warranty do refurbished phones have?",
        RETURNS_DOCS,
        "Refurbished phones come with a 6-month warranty, and you can extend it to 12 "
        "months for $29.",
        25,
    ),
    HelpdeskRun(
        "rag-russian",
        "Сколько стоит доставка по Москве и когда приедет курьер?",
        RU_DELIVERY_DOCS,
        "Доставка по Москве стоит 300 рублей и занимает 1–2 рабочих дня [1]. Курьер "
        "позвонит за час до приезда [3].",
        30,
    ),
)


def helpdesk_session(run: HelpdeskRun) -> list[str]:
    """A retrieval span (``gen_ai.operation.name = retrieval``) with numbered documents,
    then one chat whose prompt lists them as ``[N]`` sources and whose output answers."""
    session = Session(
        run.session_id, fixed_resource("help-desk"), epoch_ns(2026, 4, 24, 9, run.minute)
    )
    agent = GenAIAgent(session, run.session_id, HELPDESK_MODEL, ())
    documents = [
        {"id": doc_id, "content": content, "score": round(0.9 - 0.07 * i, 2)}
        for i, (doc_id, content) in enumerate(run.documents)
    ]
    sources = "\n".join(f"[{i}] {content}" for i, (_, content) in enumerate(run.documents, 1))
    with agent.invoke_agent("help_desk", root=True):
        attributes: dict[str, AttrValue] = {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.conversation.id": run.session_id,
            "gen_ai.data_source.id": "help-center",
            "gen_ai.retrieval.query.text": run.question,
            "gen_ai.retrieval.documents": compact(documents),
        }
        with session.span(GENAI_APP_SCOPE, "retrieval help-center", attributes, ms=60):
            pass
        history = [
            message("system", text_part(f"{HELPDESK_SYSTEM}\n\nSources:\n{sources}")),
            message("user", text_part(run.question)),
        ]
        agent.chat(history, text=run.answer)
    return session.lines()


def helpdesk_cases() -> list[dict[str, Json]]:
    """``happy`` / ``edge`` for the answerable questions, ``oos`` for the two the sources
    cannot answer."""
    types = {"rag-dangling": "edge", "oos-honest": "oos", "oos-invented": "oos"}
    return [
        {
            "session_id": run.session_id,
            "type": types.get(run.session_id, "happy"),
            "question": run.question,
        }
        for run in HELPDESK_RUNS
    ]


def helpdesk_file() -> list[str]:
    return [line for run in HELPDESK_RUNS for line in helpdesk_session(run)]


# --------------------------------------------------------------------------------------
# The cases file and the entry point
# --------------------------------------------------------------------------------------


def expected(call: ToolCall, **overrides: Json) -> dict[str, Json]:
    return {"name": call.name, "arguments": {**call.arguments, **overrides}}


def weather_case(session_id: str) -> dict[str, Json]:
    return {
        "session_id": session_id,
        "type": "happy",
        "question": WEATHER_QUESTION,
        "reference_answer": WEATHER_ANSWER,
        "key_points": ["Paris weather is rainy, 14C", "2+3=5"],
        "expected_tool_calls": [expected(call) for call in WEATHER_CALLS],
        "facts": {},
    }


def cases() -> list[dict[str, Json]]:
    """One reference per session (docs/semantics.md, "The cases file"), joined on ``session_id``."""
    ignore = {"ignore": True}
    return [
        {
            "session_id": "refunds-march",
            "type": "happy",
            "question": REFUNDS_QUESTION,
            "judge_instruction": (
                "Today is 2026-04-02, so 'March' means March 2026. The answer must give the "
                "refund total on customer C-1042's orders for 2026-03-01..2026-03-31."
            ),
            "key_points": ["refund total for March 2026", "customer C-1042"],
            "expected_tool_calls": [
                {
                    "name": "get_orders",
                    "arguments": {
                        "customer_id": "C-1042",
                        "start_date": "2026-03-01",
                        "end_date": "2026-03-31",
                    },
                },
                {"name": "filter_refunds", "arguments": {"orders": ignore, "period": "2026-03"}},
                {"name": "sum_refunds", "arguments": {"refunds": ignore, "period": "2026-03"}},
            ],
            "order": [[0, 1], [1, 2]],
            "facts": {"period": "2026-03", "customer_id": "C-1042"},
        },
        {
            "session_id": "trip-planner-7",
            "type": "happy",
            "question": TRIP_QUESTION,
            "key_points": [
                "the weather in Lisbon on 2026-05-04",
                "flights from BER to LIS on 2026-05-04",
                "hotels in Lisbon for 2 nights",
            ],
            "expected_tool_calls": [
                {"name": "get_weather", "arguments": {"city": "Lisbon"}},
                {"name": "get_hotels", "arguments": {"city": "Lisbon", "nights": 2}},
                {
                    "name": "get_flights",
                    "arguments": {"origin": "BER", "destination": "LIS", "date": "2026-05-04"},
                },
            ],
            "facts": {"city": "Lisbon", "date": "2026-05-04", "nights": 2},
        },
        {
            "session_id": "research-31",
            "type": "happy",
            "question": RESEARCH_QUESTION,
            "key_points": [
                "recent papers that evaluate LLM agents step by step",
                "number of Q1 2026 support tickets mentioning hallucinations",
            ],
            "expected_tool_calls": [
                {"name": "ask_researcher", "arguments": {"task": ignore}},
                {"name": "ask_analyst", "arguments": {"task": ignore}},
            ],
            # The sub-agents' own calls (search_papers, run_query) are free.
            "match_tools": ["ask_researcher", "ask_analyst"],
            "facts": {"period": "2026-Q1"},
        },
        weather_case("weather-oi"),
        weather_case("weather-tl"),
        weather_case("weather-tl-legacy"),
        weather_case("weather-genai"),
        *helpdesk_cases(),
    ]


TRACE_FILES: dict[str, Callable[[], list[str]]] = {
    "march_refunds.otlp.jsonl": march_refunds,
    "parallel_tools.otlp.jsonl": parallel_tools,
    "multi_agent.otlp.jsonl": multi_agent,
    "weather_openinference.otlp.jsonl": weather_openinference,
    "weather_openllmetry.otlp.jsonl": weather_openllmetry,
    "weather_openllmetry_legacy.otlp.jsonl": weather_openllmetry_legacy,
    "weather_genai.otlp.jsonl": weather_genai,
    "helpdesk_rag.otlp.jsonl": helpdesk_file,
}
CASES_FILE = "cases.jsonl"


def write_lines(path: Path, lines: Sequence[str]) -> None:
    # newline="\n": the files must be byte-identical on every platform.
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(f"{line}\n" for line in lines)


def generate(out: Path) -> list[Path]:
    """Write every sample file into ``out``; return the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, build in TRACE_FILES.items():
        write_lines(out / name, build())
        written.append(out / name)
    write_lines(out / CASES_FILE, [spaced(case) for case in cases()])
    written.append(out / CASES_FILE)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
