"""The data AEM passes between stages: spans in, turns, metric results, verdicts out.

Spans are plain dataclasses (millions of them flow through the readers, and pydantic
validation per span would dominate ingest); everything a user or a script sees —
turns, metric results, reports — is pydantic, so the JSON report has one schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, SupportsIndex

from pydantic import BaseModel, Field

REPORT_VERSION = "1.0"


def _restored(cls: type[_Shipped], state: dict[str, Any], fields_set: set[str]) -> _Shipped:
    """A model rebuilt from its pickle as it was, without validating it again."""
    model = cls.__new__(cls)
    object.__setattr__(model, "__dict__", state)
    object.__setattr__(model, "__pydantic_fields_set__", fields_set)
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


class _Shipped(BaseModel):
    """A model pickled as ``(class, fields, fields set)``.

    Why: reports come back from worker processes pickled (``aem audit --workers``,
    ``aem serve``), and pydantic's own pickling builds a state dict per model in Python:
    the reports of 200 generated sessions (25 k models) took 0.46 s to pickle, now 0.1 s.
    A model with extra fields or private attributes (none here) pickles as pydantic does.
    """

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        if self.__pydantic_extra__ is None and self.__pydantic_private__ is None:
            return (_restored, (type(self), self.__dict__, self.__pydantic_fields_set__))
        return super().__reduce_ex__(protocol)


@dataclass(slots=True)
class SpanEvent:
    """An OTel span event (exceptions arrive as events named ``exception``)."""

    name: str
    time_unix_nano: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class SourceRef:
    """Where a record came from, so every input problem can name its file and line."""

    source: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.source}:{self.line}" if self.line is not None else self.source


@dataclass(slots=True)
class SpanRecord:
    """One decoded OTel span, dialect-neutral.

    Ids are lowercase hex strings (32 chars for traces, 16 for spans); attribute
    values are decoded ``AnyValue`` (``kvlistValue`` → dict, ``arrayValue`` → list).
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: int = 0
    start_unix_nano: int = 0
    end_unix_nano: int = 0
    status_code: int = 0  # 0 unset, 1 ok, 2 error
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)
    scope: str = ""
    origin: SourceRef | None = None

    def attr(self, key: str, default: Any = None) -> Any:
        """An attribute from the span, else from its resource."""
        value = self.attributes.get(key)
        if value is None:
            value = self.resource.get(key, default)
        return value


class InputIssue(_Shipped):
    """A problem with input data: reported once, counted, never silently dropped."""

    kind: str
    message: str
    source: str | None = None
    line: int | None = None
    session_id: str | None = None
    span_id: str | None = None
    trace_id: str | None = None
    spans_skipped: int = 0

    @classmethod
    def at_origin(
        cls, kind: str, message: str, origin: SourceRef | None, **extra: Any
    ) -> InputIssue:
        """An issue located where a record came from (file and line, when it had them)."""
        source = origin.source if origin else None
        line = origin.line if origin else None
        return cls(kind=kind, message=message, source=source, line=line, **extra)

    @classmethod
    def at_span(cls, kind: str, message: str, span: SpanRecord, **extra: Any) -> InputIssue:
        """An issue about one span: its ids, and its file and line when it came from one."""
        return cls.at_origin(
            kind, message, span.origin, span_id=span.span_id, trace_id=span.trace_id, **extra
        )

    def where(self) -> str:
        if self.source is None:
            return ""
        return f"{self.source}:{self.line}" if self.line is not None else self.source


class TurnKind(StrEnum):
    REASONING = "reasoning"
    TOOL_CALL = "tool_call"
    RETRIEVAL = "retrieval"
    ANSWER = "answer"
    AGENT = "agent"
    # The session as a whole (span: the root), when the agent left no turn to point at
    # and a verdict about the session (expected calls never made) still needs a place.
    SESSION = "session"


