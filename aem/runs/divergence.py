"""Two runs of one task: where did the second run first go a different way?

Why not :mod:`aem.runs.diff`: that compares verdicts (which root causes came and went). A team
that re-runs a task after changing a prompt asks a question about *behaviour*: the first
turn at which the new run did something the old one did not. Everything after that turn
is downstream of the divergence, whatever its verdicts say.

How turns are matched, and why:

* a session is cut into **steps**: every turn that is not a tool call is a step of its
  own; consecutive tool calls made by one decision (the same model span, or no model span
  named) are one step, because a model that issues calls together does not order them;
* two steps match when their kinds match, a sub-agent step names the same agent, and a
  block of calls matches as a multiset under :func:`aem.matching.match_tool_calls` (the
  same tools, arguments compared as AEM compares values: ``"ord 42"`` is ``ORD-0042``).
  A retrieval is compared as a call with its query as the one argument;
* model text is never compared: two runs of one model word the same decision
  differently, and a divergence must be something the agent *did*.

Sessions of the two runs are paired by session id, else by the first user message
(whitespace and case folded): "the same task" without a case file.

Why a block is matched in two passes: matching calls value by value compares every call
of one run's block with every call of the other's, so one model turn with 3,000 parallel
calls took minutes and gigabytes. Calls identical to the letter (name and arguments,
canonical JSON) are paired first by hashing, in linear time; only what is left is
compared as values, tool by tool (calls of two tools never match), and a tool with more
than :data:`MAX_VALUE_MATCHED` calls left on a side is not compared further: the first
of them is the divergence, with a reason that says so.

>>> from aem.testing import make_session, make_tool_call, make_turn
>>> before = make_session(make_tool_call("get", {"id": 1}), make_turn("answer", text="ok"))
>>> after = make_session(make_tool_call("get", {"id": 2}), make_turn("answer", text="ok"))
>>> found = diverge_sessions(before, after)
>>> found.first.after_turn_id, found.downstream
('t1', ['t2'])
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx
from pydantic import BaseModel, Field, computed_field

from aem.compare.structured import maybe_json
from aem.foundation.model import Session, Turn, TurnKind
from aem.graph import session_graph
from aem.matching import ActualCall, MatchSettings, ToolSetMatch, match_tool_calls

# Every call counts, in any order: a divergence is any difference in what was called.
_EXACT = MatchSettings(pass_threshold=1.0, extra_calls_fail=True)
# Calls of one tool left on a side, after identical ones were paired, that are still
# compared value by value (a pairing that costs the product of the two sides).
MAX_VALUE_MATCHED = 200


@dataclass(frozen=True, slots=True)
class Step:
    """One decision of a run: a single turn, or the tool calls one model turn made."""

    kind: TurnKind
    turns: tuple[Turn, ...]


class DivergentTurn(BaseModel):
    """Where the runs part: the step, the turn of each run there, and why they differ."""

    step: int = Field(
        description="the step at which the runs part, counted from 1 (the first step is 1), "
        "as the terminal table and the compare page number it",
        ge=1,
    )
    before_turn_id: str | None
    after_turn_id: str | None
    reason: str


class SessionDivergence(BaseModel):
    """One task run twice: the steps both runs took alike, then the first difference."""

    before_session: str
    after_session: str
    paired_by: Literal["session_id", "first_user_message"]
    same_steps: int = Field(description="steps both runs took alike before they parted")
    first: DivergentTurn | None = None
    downstream: list[str] = Field(
        default_factory=list,
        description="the later run's turns that consumed the divergent turn's output, "
        "directly or through other turns (edges of the turn graph), in turn order",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def diverged(self) -> bool:
        return self.first is not None


class RunDivergence(BaseModel):
    """Every paired session of two runs, and the sessions only one run has."""

    sessions: list[SessionDivergence] = Field(default_factory=list)
    only_before: list[str] = Field(default_factory=list)
    only_after: list[str] = Field(default_factory=list)

    @property
    def diverged(self) -> list[SessionDivergence]:
        return [s for s in self.sessions if s.diverged]


def steps(turns: Sequence[Turn]) -> list[Step]:
    """The run as decisions: consecutive calls of one model turn form one step.

    >>> from aem.testing import make_session, make_tool_call, make_turn
    >>> s = make_session(make_tool_call("a"), make_tool_call("b"), make_turn("answer"))
    >>> [(st.kind.value, len(st.turns)) for st in steps(s.turns)]
    [('tool_call', 2), ('answer', 1)]
    """
    groups: list[list[Turn]] = []
    for turn in sorted(turns, key=lambda t: t.index):
        last = groups[-1][-1] if groups else None
        if (
            turn.kind is TurnKind.TOOL_CALL
            and last is not None
            and last.kind is TurnKind.TOOL_CALL
            and last.model_span_id == turn.model_span_id
        ):
            groups[-1].append(turn)  # one list grown, not a tuple copied per call
        else:
            groups.append([turn])
    return [Step(group[0].kind, tuple(group)) for group in groups]


def _call(turn: Turn) -> tuple[str, Mapping[str, Any]]:
    """A turn as a call for matching: a tool call, or a retrieval with its query."""
    if turn.tool_call is not None:
        arguments = maybe_json(turn.tool_call.arguments)
        if not isinstance(arguments, Mapping):
            arguments = {} if arguments in (None, "") else {"value": arguments}
        return turn.tool_call.name, arguments
    return turn.name, {"query": turn.query or ""}


def _match(before: Step, after: Step) -> ToolSetMatch:
    expected = [{"name": n, "arguments": a} for n, a in map(_call, before.turns)]
    actual = [ActualCall(*_call(t), ref=t.turn_id) for t in after.turns]
    return match_tool_calls(expected, actual, settings=_EXACT)


def _call_text(turn: Turn) -> str:
    name, arguments = _call(turn)
    inner = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return f"{name}({inner})"


def _key(turn: Turn) -> str:
    """A call to the letter: its name and arguments as canonical JSON."""
    name, arguments = _call(turn)
    return json.dumps([name, arguments], sort_keys=True, default=str, ensure_ascii=False)


def _unpaired(before: Step, after: Step) -> tuple[list[Turn], list[Turn]]:
    """Each side's calls left once calls identical to the letter are paired (hashing:
    linear in the block), in their order."""
    waiting: dict[str, deque[int]] = defaultdict(deque)
    for i, turn in enumerate(before.turns):
        waiting[_key(turn)].append(i)
    paired: set[int] = set()
    rest_after: list[Turn] = []
    for turn in after.turns:
        same = waiting.get(_key(turn))
        if same:
            paired.add(same.popleft())
        else:
            rest_after.append(turn)
    rest_before = [t for i, t in enumerate(before.turns) if i not in paired]
    return rest_before, rest_after


def _block_difference(before: Step, after: Step, step: int) -> DivergentTurn | None:
    """The first turn of ``after`` at which its calls differ from ``before``'s, or None."""
    old, new = _unpaired(before, after)
    if not old and not new:
        return None
    by_tool: dict[str, tuple[list[Turn], list[Turn]]] = defaultdict(lambda: ([], []))
    for turn in old:
        by_tool[_call(turn)[0]][0].append(turn)
    for turn in new:
        by_tool[_call(turn)[0]][1].append(turn)
    found = [_tool_difference(b, a, step, after) for b, a in by_tool.values()]
    differences = [d for d in found if d is not None]
    if not differences:
        return None
    order = {t.turn_id: j for j, t in enumerate(after.turns)}
    return min(differences, key=lambda d: order.get(d.after_turn_id or "", len(order)))


