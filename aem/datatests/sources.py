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
from aem.model import ClosedSession, InputIssue, SpanRecord
from collectors.assembler import SessionAssembler
from collectors.otlp import decode_proto_request
from collectors.readers import find_trace_files, read_batches

SESSION_ATTRIBUTE = "gen_ai.conversation.id"


def sessions_from_traces(
    paths: Sequence[str], issues: list[InputIssue], idle_spans: int = 20_000
) -> Iterator[ClosedSession]:
    """Every session in the trace files under ``paths``."""
    files, walk_issues = find_trace_files(paths)
    issues.extend(walk_issues)
    assembler = SessionAssembler(idle=idle_spans, on_issue=issues.append)
    clock = 0
    for path in files:
        for batch in read_batches(path):
            issues.extend(batch.issues)
            for span in batch.spans:
                clock += 1
                assembler.add(span, clock)
    yield from assembler.drain()


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
    return found


def _records(spans: list[ReadableSpan]) -> list[SpanRecord]:
    records, _ = decode_proto_request(encode_spans(spans))
    return records


def sessions_from_agent(
    agent: Callable[[str], Any], cases: Sequence[Case], issues: list[InputIssue]
) -> Iterator[ClosedSession]:
    """Ask the agent each case's question; its spans, assembled into sessions."""
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
        assembler = SessionAssembler(idle=1)
        for number, record in enumerate(_records(spans), start=1):
            assembler.add(record, number)
        yield from assembler.drain()
