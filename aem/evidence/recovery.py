"""When a failed tool call counts as recovered: one rule for every metric that asks.

Why one place: ``tool_execution`` (is a failed call a root cause?) and the
claimed-success check of ``correctness.truthfulness`` (may an answer report the action
as done?) ask the same question; two rules let one metric call a failure recovered
while the other does not, so the report contradicted itself.

Recovered means the same intent succeeded later: the same tool (names compared by
:func:`aem.matching.names.tool_key`, so ``cd<|channel|>commentary`` retries ``cd``), in
the same agent context, with equivalent arguments by AEM's comparison — except what the
error says was wrong. The error is read first (:func:`error_kind`):

* a *transient* error (a timeout, a 5xx, a rate limit, an unavailable service, a reset
  connection) says nothing about the arguments: only the same call succeeding later
  recovers it — a quote from carrier B does not recover a timed-out quote from A;
* any other error may name arguments — by key ("date … is not valid"), by value or a
  fragment of one ("certificate cannot be used" names ``payment_id =
  certificate_9312``), or by kind ("no route for the given airports" names ``origin``
  and ``destination``): those were what the retry had to change, so they are not
  compared (:func:`named_arguments`).

One error is neither recovered nor the agent's failure: the world declining a well-formed
request (no seats, not available on that date) that the agent then told the user about
and did not ask again (:func:`reported_decline`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from aem.compare.structured import maybe_json
from aem.foundation.model import Turn
from aem.foundation.vocabulary import (
    ARGUMENT_ERROR_CUES,
    ARGUMENT_KINDS,
    NEGATIONS,
    STOP_WORDS,
    TRANSIENT_ERROR_CUES,
    WORLD_DECLINE_CUES,
)
from aem.matching.cost import ArgumentJudge, CallRules, argument_mismatches
from aem.matching.names import tool_key
from aem.matching.settings import MatchSettings

if TYPE_CHECKING:
    from aem.compare import SemanticComparator

_WORD = re.compile(r"[^\W\d_]+")
_TOKEN = re.compile(r"[\w'’]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# The longest value read as an identifier whose words may name it (ids, codes, slugs).
_IDENTIFIER_LENGTH = 64


class ErrorKind(StrEnum):
    """What a tool error is about, as its message (and exception type) says."""

    TRANSIENT = "transient"  # the service: only the same call succeeding recovers it
    ARGUMENT = "argument"  # what the call asked for: changing the named argument fixes it
    OTHER = "other"  # says neither: the arguments it names, if any, are the fix


def error_kind(error: str, error_type: str | None = None) -> ErrorKind:
    """Transient or about an argument; a transient cue wins (a "503: invalid response"
    is the server's, not the call's).

    >>> error_kind("upstream timed out after 30 s").value, error_kind("Сервис недоступен").value
    ('transient', 'transient')
    >>> error_kind("certificate cannot be used").value, error_kind("Рейс не найден").value
    ('argument', 'argument')
    """
    text = f"{error_type or ''} {error}"
    if TRANSIENT_ERROR_CUES.search(text):
        return ErrorKind.TRANSIENT
    if ARGUMENT_ERROR_CUES.search(text):
        return ErrorKind.ARGUMENT
    return ErrorKind.OTHER


def recovered_by(
    turn: Turn, later: Sequence[Turn], comparator: SemanticComparator, settings: MatchSettings
) -> Turn | None:
    """The first turn of ``later`` that recovers ``turn``'s failed call, if any: a
    successful, executed call of the same tool in the same context with equivalent
    arguments (those a non-transient error names excepted)."""
    failed = turn.tool_call
    assert failed is not None
    key = tool_key(failed.name)
    wanted = _arguments(failed.arguments)
    fixed = named_arguments(wanted, failed.error or "", failed.error_type)
    rules = CallRules({k: v for k, v in wanted.items() if k not in fixed})
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


def reported_decline(
    turn: Turn, later: Sequence[Turn], comparator: SemanticComparator, settings: MatchSettings
) -> Turn | None:
    """The answer that told the user the world declined ``turn``'s call, if the agent
    then left it: the error says the world lacks what was asked (``WORLD_DECLINE_CUES``:
    no seats, not available on that date), the first answer after the call in its
    context says so — one sentence holds a negation and names what the error names (an
    identifier or value with a digit, else the decline itself) —, and no later call
    repeats the request (the same tool, every argument equivalent).

    Asking again what the world refused is a failure (``tool_repetition`` reports it
    too); reporting it is what the user needed."""
    failed = turn.tool_call
    assert failed is not None
    error = failed.error or ""
    if not WORLD_DECLINE_CUES.search(error):
        return None
    after = [t for t in later if t.index > turn.index and t.context == turn.context]
    if _asked_again(turn, after, comparator, settings):
        return None
    answer = next((t for t in after if t.kind.value == "answer" and t.text), None)
    if answer is None or answer.text is None or not _tells(answer.text, error):
        return None
    return answer


def _asked_again(
    turn: Turn, later: Sequence[Turn], comparator: SemanticComparator, settings: MatchSettings
) -> bool:
    """A later call of the same tool with every argument equivalent to ``turn``'s."""
    failed = turn.tool_call
    assert failed is not None
    key = tool_key(failed.name)
    rules = CallRules(dict(_arguments(failed.arguments)))
    judge = ArgumentJudge(comparator, settings)
    return any(
        t.tool_call is not None
        and tool_key(t.tool_call.name) == key
        and not argument_mismatches(rules, _arguments(t.tool_call.arguments), judge, True)
        for t in later
    )


