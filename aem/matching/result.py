"""What tool-set matching found, and the sentence that explains it.

Why so explicit: a bare bool or a ratio is not enough for a user fixing an agent, who
needs to know which call was missing, which was extra, which pair ran out of order, and
which argument was wrong — with the expected and the actual value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aem.compare.result import short
from aem.matching.effects import ToolEffect


@dataclass(slots=True)
class ActualCall:
    """A tool call the agent made: tool name, arguments (dict or JSON string), turn id."""

    name: str
    arguments: Any
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class ArgumentMismatch:
    """One argument that disqualifies a pairing; ``actual`` is None when not passed."""

    argument: str
    expected: Any
    actual: Any
    reason: str


@dataclass(slots=True)
class MatchedPair:
    """An expected call paired with an actual call of the same tool."""

    expected: int
    actual: int
    ok: bool
    argument_mismatches: list[ArgumentMismatch] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class OrderViolation:
    """The case says ``before`` precedes ``after``; the agent made them the other way round."""

    before: int
    after: int
    actual_before: int
    actual_after: int


@dataclass(slots=True)
class ToolSetMatch:
    """The optimal pairing of expected to actual calls, and the verdict on it.

    ``score`` is the share of required expected calls matched with correct arguments
    (partial credit); ``passed`` also needs no failing extra call and no order violation
    (configurable). ``extra`` lists every unpaired call, ``allowed_extra`` those of them
    that pass by ``extra_mode`` (a look-up, under ``writes``), each extra's effect and its
    source in ``extra_effects``. ``not_required``: optional expected calls not made.
    """

    pairs: list[MatchedPair]
    missing: list[int]
    extra: list[int]
    misordered: list[OrderViolation]
    score: float
    threshold: float
    passed: bool
    expected_calls: Sequence[tuple[str, Mapping[str, Any]]] = field(repr=False, default=())
    actual_calls: Sequence[ActualCall] = field(repr=False, default=())
    allowed_extra: list[int] = field(default_factory=list)
    extra_effects: Mapping[int, ToolEffect] = field(repr=False, default_factory=dict)
    not_required: list[int] = field(default_factory=list)
    extra_mode: str = "fail"

    @property
    def wrong_arguments(self) -> list[MatchedPair]:
        return [p for p in self.pairs if not p.ok]

    def _expected(self, i: int) -> str:
        name, args = self.expected_calls[i]
        inner = ", ".join(f"{k}={short(v, 40)}" for k, v in args.items())
        return f"expected #{i} {name}({inner})"

    def _actual(self, j: int) -> str:
        call = self.actual_calls[j]
        args = call.arguments if isinstance(call.arguments, Mapping) else {}
        inner = ", ".join(f"{k}={short(v, 40)}" for k, v in args.items())
        where = f" in turn {call.ref}" if call.ref else ""
        return f"actual #{j} {call.name}({inner}){where}"

    def _allowed(self, j: int) -> str:
        if j not in self.allowed_extra:
            return ""
        effect = self.extra_effects.get(j)
        why = f" ({effect.why})" if effect is not None else ""
        kind = "a look-up" if effect is not None and effect.reads else "any extra call"
        return f"; allowed: {kind}{why}, extra_calls = {self.extra_mode!r}"

    def explanation(self) -> str:
        """One line per finding: missing, extra, misordered, wrong argument; or all matched.

        >>> from aem.matching import ActualCall, match_tool_calls
        >>> exp = [{"name": "f", "arguments": {"a": 1}}]
        >>> m = match_tool_calls(exp, [ActualCall("f", {"a": 2})])
        >>> print(m.explanation())  # doctest: +ELLIPSIS
        FAIL 0/1 expected calls matched (score 0.00, threshold 1.00)
        wrong argument: expected #0 f(a=1) ~ actual #0 f(a=2): a: expected 1, got 2 — 1 != 2 ...
        """
        ok = sum(p.ok for p in self.pairs)
        head = "PASS" if self.passed else "FAIL"
        lines = [
            f"{head} {ok}/{len(self.expected_calls)} expected calls matched "
            f"(score {self.score:.2f}, threshold {self.threshold:.2f})"
        ]
        for i in self.missing:
            lines.append(f"missing: {self._expected(i)} was never called")
        for i in self.not_required:
            lines.append(f"not required: {self._expected(i)} was not called (optional)")
        for j in self.extra:
            lines.append(f"extra: {self._actual(j)} matches no expected call{self._allowed(j)}")
        for v in self.misordered:
            lines.append(
                f"misordered: {self._expected(v.before)} must come before "
                f"{self._expected(v.after)}, but was made at position {v.actual_before} "
                f"after position {v.actual_after}"
            )
        for p in self.wrong_arguments:
            detail = "; ".join(
                f"{m.argument}: expected {short(m.expected, 40)}, got {short(m.actual, 40)} "
                f"— {m.reason}"
                for m in p.argument_mismatches
            )
            lines.append(
                f"wrong argument: {self._expected(p.expected)} ~ {self._actual(p.actual)}: {detail}"
            )
        return "\n".join(lines)