class ToolCall(_Shipped):
    """A tool call as the agent made it and as the tool answered it."""

    call_id: str | None = None
    name: str
    arguments: Any = None
    arguments_raw: str | None = None
    has_result: bool = False
    result: Any = None
    result_raw: str | None = None
    error: str | None = None
    error_type: str | None = None
    executed: bool = False  # a tool span was seen for this call


class Document(_Shipped):
    id: str | None = None
    content: str = ""
    score: float | None = None


class Turn(_Shipped):
    """One decision with an observable result (docs/semantics.md, "Turns")."""

    turn_id: str
    index: int
    kind: TurnKind
    name: str
    span_ids: list[str]
    trace_id: str
    agent: str | None = None
    context: str = ""
    text: str | None = None
    tool_call: ToolCall | None = None
    query: str | None = None
    documents: list[Document] = Field(default_factory=list)
    start_unix_nano: int = 0
    end_unix_nano: int = 0
    # Link keys the collectors fill and aem.graph turns into edges (docs/semantics.md).
    model_span_id: str | None = None
    consumes_call_ids: list[str] = Field(default_factory=list)
    history_from: str | None = None
    delegated_by_span: str | None = None
    returns_to_context: str | None = None
    # What the turn could see when it acted (user input, tool results, documents):
    # truthfulness checks stated values against it.
    seen_inputs: list[str] = Field(default_factory=list)


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"
    # The metric ran and found nothing it can prove wrong, but could not confirm every
    # claim (no judge to decide them): counted and shown, never a root cause, never a
    # failed gate (docs/semantics.md, "Metrics").
    UNVERIFIED = "unverified"


class Evidence(_Shipped):
    span_id: str | None = None
    field: str | None = None
    expected: Any = None
    actual: Any = None
    detail: str | None = None


class UnverifiedClaim(_Shipped):
    """A claim the metric could neither support nor prove wrong, and the passage of the
    context closest to it (``closest``, from ``source``, at ``score``): what a reviewer
    or a judge reads to decide it."""

    claim: str
    closest: str | None = None
    source: str | None = None
    score: float | None = None


class MetricResult(_Shipped):
    """A named sub-metric's verdict on one turn. No overall score exists by design."""

    name: str
    turn_id: str
    outcome: Outcome
    score: float | None = None
    threshold: float | None = None
    explanation: str = ""
    evidence: list[Evidence] = Field(default_factory=list)
    # The claims left unverified (outcome ``unverified``, or a pass or fail that also
    # left some undecided), each with its closest passage.
    unverified: list[UnverifiedClaim] = Field(default_factory=list)

    @classmethod
    def for_turn(
        cls,
        name: str,
        turn: Turn,
        outcome: Outcome,
        explanation: str,
        *,
        score: float | None = None,
        threshold: float | None = None,
        evidence: list[Any] | None = None,
        unverified: list[UnverifiedClaim] | None = None,
    ) -> MetricResult:
        """A result on ``turn``; the one constructor metrics, checks and judges share so
        results look alike (metrics know it as :func:`aem.metrics.base.result`)."""
        return cls(
            name=name,
            turn_id=turn.turn_id,
            outcome=outcome,
            score=score,
            threshold=threshold,
            explanation=explanation,
            evidence=evidence or [],
            unverified=unverified or [],
        )


class Label(StrEnum):
    OK = "ok"
    ROOT_CAUSE = "root_cause"
    PRIOR_ACTION_FAILED = "prior_action_failed"
    # Where to look when nothing is proven: the earliest turn of its branch left
    # ``unverified`` with no failure upstream. Never a root cause, never propagated.
    SUSPECT = "suspect"


