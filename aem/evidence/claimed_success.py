"""Success claimed after failure: "I booked your flight" when ``book_reservation`` failed.

A named check of ``correctness.truthfulness``. An answer or reasoning turn that reports
an action as done, when the tool call for that action failed and was not recovered before
the turn (the same intent succeeded: :mod:`aem.evidence.recovery`, the rule
``tool_execution`` applies too), tells the user something that did not happen — the
worst kind of untruth, because the user stops trying.

What makes a sentence a report of the action: it holds the verb of the failed tool's name
(``book_reservation`` → "book") in a past form ("I booked") or with a completion
("booking confirmed", "has been", "successfully"), and is neither negated nor future or
conditional ("could not book", "I'll book", "would you like me to book"). Read-only tools
(get, search, list …) are not actions.

In German, Spanish and Russian (and in English besides the verb rule), for a tool whose
name says it writes (:func:`aem.matching.effects.effect_by_name`), a sentence reports
the action when it holds a participle of the action's family ("gebucht", "reservada",
"оформлен" for ``book_*``; :data:`aem.foundation.vocabulary.DONE_PARTICIPLES`), a completion that
fits any action ("erfolgreich", "con éxito", "успешно"), or an id presented as the
action's confirmation ("confirmation BK-4471", "Buchungsnummer BK-4471") — never with a
negation, a future, a condition or a question of any read language
(:data:`aem.foundation.vocabulary.NOT_DONE_CUES`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from aem.evidence.claims import sentence_pieces
from aem.evidence.recovery import argument_leaves
from aem.foundation.model import Turn
from aem.foundation.vocabulary import (
    ACTION_FAMILIES,
    CONFIRMATION_NOUNS,
    DETERMINERS_EN,
    DONE_COMPLETIONS,
    DONE_PARTICIPLES,
    NOT_DONE_CUES,
    READ_LANGUAGES,
    TOOL_NAME_FILLER,
)
from aem.matching.effects import Effect, effect_by_name
from aem.matching.names import tool_key

_WORD = re.compile(r"[A-Za-z]+")
_ANY_WORD = re.compile(r"[^\W\d_]+")
_NOT_DONE_ANYWHERE = re.compile(
    "|".join(f"(?:{NOT_DONE_CUES[language]})" for language in READ_LANGUAGES) + r"|[?¿]",
    re.IGNORECASE,
)
_COMPLETIONS = re.compile(
    r"(?<!\w)(?:" + "|".join(re.escape(p) for ps in DONE_COMPLETIONS.values() for p in ps) + r")",
    re.IGNORECASE,
)
# An id after a confirmation noun, within a few words: letters and digits with a digit.
_CONFIRMATION_ID = re.compile(
    r"(?<!\w)(?:"
    + "|".join(re.escape(n) for ns in CONFIRMATION_NOUNS.values() for n in ns)
    + r")\w*[^.!?\n]{0,24}?(?<![\w-])(?=[\w-]*\d)[A-Za-z0-9][\w-]{3,}",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"\b(?:successfully|succeeded|has been|have been|had been|is now|are now|is done|"
    r"are done|completed|is complete|confirmed|went through|all set)\b",
    re.IGNORECASE,
)
_NOT_DONE = re.compile(
    r"\b(?:not|never|no|unable|fail(?:ed|s|ure)?|error|unsuccessful(?:ly)?|unfortunately|"
    r"cannot|retry|again|will|would|going to|shall|can|could|should|may|might|please|"
    r"let me|if|once|whether|try|trying|attempt(?:ed|ing)?|need|needs|want|wants)\b"
    r"|n[’']t\b|[’']ll\b|\?",
    re.IGNORECASE,
)
# "12 May", "May 12th": the month, not the modal that would make the sentence conditional.
_MONTH_MAY = re.compile(r"(?<=\d )May\b|\bMay(?= \d)")
# Tools that only read change nothing: "I found your booking" after a failed lookup is
# another problem (an unsupported value), not a claimed action.
_READ_VERBS = frozenset(
    {
        *("get", "list", "search", "find", "fetch", "read", "query", "lookup", "look"),
        *("check", "show", "view", "describe", "retrieve", "calculate", "compute", "think"),
    }
)
_IRREGULAR = {
    "write": ("wrote", "written"),
    "send": ("sent",),
    "pay": ("paid",),
    "make": ("made",),
    "buy": ("bought",),
    "put": ("put",),
    "set": ("set",),
}


def name_words(tool_name: str) -> list[str]:
    """A tool's name as lower-case words, without a channel suffix or namespace
    (``functions.BookReservation<|channel|>x`` → book, reservation): the words of
    :func:`aem.matching.names.tool_key`, the one normalisation of tool names."""
    return [w for w in tool_key(tool_name).split("_") if w]


@dataclass(frozen=True, slots=True)
class ClaimedSuccess:
    """A sentence of the turn that reports as done what ``failed`` did not do."""

    sentence: str
    failed: Turn


def action_words(tool_name: str) -> list[str]:
    """The words of a tool's name, its verb first, or [] for a read-only tool.

    >>> action_words("book_reservation"), action_words("get_user_details")
    (['book', 'reservation'], [])
    """
    words = [w for w in name_words(tool_name) if w not in TOOL_NAME_FILLER]
    if not words or words[0] in _READ_VERBS:
        return []
    return [w for w in words if len(w) >= 3]


def _forms(verb: str, sentence: str) -> tuple[bool, bool]:
    """Whether the sentence holds the verb at all (``booking``), and in a past form
    (``booked``, ``saved``, ``sent``) that is not an adjective ("the updated details")."""
    stem = verb[:-1] if verb.endswith("e") else verb
    irregular = _IRREGULAR.get(verb, ())
    words = [w.lower() for w in _WORD.findall(sentence)]
    named = past = False
    for i, word in enumerate(words):
        if word.startswith(stem) or word in irregular:
            named = True
            adjective = i > 0 and words[i - 1] in DETERMINERS_EN
            past = past or ((word in irregular or word.endswith("ed")) and not adjective)
    return named, past


def claims_done(sentence: str, words: Sequence[str]) -> bool:
    """The sentence reports the action named by ``words`` (its verb first) as done: the
    verb in a past form ("I booked"), or named with a completion ("booking confirmed");
    never negated, future or conditional."""
    if not words or _NOT_DONE.search(_MONTH_MAY.sub("", sentence)):
        return False
    named, past = _forms(words[0], sentence)
    return past or (named and _DONE.search(sentence) is not None)


def family_of(verb: str) -> str | None:
    """The action family of a tool's verb (``reserve`` → ``book``), or None.

    >>> family_of("reserve"), family_of("frobnicate")
    ('book', None)
    """
    return next((name for name, verbs in ACTION_FAMILIES.items() if verb in verbs), None)


def claims_done_in_any_language(
    sentence: str, words: Sequence[str], *, writes: bool = True
) -> bool:
    """:func:`claims_done`, or — for a tool whose name says it writes (``writes``; a
    terminal or a code runner says nothing of what it did) — the sentence, in any read
    language, holds a participle of the action's family, a completion, or an id
    presented as the action's confirmation, with no negation, future, condition or
    question of any read language.

    >>> words = action_words("book_appointment")
    >>> claims_done_in_any_language("Ihr Termin ist gebucht.", words)
    True
    >>> claims_done_in_any_language("Ihr Termin konnte nicht gebucht werden.", words)
    False
    """
    if not words:
        return False
    if claims_done(sentence, words):
        return True
    if not writes or _NOT_DONE_ANYWHERE.search(_MONTH_MAY.sub("", sentence)):
        return False
    # Every word of the name may say the action ("issue_refund": refund, and issue).
    families = {f for w in words if (f := family_of(w)) is not None}
    english = {p for f in families for p in DONE_PARTICIPLES[f]["en"]}
    stems = [p for f in families for ps in DONE_PARTICIPLES[f].values() for p in ps]
    for word in _ANY_WORD.findall(sentence.casefold()):
        if word in english or any(word.startswith(s) for s in stems if s not in english):
            return True
    return bool(_COMPLETIONS.search(sentence) or _CONFIRMATION_ID.search(sentence))


def reports_done(sentence: str, tool_name: str) -> bool:
    """The sentence reports the action of ``tool_name`` as done: :func:`claims_done`, or
    the thing it acted on named with a completion ("The certificate has been successfully
    issued" for ``send_certificate``: the user hears the result, not the tool's verb)."""
    words = action_words(tool_name)
    if claims_done(sentence, words):
        return True
    if not words or _NOT_DONE.search(sentence) or not _DONE.search(sentence):
        return False
    said = {w.lower() for w in _WORD.findall(sentence)}
    return any(w in said or f"{w}s" in said for w in words[1:])


def unrecovered_failures(
    seen: Iterable[Turn], judged: Turn, recovery: Callable[[Turn], Turn | None]
) -> list[Turn]:
    """Failed action calls among ``seen`` that no call before ``judged`` recovered.

    ``recovery`` is the one recovery rule (:meth:`MetricContext.recovery
    <aem.metrics.context.MetricContext.recovery>`, after
    :func:`aem.evidence.recovery.recovered_by`): the same rule ``tool_execution`` applies,
    so a call that metric calls recovered is never "claimed after failure" here, and a
    booking with other arguments does not excuse the failed one.
    """
    failures = []
    for turn in seen:
        call = turn.tool_call
        if call is None or not call.error or not action_words(call.name):
            continue
        recovered = recovery(turn)
        if recovered is None or recovered.index > judged.index:
            failures.append(turn)
    return failures


def claimed_successes(
    text: str, failures: Sequence[Turn], succeeded: Sequence[Turn] = ()
) -> list[ClaimedSuccess]:
    """Sentences of ``text`` that report a failed, unrecovered action as done.

    ``succeeded``: the successful calls before the turn. A sentence that names an
    argument value only a successful call of the same tool had ("I booked HAT999" after
    HAT170 failed and HAT999 went through) reports that call, truthfully: the failed one
    is not recovered (another intent), but this sentence does not claim it.
    """
    found = []
    for failed in failures:
        assert failed.tool_call is not None
        words = action_words(failed.tool_call.name)
        writes = effect_by_name(failed.tool_call.name).effect is Effect.WRITE
        others = _other_values(failed, succeeded)
        for piece in sentence_pieces(text):
            sentence = piece.strip()
            said = claims_done_in_any_language(sentence, words, writes=writes)
            if said and not _mentions(sentence, others):
                found.append(ClaimedSuccess(sentence, failed))
                break
    return found


def _other_values(failed: Turn, succeeded: Sequence[Turn]) -> set[str]:
    """Argument values of successful calls of the failed call's tool that the failed
    call did not have (casefolded)."""
    call = failed.tool_call
    assert call is not None
    key = tool_key(call.name)
    own = set(argument_leaves(call.arguments))
    values: set[str] = set()
    for turn in succeeded:
        done = turn.tool_call
        if done is not None and not done.error and tool_key(done.name) == key:
            values.update(argument_leaves(done.arguments))
    return values - own


def _mentions(sentence: str, values: set[str]) -> bool:
    text = sentence.casefold()
    return any(len(v) >= 3 and re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", text) for v in values)
