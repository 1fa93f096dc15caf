"""A deepeval custom metric: ``deepeval.evaluate(test_cases, metrics=[AemMetric()])``.

Why a metric and not only the audit: teams that already evaluate in deepeval run metrics
over ``LLMTestCase`` objects; AEM then is one more metric there, with no LLM judge and no
API key. A test case reaches AEM in one of three ways, first match wins:

- ``metadata["aem_trace"]``: a trace file or directory (or a list of them), audited
  exactly as ``aem.audit_paths`` audits it;
- ``metadata["aem_spans"]``: spans in memory — OTLP/JSON documents (``dict``, one per
  line of a trace file), OTLP protobuf messages or OTel SDK ``ReadableSpan`` objects —
  assembled and evaluated as the audit does;
- otherwise the test case itself: ``input``, ``actual_output`` and ``retrieval_context``
  become a one-turn OpenTelemetry GenAI session (a ``retrieval`` span with the documents,
  then one ``chat`` span answering), evaluated like any trace.

``metadata["aem_session"]`` keeps one session of a trace holding several.

The score is the share of AEM's decided metric results (``pass`` / ``fail``, over every
turn) that passed; ``threshold`` defaults to 1.0, so the test case succeeds exactly when
AEM failed no metric. ``reason`` names each root-cause turn, its failed metrics and their
explanations, then each suspect turn and the claims left unverified; a suspect-only
session scores 1.0 (nothing is proven wrong) and its reason says so. ``score_breakdown``
is the pass share per metric; ``reports`` keeps AEM's ``SessionReport`` objects.

Why ``results``: ``deepeval.evaluate`` measures copies of the metric, one per test case,
and drops them; the copies share the metric's :class:`CaseVerdicts`, which keeps each
test case's :class:`CaseResult` by name, so the metric the user holds has them after.

A test case AEM cannot read raises deepeval's own
``MissingTestCaseParamsError`` / ``MismatchedTestCaseInputsError`` with ``error`` set, so
``ErrorConfig(ignore_errors=True)`` records it and goes on with the rest of the batch.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aem.api import audit_paths
from aem.cases import Case
from aem.evaluate import Evaluator
from aem.foundation.model import InputIssue, Label, Outcome, SessionReport, SpanRecord, TurnVerdict
from aem.metrics.registry import ResolvedMetrics, resolve
from aem.settings import AemConfig
from collectors.otlp import decode_json_traces
from collectors.reading import assemble_all

TRACE_KEY = "aem_trace"
SPANS_KEY = "aem_spans"
SESSION_KEY = "aem_session"
METRIC_NAME = "AEM"


class TestCaseError(ValueError):
    """A test case AEM cannot evaluate; ``missing`` when a needed field is absent."""

    __test__ = False  # not a pytest class

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


@dataclass(frozen=True)
class CaseResult:
    """What AEM found in one test case: its session reports, score, breakdown and reason."""

    reports: list[SessionReport]
    score: float
    score_breakdown: dict[str, float]
    reason: str


class CaseVerdicts:
    """AEM's session reports for one test case's trace, spans or fields.

    One resolved metric set and one evaluator for every test case (the metrics and the
    embedding model load once); deepeval may measure from several threads, so
    evaluation is serialised. Needs no deepeval: it takes the test case's fields.
    """

    def __init__(
        self, config: AemConfig | None = None, cases: Mapping[str, Case] | None = None
    ) -> None:
        self._resolved: ResolvedMetrics = resolve(config or AemConfig())
        self._cases = dict(cases or {})
        self._evaluator = Evaluator(
            self._resolved.config, self._cases, list(self._resolved.metrics)
        )
        self._lock = threading.Lock()
        # every test case measured through this object, by name: deepeval measures copies
        # of a metric, and the copies share this, so the metric the user holds sees them
        self.results: dict[str, CaseResult] = {}

    def record(self, name: str, reports: list[SessionReport]) -> CaseResult:
        """Keep one test case's result under ``name`` (a later one of that name replaces it)."""
        result = CaseResult(reports, *verdict_summary(reports))
        with self._lock:
            self.results[name] = result
        return result

    def reports(
        self,
        metadata: Mapping[str, Any] | None,
        input_text: str | None = None,
        output: str | None = None,
        retrieval_context: Sequence[Any] | None = None,
    ) -> list[SessionReport]:
        """The reports of the test case's sessions (see the module doc for the order)."""
        metadata = metadata or {}
        if not isinstance(metadata, Mapping):
            raise TestCaseError("metadata must be a dict")
        with self._lock:
            if metadata.get(TRACE_KEY) is not None:
                found = self._from_paths(metadata[TRACE_KEY])
            elif metadata.get(SPANS_KEY) is not None:
                found = self._from_records(_records(metadata[SPANS_KEY]))
            else:
                spans = one_turn_spans(input_text, output, retrieval_context)
                found = self._from_records(_records(spans))
        return _select(found, metadata.get(SESSION_KEY))

    def _from_paths(self, paths: Any) -> list[SessionReport]:
        items = [paths] if isinstance(paths, str | Path) else paths
        if not isinstance(items, list | tuple) or not items:
            raise TestCaseError(f"metadata[{TRACE_KEY!r}] must be a path or a list of paths")
        try:
            report = audit_paths(items, cases=self._cases, config=self._resolved)
        except FileNotFoundError as exc:
            raise TestCaseError(f"metadata[{TRACE_KEY!r}]: {exc}") from None
        return list(report.sessions)

    def _from_records(self, records: list[SpanRecord]) -> list[SessionReport]:
        issues: list[InputIssue] = []
        span_limit = self._resolved.config.assembly.span_limit
        closed = assemble_all(records, span_limit, issues.append)
        reports = [self._evaluator.evaluate(session) for session in closed]
        return sorted(reports, key=lambda r: r.session_id)