def _tells(text: str, error: str) -> bool:
    """A sentence of ``text`` says the error to the user: a negation beside what the
    error names — its identifiers ("HAT290"), else its numbers, or, when it has neither,
    the decline it states ("sold out")."""
    tokens = [w.casefold() for w in _TOKEN.findall(error) if any(c.isdigit() for c in w)]
    identifiers = {w for w in tokens if any(c.isalpha() for c in w)}
    names = identifiers or {w for w in tokens if len(w) >= 2}
    decline = WORLD_DECLINE_CUES.search(error)
    for sentence in _SENTENCE_END.split(text):
        words = {w.casefold().replace("’", "'") for w in _TOKEN.findall(sentence)}
        if not (words & NEGATIONS or WORLD_DECLINE_CUES.search(sentence)):
            continue
        if names & words or (not names and decline and WORLD_DECLINE_CUES.search(sentence)):
            return True
    return False


def named_arguments(
    arguments: Mapping[str, Any], error: str, error_type: str | None = None
) -> set[str]:
    """The arguments ``error`` says were wrong (none for a transient error).

    >>> sorted(named_arguments({"payment_id": "certificate_9312", "user": "ann"},
    ...                        "certificate cannot be used"))
    ['payment_id']
    >>> sorted(named_arguments({"origin": "JFK", "destination": "SEA", "date": "2026-05-01"},
    ...                        "no route for the given airports"))
    ['destination', 'origin']
    >>> named_arguments({"carrier": "ACME"}, "quote for ACME timed out")
    set()
    """
    if error_kind(error, error_type) is ErrorKind.TRANSIENT:
        return set()
    return {k for k, v in arguments.items() if _named_in_error(k, v, error)}


def _arguments(value: object) -> Mapping[str, Any]:
    """A call's arguments as a mapping (JSON text parsed; anything else is none)."""
    parsed = maybe_json(value)
    return parsed if isinstance(parsed, Mapping) else {}


def _named_in_error(key: str, value: Any, error: str) -> bool:
    """The error message names this argument: by its key (or a word of it: "payment
    amount does not add up" names ``payment_methods``; "no seats on flight X" names
    ``flights``), by a value or a word of one, nested ones too, or by its kind.

    A generic failure names nothing, so a retry that changes any argument is another
    intent.

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
    words = set(_WORD.findall(text))
    if _key_named(key, words):
        return True
    leaves = list(argument_leaves(value))
    if any(re.search(rf"(?<![\w.]){re.escape(leaf)}(?![\w])", text) for leaf in leaves):
        return True
    if any(w in words for leaf in leaves for w in _fragments(leaf)):
        return True
    return _kind_named(key, list(argument_leaves(value, fold=False)), words)


def _key_parts(key: str) -> list[str]:
    """``paymentMethod_id`` → payment, method, id (lower case)."""
    return [p.casefold() for p in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", key) if p]


def _key_named(key: str, words: set[str]) -> bool:
    for stem in _key_parts(key):
        if len(stem) >= 3 and ({stem, stem.removesuffix("s"), f"{stem}s"} & words):
            return True
    return False


def _fragments(leaf: str) -> Iterable[str]:
    """The words of an identifier-like value that may name it ("certificate_9312" →
    certificate): four letters at least and no stop word, so "the" or "id" names nothing.
    A value with spaces (code, a query, a message) is text, not a name: a traceback that
    quotes a line of the code names the code's words, not which argument was wrong."""
    if len(leaf) > _IDENTIFIER_LENGTH or any(c.isspace() for c in leaf):
        return ()
    return (w for w in _WORD.findall(leaf) if len(w) >= 4 and w not in STOP_WORDS and w != leaf)


def _kind_named(key: str, leaves: list[str], words: set[str]) -> bool:
    """The error calls the argument by its kind: a kind word it says ("airports") covers
    the argument's name (``origin``) or the shape of its value as written (``JFK``)."""
    parts = set(_key_parts(key))
    for said, keys, shape in ARGUMENT_KINDS:
        if not any(w.startswith(s) for w in words for s in said):
            continue
        if parts & set(keys) or (shape and any(re.fullmatch(shape, leaf) for leaf in leaves)):
            return True
    return False


def argument_leaves(value: Any, fold: bool = True) -> Iterable[str]:
    """The scalar values inside an argument, as text (two characters at least: a lone
    digit or letter in a message names nothing), case-folded unless ``fold`` is off;
    JSON text is read as its values."""
    stack = [maybe_json(value)]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif node is not None and not isinstance(node, bool):
            text = str(node).casefold() if fold else str(node)
            if len(text) >= 2:
                yield text