def _tool_difference(
    old: list[Turn], new: list[Turn], step: int, block: Step
) -> DivergentTurn | None:
    """The first divergence among one tool's calls left unpaired (value-matched when the
    block is small enough); a call only the earlier run made is placed at the end of the
    later run's ``block``."""
    if len(old) > MAX_VALUE_MATCHED or len(new) > MAX_VALUE_MATCHED:
        turn = (new or old)[0]
        return DivergentTurn(
            step=step,
            before_turn_id=old[0].turn_id if old else None,
            after_turn_id=(new or block.turns)[0].turn_id,
            reason=f"{_call_text(turn)}: {len(old):,} call(s) before and {len(new):,} now of "
            "this tool differ to the letter, more than "
            f"{MAX_VALUE_MATCHED:,} to compare value by value (MAX_VALUE_MATCHED)",
        )
    found = _value_difference(
        Step(TurnKind.TOOL_CALL, tuple(old)), Step(TurnKind.TOOL_CALL, tuple(new)), step
    )
    if found is not None and found.after_turn_id is None:
        found.after_turn_id = block.turns[-1].turn_id
    return found


def _value_difference(before: Step, after: Step, step: int) -> DivergentTurn | None:
    """The first turn of ``after`` whose call matches none of ``before``'s as values."""
    found = _match(before, after)
    if found.passed:
        return None
    wrong = {p.actual: p for p in found.pairs if not p.ok}
    for j, turn in enumerate(after.turns):
        if j in wrong:
            pair = wrong[j]
            mismatch = "; ".join(
                f"{m.argument}: {m.expected!r} before, {m.actual!r} now"
                for m in pair.argument_mismatches
            )
            return DivergentTurn(
                step=step,
                before_turn_id=before.turns[pair.expected].turn_id,
                after_turn_id=turn.turn_id,
                reason=f"{_call_text(turn)} called with other arguments ({mismatch})",
            )
        if j in found.extra:
            return DivergentTurn(
                step=step,
                before_turn_id=None,
                after_turn_id=turn.turn_id,
                reason=f"{_call_text(turn)} is a call the earlier run did not make here",
            )
    skipped = before.turns[found.missing[0]]
    return DivergentTurn(
        step=step,
        before_turn_id=skipped.turn_id,
        after_turn_id=after.turns[-1].turn_id if after.turns else None,
        reason=f"{_call_text(skipped)} was not called this time",
    )


