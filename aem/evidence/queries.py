"""Queries about a session that several metrics ask: one definition each.

Why here and not in each metric: "the final answer", "the tool calls" and "the tool-set
match" must mean the same for every metric, or two metrics judge different turns for
the same question. :class:`~aem.metrics.context.MetricContext` caches each answer per
session; these functions are the uncached definitions.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aem.cases import Case, ExpectedToolCall
from aem.compare.core import SemanticComparator
from aem.compare.extract import StatedValue
from aem.compare.settings import CompareSettings
from aem.evidence.support import IndexedSeenValues, SeenValues, ValueIndex
from aem.foundation.model import Session, Turn, TurnKind
from aem.foundation.sessioncache import SessionCache, Slot
from aem.graph import Ancestry, TurnGraph
from aem.matching import ActualCall, ToolSetMatch, match_tool_calls
from aem.matching.effects import DeclaredEffects, ToolEffects
from aem.matching.settings import MatchSettings


def tool_turns(session: Session) -> list[Turn]:
    """The session's tool-call turns (those carrying a call), in session order."""
    return [t for t in session.turns if t.kind is TurnKind.TOOL_CALL and t.tool_call]


def top_context_turns(session: Session) -> list[Turn]:
    """Turns of the top-level agent context: the agent the user talked to."""
    turns = session.turns
    return [t for t in turns if t.context == turns[0].context] if turns else []


_SPOKEN = (TurnKind.ANSWER, TurnKind.REASONING)


def answers_to_user(session: Session) -> list[Turn]:
    """Answer turns of the top-level context that the user is told; a sub-agent's answer
    is not the user's.

    Why not every top-level answer: in a group chat (several agents' model outputs in
    one context — an AG2 group chat, Magentic-One) a member's message is addressed to the
    other members. Decided by structure, not by names: when the top-level context's
    outputs come from more than one agent, the answer to the user is the last speaker's
    closing output — its answers after which no other agent speaks.
    """
    top = top_context_turns(session)
    answers = [t for t in top if t.kind is TurnKind.ANSWER]
    spoken = [t for t in top if t.kind in _SPOKEN]
    if len({t.agent for t in spoken}) <= 1:
        return answers
    last = spoken[-1].agent
    others_end = max(t.index for t in spoken if t.agent != last)
    return [t for t in answers if t.index > others_end]


def final_turn(session: Session) -> Turn | None:
    """Where the task ended: the last answer to the user, else the last top-level turn.

    A verdict about the session as a whole (an expected call never made) lands here.
    """
    answers = answers_to_user(session)
    if answers:
        return answers[-1]
    top = top_context_turns(session)
    return top[-1] if top else None


@dataclass(frozen=True)
class SessionMatch:
    """The session's tool-set match and how its indexes map back to turns and the case.

    ``turns[j]`` made actual call ``j``; expected call ``i`` of the match is the case's
    expected call ``kept[i]`` (calls outside ``match_tools`` are not given to the matcher).
    """

    match: ToolSetMatch
    turns: list[Turn]
    kept: list[int]
    expected: list[ExpectedToolCall]

    def expected_call(self, i: int) -> ExpectedToolCall:
        return self.expected[self.kept[i]]


def compared_turns(session: Session, settings: MatchSettings) -> list[Turn]:
    """Tool turns given to the matcher: a rejected call changed no state, so it is left
    out unless ``matching.count_failed_calls``."""
    return [
        t
        for t in tool_turns(session)
        if settings.count_failed_calls or not (t.tool_call and t.tool_call.error)
    ]


def match_session(
    session: Session, case: Case | None, comparator: SemanticComparator, settings: MatchSettings
) -> SessionMatch | None:
    """Match the case's expected calls against the session's calls; None without them."""
    if case is None or case.expected_tool_calls is None:
        return None
    turns = compared_turns(session, settings)
    actual = [
        ActualCall(name=t.tool_call.name, arguments=t.tool_call.arguments, ref=t.turn_id)
        for t in turns
        if t.tool_call is not None
    ]
    # ``match_tools`` scopes both sides: expected calls to other tools (read-only lookups
    # a reference happened to list) are not compared either.
    scope = set(case.match_tools) if case.match_tools is not None else None
    expected = case.expected_tool_calls
    kept = [i for i, c in enumerate(expected) if scope is None or c.name in scope]
    position = {original: new for new, original in enumerate(kept)}
    if case.extra_calls is not None and case.extra_calls != settings.extra_mode:
        settings = settings.model_copy(
            update={"extra_calls": case.extra_calls, "extra_calls_fail": None}
        )
    match = match_tool_calls(
        [expected[i].model_dump() for i in kept],
        actual,
        order=[
            (position[a], position[b]) for a, b in case.order if a in position and b in position
        ],
        match_tools=case.match_tools,
        comparator=comparator,
        settings=settings,
        effects=tool_effects(session, case, settings),
        optional=[new for new, original in enumerate(kept) if expected[original].optional],
    )
    return SessionMatch(match, turns, kept, expected)