def _records(spans: Any) -> list[SpanRecord]:
    """OTLP/JSON documents decoded here; protobuf and SDK spans through ``aem.api``."""
    if isinstance(spans, Mapping):
        spans = [spans]
    if not isinstance(spans, Iterable) or isinstance(spans, str | bytes):
        raise TestCaseError(f"metadata[{SPANS_KEY!r}] must be a list of spans or documents")
    from aem.api import _records as proto_records

    records: list[SpanRecord] = []
    others: list[Any] = []
    for position, item in enumerate(spans):
        if not isinstance(item, Mapping):
            others.append(item)
            continue
        try:
            decoded, _ = decode_json_traces(item)
        except ValueError as exc:
            raise TestCaseError(f"metadata[{SPANS_KEY!r}][{position}]: {exc}") from None
        records.extend(decoded)
    try:
        records.extend(proto_records(others))
    except TypeError as exc:
        raise TestCaseError(f"metadata[{SPANS_KEY!r}]: {exc}") from None
    return records


def _select(reports: list[SessionReport], session_id: Any) -> list[SessionReport]:
    if session_id is not None:
        reports = [r for r in reports if r.session_id == session_id]
        if not reports:
            raise TestCaseError(f"no session {session_id!r} in the test case's trace")
    if not reports:
        raise TestCaseError("the test case's trace holds no session AEM can evaluate")
    return reports


def _string(value: str) -> dict[str, Any]:
    return {"stringValue": value}


