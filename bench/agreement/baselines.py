"""Trivial baselines: what a rule with no model of the session would score.

Why: a figure means little alone. If "blame the member who talked most" names the
labelled agent as often as AEM does, AEM's agent figure measures nothing; the baselines
run on the same items and halves as AEM, so each row has its floor beside it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bench.agreement.otlp import SpanView

MESSAGE, CODE_RUN, OTHER = "message", "code_run", "other"
_EXIT = re.compile(r"exit\s*code:?\s*(-?\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
RESULT, TOOL_NAME = "gen_ai.tool.call.result", "gen_ai.tool.name"


@dataclass(frozen=True)
class Step:
    """One history step of a multi-agent session: who spoke, and what kind of step."""

    index: int
    speaker: str
    kind: str = MESSAGE  # MESSAGE, CODE_RUN (a terminal's execution) or OTHER (the human)
    failed: bool = False  # a code run that errored or exited non-zero


@dataclass(frozen=True)
class Guess:
    """The member and step a method blames; ``None`` when it names nothing."""

    agent: str | None
    step: int | None


def run_failed(error: str | None, result: str) -> bool:
    """A code run failed: its span has an error status, or its output names a non-zero
    exit code."""
    if error is not None:
        return True
    found = _EXIT.search(result or "")
    return bool(found and int(found.group(1)) != 0)


def most_messages(steps: Sequence[Step]) -> Guess:
    """The member with the most messages (ties: the one who spoke first), at its first."""
    counts = Counter(s.speaker for s in steps if s.kind == MESSAGE)
    if not counts:
        return Guess(None, None)
    most = max(counts.values())
    first = next(s for s in steps if s.kind == MESSAGE and counts[s.speaker] == most)
    return Guess(first.speaker, first.index)


def first_failed_code_run(steps: Sequence[Step]) -> Guess:
    """The first failed code run, blamed on the member whose message held the code (the
    message just before it) and on that message's step."""
    for position, step in enumerate(steps):
        if step.kind == CODE_RUN and step.failed:
            author = next((s for s in reversed(steps[:position]) if s.kind == MESSAGE), None)
            return Guess(author.speaker, author.index) if author else Guess(None, step.index)
    return Guess(None, None)


def last_speaker(steps: Sequence[Step]) -> Guess:
    """The member who sent the last message, at that step."""
    last = next((s for s in reversed(steps) if s.kind == MESSAGE), None)
    return Guess(last.speaker, last.index) if last else Guess(None, None)


def random_chance(steps: Sequence[Step]) -> tuple[float, float]:
    """A uniform guess's chance of the right member and of the right step."""
    members = {s.speaker for s in steps if s.kind != OTHER}
    return (1 / len(members) if members else 0.0, 1 / len(steps) if steps else 0.0)


def numbers(text: str) -> set[str]:
    """The digit groups of a text, thousands separators dropped ("1,200" -> "1200")."""
    found = set()
    for raw in _NUMBER.findall(text):
        plain = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", raw) else raw
        found.add(plain)
    return found


def unseen_number(answer: str, passage: str) -> bool:
    """The answer states a number that does not occur in the passage."""
    return bool(numbers(answer) - numbers(passage))


def tool_errored(spans: Sequence[SpanView]) -> bool:
    """Some tool call of the session errored (an error status, or a result that starts
    with "Error")."""
    return any(
        s.operation == "execute_tool"
        and (s.error is not None or str(s.attributes.get(RESULT, "")).startswith("Error"))
        for s in spans
    )


def first_call_of(spans: Sequence[SpanView], tools: Sequence[str]) -> str | None:
    """The span id of the first call of one of ``tools`` (the state-changing ones)."""
    wanted = set(tools)
    return next(
        (
            s.span_id
            for s in spans
            if s.operation == "execute_tool" and s.attributes.get(TOOL_NAME) in wanted
        ),
        None,
    )