class TurnVerdict(_Shipped):
    turn_id: str
    span_ids: list[str]
    trace_id: str = ""
    kind: TurnKind
    name: str
    label: Label
    inherited_from: list[str] = Field(default_factory=list)
    # The agent that acted (a group chat's speaker; for a tool call, the agent that made
    # it) when the trace names one: "which agent failed" without reading the spans.
    agent: str | None = None
    metrics: list[MetricResult] = Field(default_factory=list)

    @property
    def failed_metrics(self) -> list[str]:
        return [m.name for m in self.metrics if m.outcome is Outcome.FAIL]

    @property
    def checked(self) -> bool:
        """Some metric passed, failed or left the turn unverified (it ran and looked);
        skips and errors alone check nothing."""
        return any(
            m.outcome in (Outcome.PASS, Outcome.FAIL, Outcome.UNVERIFIED) for m in self.metrics
        )

    @property
    def unchecked_reason(self) -> str | None:
        """Why nothing checked the turn (``2 skipped``, ``no metric applies``), the words
        the terminal, the report and the sinks share; ``None`` when a metric did check it.
        On the verdict, so whoever shows one needs no more than the model."""
        if self.checked:
            return None
        skipped = sum(1 for m in self.metrics if m.outcome is Outcome.SKIP)
        errors = sum(1 for m in self.metrics if m.outcome is Outcome.ERROR)
        parts = [f"{skipped} skipped"] * bool(skipped) + [f"{errors} error"] * bool(errors)
        return ", ".join(parts) or "no metric applies"


class RootCause(_Shipped):
    turn_id: str
    span_ids: list[str]
    kind: TurnKind
    name: str
    metrics: list[str]
    category: str | None = None
    signature: str
    agent: str | None = None


class TurnEdge(_Shipped):
    """An edge of the turn graph (:mod:`aem.graph`): ``target`` consumed ``source``'s
    output. Both are turn ids of the session; ``kind`` is the graph's reason for the edge
    (``decision``, ``tool_result``, ``history``, ``argument_reuse``, ``delegation``,
    ``subagent_result``, ``retrieval``)."""

    source: str
    target: str
    kind: str


class Inheritance(_Shipped):
    """``target`` passed its own checks but consumed what the failed ``source`` was wrong
    about (:func:`aem.propagation.inherit_along_values`), so it is ``prior_action_failed``:
    ``kind`` ``restates`` (its text states ``value``), ``argument`` (a call passes it) or
    ``relays`` (it received a failed sub-agent's answer); ``reason`` says it in words,
    ``restates 'EUR 20.00' from t6``."""

    source: str
    target: str
    kind: str
    value: str = ""
    reason: str


class SessionReport(_Shipped):
    session_id: str
    session_key: str = "gen_ai.conversation.id"
    session_key_fallback: bool = False
    trace_ids: list[str] = Field(default_factory=list)
    case_found: bool = False
    cut: bool = False
    turns: list[TurnVerdict] = Field(default_factory=list)
    # The turn graph failures propagated along, in turn order of the source, then target.
    edges: list[TurnEdge] = Field(default_factory=list)
    # Turns that inherited a failure along a value they consumed, with the value and why.
    inheritances: list[Inheritance] = Field(default_factory=list)
    root_causes: list[RootCause] = Field(default_factory=list)
    issues: list[InputIssue] = Field(default_factory=list)
    # Turns on which no metric passed or failed (every one skipped): "ok" there means
    # "nothing was checked", which a reader must be able to tell apart from a pass.
    unchecked_turns: int = 0
    # Failures of observation metrics (latency, cost …): reported and ranked like root
    # causes, but never root causes and never propagated.
    observations: list[RootCause] = Field(default_factory=list)
    # Turns labelled ``suspect`` (``metrics``: the ones that left them unverified): shown
    # and ranked apart from root causes, never one. A suspect reached the user (an answer)
    # or changed state (a writing call's argument); ranked: writing calls, then answers.
    suspects: list[RootCause] = Field(default_factory=list)
    # Turns left unverified that reached no user (a reasoning step, a read's argument):
    # doubts on that step, not suspects of the session; counted apart.
    doubts: list[RootCause] = Field(default_factory=list)
    # How the conversation's turns (user message to answer) were bounded: ``conventions``
    # (every one a ``handle_conversation_turn`` span) or ``inferred``, and how many.
    boundaries: Literal["conventions", "inferred"] = "inferred"
    conversation_turns: int = 0
    # Times the conversation was started from its first message (collectors.sessions.rounds):
    # 2 when a re-run was appended under the same conversation id.
    runs: int = 1