def tool_effects(session: Session, case: Case | None, settings: MatchSettings) -> ToolEffects:
    """What each tool does, by the case, then ``[matching]``, then the tools' annotations
    in the trace, then their names (:mod:`aem.matching.effects`)."""
    declared = [
        DeclaredEffects("[matching]", settings.read_only_tools, settings.state_changing_tools)
    ]
    if case is not None:
        declared.insert(
            0, DeclaredEffects("the case's", case.read_only_tools, case.state_changing_tools)
        )
    return ToolEffects(declared, session.tool_annotations)


@dataclass(frozen=True)
class Seen:
    """What a turn could see, normalised, and why it cannot be judged if it cannot.

    ``blind`` names an ancestor tool call that ran but left no result in the trace:
    a value the turn states may come from it, so "unsupported" would be a guess.
    """

    values: SeenValues
    blind: str | None


class _LazySeen(Seen):
    """:class:`Seen` whose values answer ``supports`` from the session's value index and
    gather everything the turn saw (and find ``blind``) only when asked for more."""

    def __init__(self, values: IndexedSeenValues, full: Callable[[], Seen]) -> None:
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "_full", full)
        object.__setattr__(self, "_made", None)

    def __getattr__(self, name: str) -> Any:
        if name == "blind":
            made = self.__dict__["_made"]
            if made is None:
                made = self.__dict__["_full"]()
                object.__setattr__(self, "_made", made)
            return made.blind
        raise AttributeError(name)


# Attributes that carry the task itself: the request on the root span (GenAI, OpenInference,
# Traceloop, Vercel AI), and system instructions on any span.
_TASK_KEY = re.compile(r"(?:^|[._])(?:input|prompt)(?:$|[._])", re.IGNORECASE)
_INSTRUCTIONS_KEY = re.compile(r"system_?instructions|system_?prompt", re.IGNORECASE)


def task_texts(session: Session) -> list[str]:
    """The task as every turn saw it: the user's first messages, the request on the root
    span(s), and the system instructions anywhere in the session.

    Why every turn: a sub-agent or a group-chat member is handed the task out of band
    (a framework copies it into its own prompt); "within the last 90 days" from the task
    is not invented because the chat span's own input omits it.
    """
    texts = list(session.user_inputs)
    ids = {s.span_id for s in session.spans}
    # Attribute name → (instructions, task): spans repeat a few names, searched once each.
    kinds: dict[str, tuple[bool, bool]] = {}
    for span in session.spans:
        is_root = span.parent_span_id is None or span.parent_span_id not in ids
        for key, value in span.attributes.items():
            kind = kinds.get(key)
            if kind is None:
                kind = (bool(_INSTRUCTIONS_KEY.search(key)), bool(_TASK_KEY.search(key)))
                kinds[key] = kind
            wanted = kind[0] or (is_root and kind[1])
            if wanted and isinstance(value, str | list | dict) and value:
                texts.append(value if isinstance(value, str) else json.dumps(value))
    return list(dict.fromkeys(texts))


def seen_by(
    session: Session,
    graph: TurnGraph | None,
    turn: Turn,
    facts: dict[str, object],
    settings: CompareSettings,
    task: list[str] | None = None,
    cache: SessionCache | None = None,
) -> Seen:
    """Everything ``turn`` could see: its model input, the task (:func:`task_texts`), the
    case's facts, and the results, arguments, documents and text of its ancestors in
    ``graph`` (the session's turn graph; None: no ancestors). Each text is named by where
    it came from, for derivations to quote.

    Answered through the session's :class:`_SessionValues` (each turn's values extracted
    once, looked up by value), kept in ``cache`` (made anew without one: pass the
    session's cache); the full evidence is gathered only when a question needs it, so
    the answers are those of :func:`seen_fully`.
    """
    task = task if task is not None else task_texts(session)
    if graph is None or turn.turn_id not in graph:
        return seen_fully(graph, turn, facts, settings, task)
    shared = _session_values(session, graph, facts, settings, task, cache or SessionCache())

    def indexed(value: StatedValue, compare: CompareSettings, slack: int) -> bool:
        return shared.index.supports(
            value,
            compare,
            before=turn.index,
            visible=lambda source: shared.ancestry.is_ancestor(source, turn.turn_id),
            date_slack_days=slack,
        )

    @functools.cache
    def full() -> Seen:
        return seen_fully(graph, turn, facts, settings, task)

    def inputs() -> SeenValues:
        return SeenValues.gather(_inputs(turn), settings)

    values = IndexedSeenValues(shared.common, indexed, inputs, lambda: full().values)
    return _LazySeen(values, full)


@dataclass
class _SessionValues:
    """One session's shared evidence: the task and facts' values, each turn's values as
    an ancestor (:func:`_ancestor_texts`) in a :class:`ValueIndex`, and its ancestry."""

    facts: dict[str, object]
    settings: CompareSettings
    task: list[str]
    common: SeenValues
    index: ValueIndex
    ancestry: Ancestry


