"""A session's verdict, and each of its traces', rolled up from its turns' labels.

Why a roll-up at all: backends list traces and sessions, not turns. A user scanning
Phoenix's trace list or sessions tab, or MLflow's traces table, sees nothing of a
span-level annotation until they open the trace; one label per trace and per session,
naming the root-cause turn and metric, tells them which row to open.

Why nothing new is judged here: the label of a session or a trace is read off its turns
by one fixed order: a proven failure (``root_cause``) before an inherited one
(``prior_action_failed``), before a doubt (``suspect``), before ``ok``. A session with
no root cause is never ``root_cause``, whatever its suspects — a suspect stays a place
to look, not a proof.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aem.foundation.model import Label, MetricResult, Outcome, SessionReport, TurnKind, TurnVerdict

# The order a roll-up takes: the first label found among the turns wins.
PRECEDENCE = (Label.ROOT_CAUSE, Label.PRIOR_ACTION_FAILED, Label.SUSPECT)
# A label as a number, for the backends' score columns and charts (a list sorts and a
# chart averages a number, not a word): 1 nothing failed, 0.5 a suspect (nothing proven,
# a place to look), 0 a proven failure, the turn's own or one it inherited.
LABEL_SCORES = {
    str(Label.OK): 1.0,
    str(Label.SUSPECT): 0.5,
    str(Label.PRIOR_ACTION_FAILED): 0.0,
    str(Label.ROOT_CAUSE): 0.0,
}


def label_score(label: str) -> float:
    """The score a backend shows beside ``label`` (:data:`LABEL_SCORES`).

    >>> label_score("ok"), label_score("suspect"), label_score("root_cause")
    (1.0, 0.5, 0.0)
    """
    return LABEL_SCORES[str(label)]


@dataclass(frozen=True, slots=True)
class Rollup:
    """One label over a group of turns, the turn that decided it, and why in words."""

    label: str
    turn: TurnVerdict | None
    explanation: str


def rollup(turns: Sequence[TurnVerdict]) -> Rollup:
    """The label of a group of turns (a session, or one trace of it) and its first
    deciding turn.

    >>> from aem.foundation.model import TurnKind
    >>> ok = TurnVerdict(turn_id="t1", span_ids=["s"], kind=TurnKind.ANSWER, name="plan",
    ...                  label=Label.OK)
    >>> rollup([ok]).label, rollup([ok]).explanation
    ('ok', 'no failure in 1 turn (1 not checked)')
    """
    for label in PRECEDENCE:
        first = _deciding(turns, label)
        if first is not None:
            return Rollup(str(label), first, _explain(label, first, turns))
    plural = "" if len(turns) == 1 else "s"
    text = f"no failure in {len(turns)} turn{plural}"
    unchecked = sum(1 for t in turns if t.unchecked_reason is not None)
    if unchecked:  # "ok" there means nothing was checked, not that it held
        text += f" ({unchecked} not checked)"
    return Rollup(str(Label.OK), None, text)


def _deciding(turns: Sequence[TurnVerdict], label: Label) -> TurnVerdict | None:
    """The turn a roll-up names for ``label``: the first with it; for ``suspect``, the
    last answer that is one (what the user was told), else the first suspect."""
    found = [t for t in turns if t.label is label]
    if label is Label.SUSPECT:
        answers = [t for t in found if t.kind is TurnKind.ANSWER]
        return answers[-1] if answers else (found[0] if found else None)
    return found[0] if found else None


def _explain(label: Label, turn: TurnVerdict, turns: Sequence[TurnVerdict]) -> str:
    """``root cause: turn t3 (search) — tool_choice: why; 2 later turns inherited it``."""
    where = f"turn {turn.turn_id} ({turn.name})"
    if label is Label.ROOT_CAUSE:
        inherited = sum(1 for t in turns if turn.turn_id in t.inherited_from)
        more = sum(1 for t in turns if t.label is Label.ROOT_CAUSE) - 1
        text = f"root cause: {where} — {_first(turn, Outcome.FAIL)}"
        if inherited:
            text += f"; {inherited} later turn{'s' if inherited > 1 else ''} inherited it"
        if more:
            text += f"; {more} more root cause{'s' if more > 1 else ''}"
        return text
    if label is Label.PRIOR_ACTION_FAILED:
        sources = ", ".join(turn.inherited_from) or "an earlier turn"
        return f"inherits a failure: {where} follows root cause {sources}"
    suspects = sum(1 for t in turns if t.label is Label.SUSPECT)
    which = "the answer" if turn.kind is TurnKind.ANSWER else "first"
    return (
        f"nothing proven; {suspects} suspect turn{'s' if suspects > 1 else ''}, {which} "
        f"{where} — {_first(turn, Outcome.UNVERIFIED)}"
    )


def _first(turn: TurnVerdict, outcome: Outcome) -> str:
    """``metric: explanation`` of the turn's first result with ``outcome``."""
    found = next((m for m in turn.metrics if m.outcome is outcome), None)
    return f"{found.name}: {found.explanation}" if found is not None else str(turn.label)


# The order a metric's roll-up over turns takes: a proof of failure first, then a doubt,
# then a check that could not run, then a pass; ``skip`` only when every turn skipped.
OUTCOME_PRECEDENCE = (Outcome.FAIL, Outcome.UNVERIFIED, Outcome.ERROR, Outcome.PASS, Outcome.SKIP)


def metric_rollup(turns: Sequence[TurnVerdict]) -> list[dict[str, str | int]]:
    """Each metric's worst outcome over ``turns`` (in the order metrics first appear), the
    first turn that has it and that turn's explanation: what a backend shows in one column
    per metric for a trace, so a column never reads ``pass`` where a turn failed.

    >>> from aem.foundation.model import MetricResult, TurnKind
    >>> def turn(tid, outcome):
    ...     m = MetricResult(name="m", turn_id=tid, outcome=outcome, explanation=f"{tid} why")
    ...     return TurnVerdict(turn_id=tid, span_ids=["s"], kind=TurnKind.ANSWER, name="a",
    ...                        label=Label.OK, metrics=[m])
    >>> metric_rollup([turn("t1", Outcome.PASS), turn("t2", Outcome.FAIL)])
    [{'name': 'm', 'outcome': 'fail', 'turn_id': 't2', 'explanation': 't2 why', 'turns': 2}]
    """
    results: dict[str, list[tuple[TurnVerdict, MetricResult]]] = {}
    for turn in turns:
        for metric in turn.metrics:
            results.setdefault(metric.name, []).append((turn, metric))
    rolled: list[dict[str, str | int]] = []
    for name, found in results.items():
        turn, worst = min(found, key=lambda tm: OUTCOME_PRECEDENCE.index(tm[1].outcome))
        rolled.append({"name": name, "outcome": str(worst.outcome), "turn_id": turn.turn_id,
                       "explanation": worst.explanation, "turns": len(found)})  # fmt: skip
    return rolled


def session_rollup(report: SessionReport) -> tuple[Rollup, list[tuple[str, Rollup]]]:
    """The session's roll-up and one per trace that holds turns, in turn order."""
    by_trace: dict[str, list[TurnVerdict]] = {}
    for turn in report.turns:
        if turn.trace_id:
            by_trace.setdefault(turn.trace_id, []).append(turn)
    return rollup(report.turns), [(trace, rollup(turns)) for trace, turns in by_trace.items()]