class RankedRootCause(_Shipped):
    signature: str
    metric: str
    kind: str
    name: str
    category: str | None = None
    sessions: int
    share: float
    examples: list[dict[str, str]] = Field(default_factory=list)


class CategoryShare(_Shipped):
    """Root causes of one taxonomy category across the run (``category`` null: no rule
    matched). ``share`` is its root causes over all root causes of the run, so the shares
    add up to 1 ("60 % of failures fall in one category"); ``sessions`` counts the sessions
    it hit; ``signatures`` are the ranking's signatures that fall in it, as ranked."""

    category: str | None = None
    root_causes: int
    sessions: int
    share: float
    signatures: list[str] = Field(default_factory=list)


class SkippedSummary(_Shipped):
    total_spans_skipped: int = 0
    by_kind: dict[str, int] = Field(default_factory=dict)


class GateRow(_Shipped):
    """One case of a gate: its type, its verdict and the short reason (``error``: a judge
    error, left out of the score's denominator)."""

    session_id: str
    type: str | None = None
    metric: str
    turn_id: str | None = None
    verdict: Outcome
    explanation: str = ""


class GateResult(_Shipped):
    """A run-level gate (``aem audit --gate groundedness=0.85``): passed / total over the
    cases the metric applied to, against the threshold."""

    metric: str
    threshold: float
    score: float | None = None
    passed: bool
    total: int = 0
    cases_passed: int = 0
    cases_failed: int = 0
    errors: int = 0
    skipped: int = 0
    # Cases whose worst result is ``unverified``: left out of the score like a skip,
    # counted apart so a reader sees how much a judge would still have to decide.
    unverified: int = 0
    # Sessions the metric gave no result at all: not a case of the gate, but counted, so
    # nothing leaves the denominator unsaid.
    not_scored: int = 0
    # Why the skipped cases were skipped (their explanations), with how many.
    skip_reasons: dict[str, int] = Field(default_factory=dict)
    # (errors + unverified + skipped + not scored) / all sessions; None with no session.
    unmeasured_share: float | None = None
    # ``--gate-unmeasured``: the gate fails when the unmeasured share is above it.
    max_unmeasured: float | None = None
    rows: list[GateRow] = Field(default_factory=list)


class AuditReport(_Shipped):
    version: Literal["1.0"] = REPORT_VERSION  # type: ignore[assignment]
    sessions: list[SessionReport] = Field(default_factory=list)
    ranking: list[RankedRootCause] = Field(default_factory=list)
    # The ranking grouped by taxonomy category, largest share first.
    categories: list[CategoryShare] = Field(default_factory=list)
    issues: list[InputIssue] = Field(default_factory=list)
    skipped: SkippedSummary = Field(default_factory=SkippedSummary)
    sessions_with_root_cause: int = 0
    # Sessions with no proven root cause but at least one suspect turn.
    sessions_with_suspect_only: int = 0
    # Sessions with neither a root cause nor a suspect, but a doubt (a value left
    # unverified on a step that reached no user).
    sessions_with_doubts_only: int = 0
    # Suspect turns across sessions, ranked as root causes are (never among them).
    suspects: list[RankedRootCause] = Field(default_factory=list)
    # What an unsupported value was in this run: ``suspect`` (unverified, the default) or
    # ``fail`` (``[verdicts] unsupported = "fail"``).
    unsupported: Literal["suspect", "fail"] = "suspect"
    # Observation failures across sessions, ranked as root causes are (never among them).
    observations: list[RankedRootCause] = Field(default_factory=list)
    spans_read: int = 0
    # The most sessions held open at once while reading: what bounds memory on big inputs.
    peak_open_sessions: int = 0
    # Run-level gates asked for with --gate, in the order given (empty without --gate).
    gates: list[GateResult] = Field(default_factory=list)
    # Claims no metric could confirm or prove wrong, over every result of the run.
    unverified_claims: int = 0
    # Per metric, how many results had each outcome (pass, fail, skip, error, unverified).
    outcomes: dict[str, dict[str, int]] = Field(default_factory=dict)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """Counts, not the report: a report's repr in a failed assertion (pytest prints
        it whole with ``-vv``) ran to thousands of lines and hid the assertion; the JSON
        (``model_dump_json``) has everything."""
        yield "sessions", len(self.sessions)
        yield "turns", sum(len(s.turns) for s in self.sessions)
        yield "sessions_with_root_cause", self.sessions_with_root_cause
        yield "sessions_with_suspect_only", self.sessions_with_suspect_only
        yield "root_causes_ranked", len(self.ranking)
        yield "suspects_ranked", len(self.suspects)
        yield "spans_read", self.spans_read
        yield "issues", len(self.issues)
        yield "gates_failed", sum(1 for gate in self.gates if not gate.passed)


