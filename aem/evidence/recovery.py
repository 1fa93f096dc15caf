"""When a failed tool call counts as recovered: one rule for every metric that asks.

Why one place: ``tool_execution`` (is a failed call a root cause?) and the
claimed-success check of ``correctness.truthfulness`` (may an answer report the action
as done?) ask the same question; two rules let one metric call a failure recovered
while the other does not, so the report contradicted itself.

Recovered means the same intent succeeded later: the same tool (names compared by
:func:`aem.matching.names.tool_key`, so ``cd<|channel|>commentary`` retries ``cd``), in
the same agent context, with equivalent arguments by AEM's comparison — except the
arguments the error message names (by key or by value), which were what the retry had
to change. A failed quote from carrier A is not recovered by a quote from carrier B.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from aem.compare.structured import maybe_json
from aem.matching.cost import ArgumentJudge, CallRules, argument_mismatches
from aem.matching.names import tool_key
from aem.matching.settings import MatchSettings
from aem.model import Turn

if TYPE_CHECKING:
    from aem.compare import SemanticComparator


def recovered_by(
    turn: Turn, later: Sequence[Turn], comparator: SemanticComparator, settings: MatchSettings
) -> Turn | None:
    """The first turn of ``later`` that recovers ``turn``'s failed call, if any: a
    successful, executed call of the same tool in the same context with equivalent
    arguments (those the error names excepted)."""
    failed = turn.tool_call
    assert failed is not None
    key = tool_key(failed.name)
    wanted = _arguments(failed.arguments)
    rules = CallRules(
        {k: v for k, v in wanted.items() if not _named_in_error(k, v, failed.error or "")}
    )
    judge = ArgumentJudge(comparator, settings)
    for candidate in later:
        call = candidate.tool_call
        if (
            call is not None
            and candidate.index > turn.index
            and candidate.context == turn.context
            and not call.error
            and call.executed
            and tool_key(call.name) == key
            and not argument_mismatches(rules, _arguments(call.arguments), judge, True)
        ):
            return candidate
    return None


def _arguments(value: object) -> Mapping[str, Any]:
    """A call's arguments as a mapping (JSON text parsed; anything else is none)."""
    parsed = maybe_json(value)
    return parsed if isinstance(parsed, Mapping) else {}


def _named_in_error(key: str, value: Any, error: str) -> bool:
    """The error message says this argument was wrong: it names the argument (the key,
    or a word of it: "payment amount does not add up" names ``payment_methods``; "no
    seats on flight X" names ``flights``) or quotes one of its values, nested ones too.

    A generic failure names nothing, so a retry that changes any argument is another
    intent: a timed-out quote from carrier A is not recovered by a quote from carrier B.

    >>> _named_in_error("date", "2026-02-30", "date 2026-02-30 is not a valid date")
    True
    >>> _named_in_error("carrier", "ACME", "upstream timed out after 30 s")
    False
    >>> _named_in_error("payment_methods", [{"amount": 250}], "payment amount does not add up")
    True
    >>> _named_in_error("cabin", "economy", "not enough seats on flight HAT229")
    False
    """
    text = error.casefold()
    words = set(re.findall(r"[a-z]+", text))
    for part in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", key):
        stem = part.casefold()
        if len(stem) >= 3 and ({stem, stem.removesuffix("s"), f"{stem}s"} & words):
            return True
    return any(
        re.search(rf"(?<![\w.]){re.escape(leaf)}(?![\w])", text) for leaf in argument_leaves(value)
    )


def argument_leaves(value: Any) -> Iterable[str]:
    """The scalar values inside an argument, as text (two characters at least: a lone
    digit or letter in a message names nothing); JSON text is read as its values."""
    stack = [maybe_json(value)]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif node is not None and not isinstance(node, bool):
            text = str(node).casefold()
            if len(text) >= 2:
                yield text
