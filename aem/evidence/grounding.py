"""What an answer may rest on: the context the agent had when it answered.

Groundedness asks "does the answer rest on what the agent found", not "is it true", so
the context is exactly what the turn saw: the documents of retrievals and the results of
tool calls among its ancestors in the turn graph, the user's question, and the system
messages of its own model input (a policy the agent was given) — not the case's reference
facts, not the agent's own earlier text.
Texts are cut into sentence-level passages (the embedding compares a claim with one
sentence, not with a page), and JSON tool results into one ``key: value`` line per
leaf, so a claim can be set against the one passage that could support it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from aem.compare.settings import CompareSettings
from aem.evidence.bindings import Call
from aem.evidence.citations import Source
from aem.evidence.claims import sentence_pieces, words
from aem.evidence.support import SeenValues
from aem.foundation.model import Session, ToolCall, Turn, TurnKind
from aem.graph import TurnGraph

_MAX_LEAVES = 400
_MAX_PASSAGE_CHARS = 600
# "question + sentence" passages are made for this many context sentences at most.
_MAX_WITH_QUESTION = 200
# A result of at most this many words holding one of these is an acknowledgement.
_STATUS_WORDS = 3
_STATUS = frozenset(
    {"ok", "okay", "done", "success", "successful", "succeeded", "true", "false", "completed"}
)


@dataclass(frozen=True)
class Passage:
    """One sentence (or ``key: value`` line) of the context and where it came from."""

    text: str
    source: str
    prose: bool = True
    # The user's question the sentence follows in ``text`` ("question + sentence"
    # passages), else empty.
    lead: str = ""
    # Of two neighbouring sentences joined in ``text``, the first one's length, else 0:
    # a claim that joins them shares words with both.
    joined: int = 0


@dataclass
class Grounding:
    """The context of one answer: citable sources, passages, and the values in them."""

    sources: list[Source] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    values: SeenValues = field(default_factory=SeenValues)
    documents: int = 0
    tool_results: int = 0
    # Whether any document or tool result is prose (sentences), not only JSON records.
    prose: bool = False
    # Tool calls that failed, as "name(arguments) error text": an answer may report them.
    failures: list[str] = field(default_factory=list)
    # Names of the calls that succeeded: an answer may report their actions as done.
    succeeded: list[str] = field(default_factory=list)
    # The calls that returned, as bindings read them (a record a claim names, the call
    # it restates): what can prove a value wrong, not only leave it unsupported.
    calls: list[Call] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """No retrieval and no tool result: nothing an answer could rest on."""
        return self.documents == 0 and self.tool_results == 0


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences and lines (long ones clipped)."""
    return [piece.strip()[:_MAX_PASSAGE_CHARS] for piece in sentence_pieces(text)]


def _field(path: str, value: Any) -> str:
    key = path.rsplit(".", 1)[-1].replace("_", " ")
    return f"{key}: {value}" if key else str(value)


def _leaves(value: Any, path: str, out: list[str]) -> None:
    """``key: value`` lines of a JSON value, a list's items under their parent's key; an
    object's scalar fields also as one line (a record read as a whole: "flight: TP 537,
    departs: 09:40, price eur: 189")."""
    if len(out) >= _MAX_LEAVES:
        return
    if isinstance(value, dict):
        scalars = [
            _field(str(k), v)
            for k, v in value.items()
            if not isinstance(v, dict | list) and v is not None
        ]
        if len(scalars) > 1:
            out.append(", ".join(scalars))
        for key, item in value.items():
            _leaves(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, path, out)
    elif value is not None:
        out.append(_field(path, value))


