"""Where a run's answers come from: trace files (or ``aem serve``'s spool), or the agent.

Why both yield the same thing: a run judges sessions, however they were produced. From
files, sessions are assembled exactly as ``aem audit`` assembles them and joined to cases
on ``session_id``. From ``--agent module:function``, each case's question is put to the
function under an OpenTelemetry tracer provider whose spans are collected in-process
(the ``predict_fn`` pattern), inside a root span carrying the case's ``session_id`` as
``gen_ai.conversation.id`` — so a rerun really asks the agent again.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

from aem.cases import Case
from aem.foundation.model import ClosedSession, InputIssue, SpanRecord
from collectors.otlp import decode_proto_request
from collectors.reading import AssemblyLimits, SessionReading, assemble_all

SESSION_ATTRIBUTE = "gen_ai.conversation.id"


def sessions_from_traces(
    paths: Sequence[str], issues: list[InputIssue], assembly: AssemblyLimits
) -> Iterator[ClosedSession]:
    """Every session in the trace files under ``paths``, read and assembled as ``aem
    audit`` does it (:class:`collectors.reading.SessionReading`, ``[assembly]`` honoured)."""
    for sessions in SessionReading(assembly, issues).files(paths):
        yield from sessions


class _Collector(SpanProcessor):
    """Keeps the spans that end while a run collects (one per process, added once)."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] | None = None
        self.lock = threading.Lock()

    def on_end(self, span: ReadableSpan) -> None:
        with self.lock:
            if self.spans is not None:
                self.spans.append(span)


_COLLECTOR = _Collector()
_INSTALLED: list[TracerProvider] = []


def _provider() -> TracerProvider:
    """The SDK provider the agent's spans go through, with the collector attached."""
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        provider = current
    else:
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
        provider = trace.get_tracer_provider()  # type: ignore[assignment]
        if not isinstance(provider, TracerProvider):
            raise RuntimeError("another OpenTelemetry tracer provider is installed")
    if provider not in _INSTALLED:
        provider.add_span_processor(_COLLECTOR)
        _INSTALLED.append(provider)
    return provider


def load_agent(spec: str) -> Callable[[str], Any]:
    """``"package.module:function"`` → the function (the working directory is importable)."""
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise ValueError(f"--agent {spec!r} must be 'module:function'")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"--agent: cannot load {spec!r}: {exc}") from exc
    if not callable(found):
        raise ValueError(f"--agent: {spec!r} is not callable")
    agent: Callable[[str], Any] = found
    return agent


def _records(spans: list[ReadableSpan]) -> list[SpanRecord]:
    records, _ = decode_proto_request(encode_spans(spans))
    return records


def sessions_from_agent(
    agent: Callable[[str], Any],
    cases: Sequence[Case],
    issues: list[InputIssue],
    assembly: AssemblyLimits,
) -> Iterator[ClosedSession]:
    """Ask the agent each case's question; its spans, assembled into sessions (each
    case's spans as one whole input, within the ``[assembly]`` span limit)."""
    tracer = _provider().get_tracer("aem.test")
    for case in cases:
        with _COLLECTOR.lock:
            _COLLECTOR.spans = []
        try:
            with tracer.start_as_current_span(
                "aem.test.case", attributes={SESSION_ATTRIBUTE: case.session_id}
            ):
                agent(case.question or "")
        except Exception as exc:  # the agent's failure is this case's, not the run's
            issues.append(
                InputIssue(
                    kind="agent_error",
                    message=f"the agent raised {type(exc).__name__}: {exc}",
                    session_id=case.session_id,
                )
            )
        finally:
            with _COLLECTOR.lock:
                spans, _COLLECTOR.spans = _COLLECTOR.spans or [], None
        yield from assemble_all(_records(spans), assembly.span_limit)