# Kept per graph in the session's cache (a session has one graph; a test may build more).
_SESSION_VALUES: Slot[dict[TurnGraph, _SessionValues]] = Slot("session values")


def _session_values(
    session: Session,
    graph: TurnGraph,
    facts: dict[str, object],
    settings: CompareSettings,
    task: list[str],
    cache: SessionCache,
) -> _SessionValues:
    """The session's :class:`_SessionValues`, made once per graph, facts, settings and task."""
    kept = cache.table(_SESSION_VALUES)
    found = kept.get(graph)
    if found is not None and all(
        mine is theirs or mine == theirs
        for mine, theirs in ((found.facts, facts), (found.settings, settings), (found.task, task))
    ):
        return found
    common = SeenValues.gather(_common_texts(facts, task), settings)
    index = ValueIndex()
    for turn in sorted(session.turns, key=lambda t: t.index):
        texts, _ = _ancestor_texts(turn)
        if texts:
            index.add(turn.index, turn.turn_id, SeenValues.gather(texts, settings, keyed=False))
    found = kept[graph] = _SessionValues(facts, settings, task, common, index, graph.ancestry)
    return found


def _inputs(turn: Turn) -> list[tuple[str, str]]:
    """The turn's model input as sources: every message but the agents' own words."""
    return [("its input", without_own_words(text)) for text in turn.seen_inputs]


def without_own_words(text: str) -> str:
    """A model input with the text of its ``assistant`` messages left out (their tool
    calls kept: the arguments of calls that ran are a source).

    Why: the agent's earlier words are no source for what it says now — a wrong plan
    stated a turn earlier would otherwise "support" the wrong answer that repeats it.
    An input that is not a JSON message list is kept whole.

    >>> without_own_words('[{"role": "user", "content": "March"}, '
    ...                   '{"role": "assistant", "content": "March 2025"}]')
    '[{"role": "user", "content": "March"}]'
    """
    if not text.lstrip().startswith("[") or '"assistant"' not in text:
        return text
    try:
        messages = json.loads(text)
    except ValueError:
        return text
    if not isinstance(messages, list):
        return text
    kept = [kept for m in messages if (kept := _without_text(m)) is not None]
    return json.dumps(kept, ensure_ascii=False)


def _without_text(message: Any) -> Any:
    """An assistant message without its text (None when nothing else is left)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return message
    parts = message.get("parts")
    calls = message.get("tool_calls")
    if isinstance(parts, list):
        parts = [p for p in parts if isinstance(p, dict) and p.get("type") != "text"]
        return {**message, "parts": parts} if parts else None
    if calls:
        return {k: v for k, v in message.items() if k != "content"}
    return None


def _common_texts(facts: dict[str, object], task: list[str]) -> list[tuple[str, str]]:
    texts = [("the task", text) for text in task]
    texts.extend(("the case's facts", str(v)) for v in facts.values())
    return texts


def _ancestor_texts(ancestor: Turn) -> tuple[list[tuple[str, str]], str | None]:
    """What a turn shows its descendants, each text named by where it came from (a call's
    arguments and result, retrieved documents, a sub-agent's answer to its caller); and
    why it blinds them (a call that ran and left no result in the trace), if it does."""
    texts: list[tuple[str, str]] = []
    blind = None
    call = ancestor.tool_call
    if call is not None:
        # The agent wrote the arguments itself, so it saw them even when the call failed.
        source = f"{ancestor.turn_id} {call.name}"
        texts.append((f"{source} arguments", call.arguments_raw or ""))
        if call.has_result:
            texts.append((f"{source} result", call.result_raw or ""))
        elif not call.error:
            blind = f"{ancestor.turn_id} ({call.name}) has no result in the trace"
    texts.extend((f"{ancestor.turn_id} documents", d.content) for d in ancestor.documents)
    if ancestor.returns_to_context is not None and ancestor.text and call is None:
        # A sub-agent's last answer is what the calling agent was told, as a tool's
        # result is: a source for the turns after it (never the sub-agent's own words
        # to itself — nothing inside the sub-agent descends from its last answer).
        texts.append((f"{ancestor.turn_id} sub-agent answer", ancestor.text))
    return texts, blind


def seen_fully(
    graph: TurnGraph | None,
    turn: Turn,
    facts: dict[str, object],
    settings: CompareSettings,
    task: list[str],
) -> Seen:
    """:func:`seen_by` gathered in full: every text the turn saw, extracted together."""
    ancestors = graph.ancestors(turn.turn_id) if graph is not None else []
    texts = _inputs(turn)
    texts.extend(_common_texts(facts, task))
    blind = None
    for ancestor in ancestors:
        more, blinds = _ancestor_texts(ancestor)
        texts.extend(more)
        blind = blinds or blind
    return Seen(SeenValues.gather(texts, settings), blind)