def result_passages(text: str) -> tuple[list[str], bool]:
    """A tool result as passages: JSON as ``key: value`` lines, else its sentences; and
    whether they are prose, which the polarity and qualifier rules need. A bare number
    (``897.0``) or an acknowledgement (``Transfer successful``, ``OK``) is a record, not
    prose: it has no sentence a claim could paraphrase ("Sunny, 22C" is prose: it says
    what the weather is)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if parsed is not None:
            lines: list[str] = []
            _leaves(parsed, "", lines)
            return [line[:_MAX_PASSAGE_CHARS] for line in lines], False
    pieces = sentences(text)
    said = words(text)
    status = len(said) <= _STATUS_WORDS and (
        not any(c.isalpha() for c in text) or bool(_STATUS.intersection(said))
    )
    return pieces, bool(pieces) and not status


def _with_neighbours(pieces: list[str], source: str, prose: bool = True) -> list[Passage]:
    """Each sentence, and each pair of neighbours: a claim may join two sentences."""
    pairs = [
        Passage(f"{a} {b}", source, prose, joined=len(a)) for a, b in itertools.pairwise(pieces)
    ]
    return [*(Passage(p, source, prose) for p in pieces), *pairs]


def build_grounding(
    documents: Iterable[tuple[str | None, str]],
    tool_results: Iterable[tuple[str, str]],
    questions: Iterable[str],
    settings: CompareSettings,
    instructions: Iterable[str] = (),
    failed: Collection[int] = (),
) -> Grounding:
    """A grounding from plain texts: ``(id, content)`` documents in the order the agent
    got them, ``(tool name, result)`` pairs, the user's messages, and the agent's
    instructions (passages and values, never citable: a rule stated there — "cancel within
    24 hours" — is something the agent was given). ``failed`` holds the 1-based numbers of
    results that are a failed call's error: an error message is not prose an answer
    paraphrases (a claim reporting it is checked by the failure rule of
    :mod:`aem.evidence.entailment`)."""
    found = Grounding()
    texts: list[tuple[str, str]] = []
    for doc_id, content in documents:
        found.documents += 1
        found.prose = True
        label = f"document [{found.documents}]" + (f" ({doc_id})" if doc_id else "")
        found.sources.append(Source(found.documents, doc_id, label, content))
        found.passages.extend(_with_neighbours(sentences(content), label))
        texts.append((label, content))
    results = list(tool_results)
    for number, (name, result) in enumerate(results, start=1):
        found.tool_results += 1
        label = f"{name} result"
        texts.append((f"{name} arguments", name))
        if found.documents == 0:  # with no documents, tool results are the citable sources
            found.sources.append(Source(number, None, label, result))
        pieces, prose = result_passages(result)
        found.prose = found.prose or (prose and number not in failed)
        found.passages.extend(_with_neighbours(pieces, label, prose))
        if name.endswith(")") and not name.endswith("()"):
            found.passages.extend(Passage(f"{name}: {p}", label, prose) for p in pieces)
        texts.append((label, result))
    asked = list(questions)
    found.passages.extend(_with_question(found.passages, asked[-1:]))
    for question in asked:
        found.passages.extend(Passage(p, "the user's question") for p in sentences(question))
        texts.append(("the user's question", question))
    for text in instructions:
        found.passages.extend(Passage(p, "the agent's instructions") for p in sentences(text))
        texts.append(("the agent's instructions", text))
    found.values = SeenValues.gather(texts, settings)
    return found


def _with_question(passages: list[Passage], questions: list[str]) -> list[Passage]:
    """Each context sentence after the question: an answer borrows the question's subject
    ("You can return an item within 30 days" from "How long do I have to return an
    item?" and "Refunds are accepted within 30 days")."""
    return [
        Passage(
            f"{question.strip()[:_MAX_PASSAGE_CHARS]} {p.text}",
            f"{p.source} and the question",
            p.prose,
            question.strip()[:_MAX_PASSAGE_CHARS],
        )
        for question in questions
        for p in passages[:_MAX_WITH_QUESTION]
    ]


def _call_label(call: ToolCall) -> str:
    """``get_weather(city: Paris)``: a result answers its call, so the call's arguments
    qualify it ("rainy, 14C" is the weather *in Paris*)."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    fields = [_field(str(k), v) for k, v in arguments.items() if not isinstance(v, dict | list)]
    return f"{call.name}({'; '.join(fields[:8])[:_MAX_PASSAGE_CHARS]})"


def _ancestors(graph: TurnGraph | None, turn: Turn) -> list[Turn]:
    if graph is None or turn.turn_id not in graph:
        return []
    return graph.ancestors(turn.turn_id)


def grounding_of(
    session: Session, graph: TurnGraph | None, turn: Turn, settings: CompareSettings
) -> Grounding:
    """What ``turn`` could rest on: ancestor retrievals' documents, ancestor tool results
    (calls that failed included: their error text is what the agent saw), the user's
    messages."""
    ancestors = _ancestors(graph, turn)
    documents = [
        (d.id, d.content)
        for t in ancestors
        if t.kind is TurnKind.RETRIEVAL
        for d in t.documents
        if d.content
    ]
    calls = [
        t.tool_call
        for t in ancestors
        if t.tool_call is not None and (t.tool_call.has_result or t.tool_call.error)
    ]
    results = [(_call_label(c), c.result_raw or c.error or "") for c in calls]
    failed = {number for number, call in enumerate(calls, start=1) if call.error}
    questions = user_texts(session, turn)
    found = build_grounding(documents, results, questions, settings, system_texts(turn), failed)
    found.succeeded = [c.name for c in calls if not c.error]
    found.calls = [call for t in ancestors if (call := Call.of(t)) is not None]
    found.failures = [
        f"{_call_label(t.tool_call)} {t.tool_call.error}"
        for t in ancestors
        if t.tool_call is not None and t.tool_call.error
    ]
    return found


def _message_text(message: dict[str, Any]) -> str:
    """A chat message's text: ``content`` as a string, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = message.get("parts") if isinstance(message.get("parts"), list) else content
    if not isinstance(parts, list):
        return ""
    texts = [p.get("content") or p.get("text") for p in parts if isinstance(p, dict)]
    return "\n".join(t for t in texts if isinstance(t, str))


def _input_texts(turn: Turn, roles: tuple[str, ...]) -> list[str]:
    """The texts of the turn's model-input messages with one of ``roles``, read from the
    JSON message list the input was recorded as, in order, without repeats."""
    found: list[str] = []
    for text in turn.seen_inputs:
        if not text.lstrip().startswith("["):
            continue
        try:
            messages = json.loads(text)
        except ValueError:
            continue
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict) and message.get("role") in roles:
                found.append(_message_text(message))
    return [t for t in dict.fromkeys(found) if t]


def system_texts(turn: Turn) -> list[str]:
    """The system messages of the turn's model input (its instructions, a policy it must
    follow)."""
    return _input_texts(turn, ("system", "developer"))


def user_texts(session: Session, turn: Turn) -> list[str]:
    """What the user had said by this turn: the session's user inputs and the user
    messages of the turn's model input (in a long chat, a budget or a date the user gave
    three messages ago sits only there)."""
    return list(dict.fromkeys([*session.user_inputs, *_input_texts(turn, ("user",))]))


def session_gathered(session: Session) -> bool:
    """Whether the session retrieved anything or called a tool (a typeless case then
    gets groundedness)."""
    return any(
        t.kind is TurnKind.RETRIEVAL or (t.kind is TurnKind.TOOL_CALL and t.tool_call)
        for t in session.turns
    )