def _step_difference(before: Step, after: Step, step: int) -> DivergentTurn | None:
    b, a = before.turns[0], after.turns[0]
    if before.kind is not after.kind:
        return DivergentTurn(
            step=step,
            before_turn_id=b.turn_id,
            after_turn_id=a.turn_id,
            reason=f"a {a.kind.value} turn ({a.name}) where the earlier run had a "
            f"{b.kind.value} turn ({b.name})",
        )
    if before.kind in (TurnKind.TOOL_CALL, TurnKind.RETRIEVAL):
        return _block_difference(before, after, step)
    if before.kind is TurnKind.AGENT and (b.agent or b.name) != (a.agent or a.name):
        return DivergentTurn(
            step=step,
            before_turn_id=b.turn_id,
            after_turn_id=a.turn_id,
            reason=f"handed to agent {a.agent or a.name!r}, earlier to {b.agent or b.name!r}",
        )
    return None


def _ran_out(longer: Sequence[Step], same: int, *, after_is_longer: bool) -> DivergentTurn:
    """The divergence when one run ended after ``same`` steps alike: step ``same + 1``."""
    step = same + 1
    turn = longer[same].turns[0]
    if after_is_longer:
        return DivergentTurn(
            step=step,
            before_turn_id=None,
            after_turn_id=turn.turn_id,
            reason=f"the earlier run had ended; this one went on with {turn.kind.value} "
            f"({turn.name})",
        )
    return DivergentTurn(
        step=step,
        before_turn_id=turn.turn_id,
        after_turn_id=None,
        reason=f"this run ended where the earlier one went on with {turn.kind.value} ({turn.name})",
    )


def diverge_sessions(
    before: Session,
    after: Session,
    paired_by: Literal["session_id", "first_user_message"] = "session_id",
) -> SessionDivergence:
    """The first step at which ``after`` did something ``before`` did not."""
    old, new = steps(before.turns), steps(after.turns)
    first: DivergentTurn | None = None
    same = 0
    for step, (b, a) in enumerate(zip(old, new, strict=False), start=1):
        first = _step_difference(b, a, step)
        if first is not None:
            break
        same += 1
    if first is None and len(old) != len(new):
        longer = new if len(new) > len(old) else old
        first = _ran_out(longer, same, after_is_longer=len(new) > len(old))
    downstream = _downstream(after, first) if first is not None else []
    return SessionDivergence(
        before_session=before.session_id,
        after_session=after.session_id,
        paired_by=paired_by,
        same_steps=same,
        first=first,
        downstream=downstream,
    )


def _downstream(after: Session, first: DivergentTurn) -> list[str]:
    """The later run's turns that consumed the divergent turn's output, directly or through
    other turns: its descendants in the turn graph (:func:`aem.graph.session_graph`), not
    every turn that came later. A call made in the same decision (a sibling), or a
    sub-agent's branch that never read it, is not downstream; a run that ended where the
    earlier went on has nothing downstream."""
    if first.after_turn_id is None:
        return []
    graph = session_graph(after)
    if first.after_turn_id not in graph:
        return []
    below = nx.descendants(graph.nx, first.after_turn_id)
    return [t.turn_id for t in sorted(after.turns, key=lambda t: t.index) if t.turn_id in below]


def task_key(session: Session) -> str | None:
    """The first user message, whitespace and case folded: "the same task" across runs."""
    for text in session.user_inputs:
        folded = " ".join(text.split()).casefold()
        if folded:
            return folded
    return None


def diverge_runs(before: Iterable[Session], after: Iterable[Session]) -> RunDivergence:
    """Pair the sessions of two runs (session id, else first user message) and diverge each.

    A first user message shared by several sessions of one run pairs none of them: which
    of them is "the same task" would be a guess.
    """
    old = {s.session_id: s for s in before}
    new = {s.session_id: s for s in after}
    pairs: list[tuple[Session, Session, Literal["session_id", "first_user_message"]]] = [
        (old[k], new[k], "session_id") for k in sorted(old.keys() & new.keys())
    ]
    rest_old = _unique_by_task([s for k, s in old.items() if k not in new])
    rest_new = _unique_by_task([s for k, s in new.items() if k not in old])
    for key in sorted(rest_old.keys() & rest_new.keys()):
        pairs.append((rest_old[key], rest_new[key], "first_user_message"))
    paired_old = {b.session_id for b, _, _ in pairs}
    paired_new = {a.session_id for _, a, _ in pairs}
    return RunDivergence(
        sessions=[diverge_sessions(b, a, by) for b, a, by in pairs],
        only_before=sorted(old.keys() - paired_old),
        only_after=sorted(new.keys() - paired_new),
    )


def _unique_by_task(sessions: Sequence[Session]) -> dict[str, Session]:
    by_task: dict[str, list[Session]] = {}
    for session in sessions:
        key = task_key(session)
        if key is not None:
            by_task.setdefault(key, []).append(session)
    return {k: group[0] for k, group in by_task.items() if len(group) == 1}
