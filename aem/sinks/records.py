"""Verdicts reshaped into delivery items: one per metric result, one per turn.

Why a flat item: the outbox stores and retries each item on its own, so each needs a
stable idempotency key (session + turn + metric) and a self-contained JSON payload that
any sink can turn into its wire format without the report in memory. Nothing here judges:
the verdict is the report's, this module only copies fields.

Why a turn item names its unverified metrics: a ``suspect`` turn failed nothing, so its
``failed_metrics`` are empty; without ``unverified_metrics`` a backend would show the
label with no hint of where to look (:func:`label_explanation` says it in words).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from aem.foundation.model import Label, Outcome, SessionReport, TurnVerdict
from aem.foundation.provenance import (
    EVALUATOR_ID,
    EVALUATOR_TYPE,
    EVALUATOR_VERSION,
    aem_version,
    run_attributes,
)
from aem.sinks.rollup import Rollup, metric_rollup, session_rollup

ItemKind = Literal["metric", "turn", "session"]
# What a sink receives when it does not say (``item_kinds``): the kinds that existed before
# session items did, so a sink written then never meets an item it cannot read.
SPAN_ITEM_KINDS: frozenset[str] = frozenset({"metric", "turn"})
ALL_ITEM_KINDS: frozenset[str] = frozenset({"metric", "turn", "session"})

# The metric name a per-turn item uses in its key: "aem.label" never collides with a
# metric name because metric names carry no "aem." prefix.
TURN_KEY_SUFFIX = "aem.label"
# The session's item: its own key under the session, with no turn.
SESSION_KEY_SUFFIX = "aem.session"


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """One deliverable unit: ``key`` is unique per session, turn and metric."""

    key: str
    kind: ItemKind
    payload: dict[str, Any]


# Between the parts of a key: a control character that ids and metric names do not use.
KEY_SEPARATOR = "\x1f"


def item_key(session_id: str, turn_id: str, metric: str) -> str:
    return KEY_SEPARATOR.join((session_id, turn_id, metric))


# The first verdict of a session is revision 0; its keys carry no revision, as before
# revisions existed, so what was delivered then keeps its key.
FIRST_REVISION = 0


def revised(items: Sequence[OutboxItem], revision: int) -> list[OutboxItem]:
    """``items`` of a session evaluated again (``aem serve``: its conversation id came back
    after its verdict was out) as revision ``revision``: each key gains ``r<N>`` so no
    sink takes it for the earlier verdict, and each payload says ``revision: N``.

    >>> item = OutboxItem(item_key("s", "t1", "m"), "metric", {"revision": 0})
    >>> [(i.key.split(KEY_SEPARATOR), i.payload) for i in revised([item], 2)]
    [(['s', 't1', 'm', 'r2'], {'revision': 2})]
    """
    if revision == FIRST_REVISION:
        return list(items)
    return [
        OutboxItem(
            key=f"{item.key}{KEY_SEPARATOR}r{revision}",
            kind=item.kind,
            payload={**item.payload, "revision": revision},
        )
        for item in items
    ]


def verdict_items(
    report: SessionReport,
    *,
    completed_at: float,
    provenance: Mapping[str, Mapping[str, Any]] | None = None,
    run_id: str | None = None,
) -> list[OutboxItem]:
    """Every metric result and every turn label of a report, keyed for exactly-once delivery.

    ``provenance`` (:func:`aem.foundation.provenance.provenance_by_metric`) gives each metric's
    items
    the evaluator that produced them; every item names the case (a session with a case is
    that case) and ``run_id`` when there is one. A turn's label is AEM's own rule.

    ``completed_at`` (wall clock) is when the session was found complete; sinks may pass it
    on so the delay from completion to delivery can be measured. ``span_turns`` counts the
    turns on the item's span: a model span whose text and tool calls are all turns (no tool
    span of their own) is each one's span, and a sink keyed on the span alone would keep
    only the last turn's verdict.
    """
    first_span = {t.turn_id: (t.span_ids[0] if t.span_ids else "") for t in report.turns}
    turns_on_span = Counter(first_span.values())
    common = {
        "session_id": report.session_id,
        "session_key": report.session_key,
        "session_key_fallback": report.session_key_fallback,
        "cut": report.cut,
        "completed_at": completed_at,
        "revision": FIRST_REVISION,
    }
    belongs = run_attributes(report.session_id if report.case_found else None, run_id)
    label_by = {EVALUATOR_ID: "aem/label", EVALUATOR_VERSION: aem_version(),
                EVALUATOR_TYPE: "rule", **belongs}  # fmt: skip
    sources = {name: {**attrs, **belongs} for name, attrs in (provenance or {}).items()}
    items: list[OutboxItem] = []
    for turn in report.turns:
        span_id = first_span[turn.turn_id]
        if not span_id or not turn.trace_id:
            continue  # nothing to attach a verdict to; the JSON report still has it
        where = {
            **common,
            "turn_id": turn.turn_id,
            "turn_name": turn.name,
            "turn_kind": str(turn.kind),
            "trace_id": turn.trace_id,
            "span_id": span_id,
            "span_turns": turns_on_span[span_id],
        }
        items += _metric_items(report.session_id, turn, where, sources, belongs)
        root_spans = [first_span.get(t, "") for t in turn.inherited_from]
        if str(turn.label) == "root_cause":
            root_spans = [span_id]
        items.append(_turn_item(report.session_id, turn, where, root_spans, label_by))
    session = _session_item(report, common, first_span, belongs)
    return items if session is None else [*items, session]


def _session_item(
    report: SessionReport,
    common: dict[str, Any],
    first_span: Mapping[str, str],
    belongs: Mapping[str, Any],
) -> OutboxItem | None:
    """The session's verdict and each trace's (:mod:`aem.sinks.rollup`), for the lists a
    backend shows; None when no turn sits on a trace (nothing to attach it to)."""
    verdict, traces = session_rollup(report)
    if not traces:
        return None
    root = verdict.turn if verdict.label == Label.ROOT_CAUSE else None
    return OutboxItem(
        key=item_key(report.session_id, "", SESSION_KEY_SUFFIX),
        kind="session",
        payload={
            **common,
            "label": verdict.label,
            "explanation": verdict.explanation,
            "turns": len(report.turns),
            "root_cause": None if root is None else _where(root, first_span),
            "traces": [
                {
                    "trace_id": trace,
                    "label": r.label,
                    "explanation": _in_session(r, trace, verdict),
                    # each metric's worst outcome on the trace: one value per metric column
                    "metrics": metric_rollup([t for t in report.turns if t.trace_id == trace]),
                }
                for trace, r in traces
            ],
            "attributes": {
                EVALUATOR_ID: "aem/session",
                EVALUATOR_VERSION: aem_version(),
                EVALUATOR_TYPE: "rule",
                **belongs,
            },
        },
    )


def _in_session(trace: Rollup, trace_id: str, session: Rollup) -> str:
    """A trace's explanation, naming the session's root cause when another trace holds it
    (a backend shows the trace's line alone, and it would not say where to look)."""
    root = session.turn if session.label == Label.ROOT_CAUSE else None
    if root is None or root.trace_id == trace_id:
        return trace.explanation
    return f"{trace.explanation}; session: {session.explanation} (trace {root.trace_id})"


def _where(turn: TurnVerdict, first_span: Mapping[str, str]) -> dict[str, Any]:
    """The root-cause turn as a session item names it: enough to open it in a backend."""
    return {
        "turn_id": turn.turn_id,
        "turn_name": turn.name,
        "trace_id": turn.trace_id,
        "span_id": first_span.get(turn.turn_id, ""),
        "metrics": turn.failed_metrics,
    }


def _turn_item(
    session_id: str,
    turn: TurnVerdict,
    where: dict[str, Any],
    root_spans: list[str],
    label_by: dict[str, Any],
) -> OutboxItem:
    """The turn's label item: what it inherits and from where, what failed or is in doubt."""
    return OutboxItem(
        key=item_key(session_id, turn.turn_id, TURN_KEY_SUFFIX),
        kind="turn",
        payload={
            **where,
            "label": str(turn.label),
            "inherited_from": list(turn.inherited_from),
            "root_cause_span_ids": [s for s in root_spans if s],
            "failed_metrics": turn.failed_metrics,
            "unverified_metrics": [m.name for m in turn.metrics if m.outcome is Outcome.UNVERIFIED],
            "explanation": turn_explanation(turn),
            "attributes": label_by,
        },
    )


def turn_explanation(turn: TurnVerdict) -> str:
    """The line ``aem audit`` prints under a turn, for a sink that shows one line per
    turn: its first failure (``metric: why``), else what left it unverified, else, when
    every metric skipped, ``not checked (N skipped)`` — never a bare ``ok``.

    >>> from aem.foundation.model import TurnKind
    >>> turn = TurnVerdict(turn_id="t1", span_ids=["s"], kind=TurnKind.RETRIEVAL,
    ...                    name="kb", label=Label.OK, metrics=[])
    >>> turn_explanation(turn)
    'not checked (no metric applies)'
    """
    for outcome in (Outcome.FAIL, Outcome.UNVERIFIED):
        found = next((m for m in turn.metrics if m.outcome is outcome), None)
        if found is not None:
            return f"{found.name}: {found.explanation}"
    why = turn.unchecked_reason
    return "" if why is None else f"not checked ({why})"


def label_explanation(payload: dict[str, Any]) -> str:
    """The words a backend shows beside a turn's label: which metrics failed, or, for a
    ``suspect``, that nothing is proven and which metrics left it unverified (so neither
    reads as the other, nor a suspect as a plain "no metric failed")."""
    failed = ", ".join(payload.get("failed_metrics") or [])
    if payload.get("label") == Label.SUSPECT:
        unverified = ", ".join(payload.get("unverified_metrics") or []) or "a metric"
        return (
            f"suspect: nothing proven; {unverified} left unverified a value the trace neither "
            "supports nor contradicts: look here first"
        )
    return f"failed: {failed}" if failed else "no metric failed"


def _metric_items(
    session_id: str,
    turn: TurnVerdict,
    where: dict[str, Any],
    sources: Mapping[str, Mapping[str, Any]],
    belongs: Mapping[str, Any],
) -> list[OutboxItem]:
    """One item per metric result of ``turn``; ``where`` locates the turn, ``sources``
    names each metric's evaluator (``belongs`` alone when it is not known)."""
    return [
        OutboxItem(
            key=item_key(session_id, turn.turn_id, metric.name),
            kind="metric",
            payload={
                **where,
                "name": metric.name,
                "outcome": str(metric.outcome),
                "score": metric.score,
                "threshold": metric.threshold,
                "explanation": metric.explanation,
                "attributes": dict(sources.get(metric.name, belongs)),
            },
        )
        for metric in turn.metrics
    ]