@dataclass(slots=True)
class ClosedSession:
    """The spans of one session once the assembler decided it is complete.

    What every path hands to :class:`aem.evaluate.Evaluator`: audit and serve assemble
    the same way and leave turn building to the evaluator, so a verdict cannot depend on
    how the spans arrived.
    """

    session_id: str
    session_key: str
    fallback: bool
    spans: list[SpanRecord]
    cut: bool = False
    # Why it was cut when assembly cut it (a span limit), reported with the session.
    issues: list[InputIssue] = field(default_factory=list)

    @property
    def trace_ids(self) -> list[str]:
        return sorted({s.trace_id for s in self.spans})


@dataclass
class Session:
    """An assembled agent session: its spans, its turns, and what went wrong reading it.

    The session does not hold its turn graph: :func:`aem.graph.session_graph` builds it
    from the turns' link keys, or from ``stated_edges`` where whoever built the session
    stated the edges instead (:func:`aem.testing.make_session`), and the evaluator hands
    it to the metrics as ``MetricContext.graph``. Why: the model sits below the graph,
    which reads turns; a session holding a ``TurnGraph`` closed a circle between them.
    """

    session_id: str
    session_key: str
    fallback: bool
    spans: list[SpanRecord]
    turns: list[Turn] = field(default_factory=list)
    tool_definitions: dict[str, Any] = field(default_factory=dict)
    # Each declared tool's annotations (MCP ``readOnlyHint``, ``destructiveHint``), when
    # the trace gives them: what the tool says it does (aem.matching.effects).
    tool_annotations: dict[str, Any] = field(default_factory=dict)
    user_inputs: list[str] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)
    cut: bool = False
    # The turn graph's edges as stated by hand (``None``: read them from the link keys).
    stated_edges: list[TurnEdge] | None = None
    # Filled by the collectors' build_session, so the evaluator reads the collectors once:
    # the session as one turn (its earliest root span; None without spans), for a verdict
    # about a session without a single turn, and each span id that carries its trace as a
    # suffix inside the session (two traces shared it) → the id as the trace wrote it.
    session_turn: Turn | None = None
    public_span_ids: dict[str, str] = field(default_factory=dict)
    # How the conversation's turns (user message to answer) were bounded: stated by
    # ``handle_conversation_turn`` spans, or inferred (collectors.sessions.rounds).
    boundaries: Literal["conventions", "inferred"] = "inferred"
    conversation_turns: int = 0
    # Runs of the conversation from its first message in this one session: over 1 when a
    # script re-ran under the same id and both runs were merged (the turns are both's).
    runs: int = 1

    @property
    def trace_ids(self) -> list[str]:
        return sorted({s.trace_id for s in self.spans})