def one_turn_spans(
    input_text: str | None, output: str | None, retrieval_context: Sequence[Any] | None
) -> list[dict[str, Any]]:
    """A test case's fields as one OTLP/JSON document of OpenTelemetry GenAI spans: a
    ``retrieval`` span with the documents (when there are any), then a ``chat`` span
    whose prompt is the input and whose output is ``actual_output``. The ids derive from
    the fields, so the same test case gives the same session."""
    if not input_text or not output:
        missing = [n for n, v in (("input", input_text), ("actual_output", output)) if not v]
        raise TestCaseError(
            f"{' and '.join(repr(m) for m in missing)} cannot be empty for the '{METRIC_NAME}'"
            f" metric without metadata[{TRACE_KEY!r}] or metadata[{SPANS_KEY!r}]",
            missing=True,
        )
    texts = [str(getattr(d, "context", d)) for d in retrieval_context or []]
    digest = hashlib.sha256(json.dumps([input_text, output, texts]).encode()).hexdigest()
    session_id = f"deepeval-{digest[:12]}"
    trace_id = digest[:32]
    common = [{"key": "gen_ai.conversation.id", "value": _string(session_id)}]
    spans = []
    start = 1_700_000_000_000_000_000
    if texts:
        documents = [{"id": f"doc-{i}", "content": t} for i, t in enumerate(texts, 1)]
        retrieval = [
            {"key": "gen_ai.operation.name", "value": _string("retrieval")},
            {"key": "gen_ai.retrieval.query.text", "value": _string(input_text)},
            {"key": "gen_ai.retrieval.documents", "value": _string(json.dumps(documents))},
        ]
        spans.append(_span(trace_id, digest[32:48], "retrieval", retrieval + common, start))
    user = [{"role": "user", "parts": [{"type": "text", "content": input_text}]}]
    answer = [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": output}],
            "finish_reason": "stop",
        }
    ]
    chat = [
        {"key": "gen_ai.operation.name", "value": _string("chat")},
        {"key": "gen_ai.input.messages", "value": _string(json.dumps(user))},
        {"key": "gen_ai.output.messages", "value": _string(json.dumps(answer))},
    ]
    spans.append(_span(trace_id, digest[48:64], "chat", chat + common, start + 100_000_000))
    return [{"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}]


def _span(trace_id: str, span_id: str, name: str, attributes: list[Any], start: int) -> Any:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": 3,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 50_000_000),
        "attributes": attributes,
    }


def verdict_summary(reports: Sequence[SessionReport]) -> tuple[float, dict[str, float], str]:
    """``(score, score per metric, reason)`` of AEM's reports on one test case."""
    decided: dict[str, list[bool]] = {}
    for report in reports:
        for turn in report.turns:
            for m in turn.metrics:
                if m.outcome in (Outcome.PASS, Outcome.FAIL):
                    decided.setdefault(m.name, []).append(m.outcome is Outcome.PASS)
    flat = [ok for oks in decided.values() for ok in oks]
    score = sum(flat) / len(flat) if flat else 1.0
    breakdown = {name: sum(oks) / len(oks) for name, oks in sorted(decided.items())}
    return score, breakdown, _reason(reports, len(flat), sum(flat))


def _reason(reports: Sequence[SessionReport], decided: int, passed: int) -> str:
    parts = []
    suspects = 0
    for report in reports:
        turns = {t.turn_id: t for t in report.turns}
        causes = {c.turn_id for c in report.root_causes}
        for cause in report.root_causes:
            turn = turns[cause.turn_id]
            parts.append(
                f"root cause in session {report.session_id!r}, turn {cause.turn_id} "
                f"({cause.kind.value} {cause.name!r}): {_failures(turn)}"
            )
        for turn in report.turns:
            where = f"session {report.session_id!r}, turn {turn.turn_id}"
            if turn.turn_id not in causes:
                for m in turn.metrics:
                    if m.outcome is Outcome.FAIL:
                        parts.append(
                            f"{where} ({turn.label.value}): {m.name} failed: {m.explanation}"
                        )
            doubts = _unverified(turn)
            if turn.label is Label.SUSPECT:
                suspects += 1
                parts.append(
                    f"suspect (nothing proven, look here first) in {where} "
                    f"({turn.kind.value} {turn.name!r}): {doubts}"
                )
            elif doubts:
                parts.append(f"{where} ({turn.label.value}): {doubts}")
    head = f"AEM: {passed} of {decided} metric results passed"
    if not decided:
        head = "AEM: no metric decided (every one skipped): nothing was checked"
    if suspects:
        head += f"; {suspects} suspect turn{'s' if suspects > 1 else ''}, nothing proven wrong"
    return head + ("; " + " | ".join(parts) if parts else ".")


def _failures(turn: TurnVerdict) -> str:
    return "; ".join(
        f"{m.name} failed: {m.explanation}" for m in turn.metrics if m.outcome is Outcome.FAIL
    )


def _unverified(turn: TurnVerdict) -> str:
    """``metric left unverified 'claim', 'claim'`` for each of the turn's unverified
    results: the values nothing in the trace supports or contradicts."""
    found = []
    for m in turn.metrics:
        if m.outcome is not Outcome.UNVERIFIED:
            continue
        claims = ", ".join(repr(c.claim) for c in m.unverified)
        found.append(f"{m.name} left unverified {claims or m.explanation}")
    return "; ".join(found)


def _base_metric() -> type:
    from deepeval.metrics import BaseMetric

    base: type = BaseMetric
    return base


def __getattr__(name: str) -> Any:
    """``AemMetric`` is made on first use, so importing this module needs no deepeval."""
    if name == "AemMetric":
        cls = _make_metric_class()
        globals()["AemMetric"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _test_case_reports(verdicts: CaseVerdicts, test_case: Any) -> list[SessionReport]:
    """The test case's reports; what AEM cannot read raises deepeval's own error."""
    from deepeval.errors import MismatchedTestCaseInputsError, MissingTestCaseParamsError

    try:
        return verdicts.reports(
            getattr(test_case, "metadata", None),
            getattr(test_case, "input", None),
            getattr(test_case, "actual_output", None),
            getattr(test_case, "retrieval_context", None),
        )
    except TestCaseError as exc:
        kind = MissingTestCaseParamsError if exc.missing else MismatchedTestCaseInputsError
        raise kind(str(exc)) from None


def _case_name(test_case: Any, verdicts: CaseVerdicts) -> str:
    """The test case's name in ``results``: deepeval's ``name``, else its input, else
    ``test case N`` in the order measured."""
    name = getattr(test_case, "name", None) or getattr(test_case, "input", None)
    return str(name) if name else f"test case {len(verdicts.results) + 1}"


class _Results:
    """What an ``AemMetric`` shows of its test cases (needs no deepeval): its own after
    ``measure``, else every test case its copies measured."""

    verdicts: CaseVerdicts
    _own: CaseResult | None = None

    @property
    def results(self) -> dict[str, CaseResult]:
        """Every test case measured by this metric or deepeval's copies of it, by name."""
        return self.verdicts.results

    @property
    def reports(self) -> list[SessionReport]:
        """AEM's reports of the test case measured; for a metric deepeval measured
        through copies (``deepeval.evaluate``), those of every test case."""
        if self._own is not None:
            return self._own.reports
        return [r for result in self.results.values() for r in result.reports]

    @property
    def score_breakdown(self) -> dict[str, float] | None:
        """The pass share per AEM metric, over the same test cases as ``reports``."""
        if self._own is not None:
            return self._own.score_breakdown
        return verdict_summary(self.reports)[1] if self.results else None

    @score_breakdown.setter
    def score_breakdown(self, value: Any) -> None:
        """deepeval's base class sets it; AEM's is read off the results."""


def _make_metric_class() -> type:
    class AemMetric(_Results, _base_metric()):  # type: ignore[misc]
        """AEM's per-turn verdicts as one deepeval metric (see the module doc)."""

        def __init__(
            self,
            config: AemConfig | None = None,
            cases: Mapping[str, Case] | None = None,
            threshold: float = 1.0,
            strict_mode: bool = False,
            async_mode: bool = True,
            include_reason: bool = True,
            verbose_mode: bool = False,
            verdicts: CaseVerdicts | None = None,
        ) -> None:
            self.config = config
            self.cases = cases
            self.threshold = 1.0 if strict_mode else threshold
            self.strict_mode = strict_mode
            self.async_mode = async_mode
            self.include_reason = include_reason
            self.verbose_mode = verbose_mode
            # deepeval copies a metric per test case through __init__: the copies share it.
            self.verdicts = verdicts or CaseVerdicts(config, cases)
            self._own: CaseResult | None = None

        def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
            self.error = None
            try:
                reports = _test_case_reports(self.verdicts, test_case)
            except Exception as exc:
                self.error = str(exc)
                raise
            self._own = self.verdicts.record(_case_name(test_case, self.verdicts), reports)
            self.score = self._own.score
            self.reason = self._own.reason if self.include_reason else None
            self.success = self.is_successful()
            return float(self.score)

        async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
            return await asyncio.to_thread(self.measure, test_case)

        def is_successful(self) -> bool:
            if self.error is not None or self.score is None:
                self.success = False
            else:
                self.success = self.score >= self.threshold
            return bool(self.success)

        @property
        def __name__(self) -> str:
            return METRIC_NAME

    return AemMetric
