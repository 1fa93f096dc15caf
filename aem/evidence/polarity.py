"""Does a claim say the opposite of the passage it paraphrases, or restrict what it says?

Why scopes, not whole texts: "the journey is not over. They'll be taken to the aquarium"
holds a ``not``, and the summary "the fish will be taken to the aquarium" holds none — yet
nothing was negated: the ``not`` bears on *the journey*, which the claim never states.
Comparing whether each text holds a negation anywhere made a contradiction out of every
paraphrase of a passage that negates something else (on real news summaries labelled by
people, most of the clean answers groundedness failed). A fail must quote what the claim
turned around, so the comparison is made per *scope*: the words a negation or a
restricting word bears on, in its clause.

* A **dropped negation** is a negation of the passage whose scope the claim states (its
  content words are in the claim) while the claim negates none of those words.
* An **added negation** is a negation of the claim whose scope the passage states in a
  clause that negates nothing.
* An **added restriction** (``only``, ``always``, ``free``, ``только``…) is one whose scope
  the passage states without a restricting word of the same kind in that clause.

What is not proven stays unsaid: a negation bearing on words the other side does not
state is no evidence either way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from aem.evidence.claims import sentence_pieces
from aem.evidence.stems import content_stems, stem
from aem.foundation.vocabulary import NEGATIONS, STOP_WORDS

# Restricting words, by prefix, each with its kind: "just four" and "only four" restrict
# alike; "every", "each", "per", "all" quantify alike.
_RESTRICTING_KINDS: dict[str, str] = {
    **dict.fromkeys(("only", "just", "merely", "solely", "exclusiv", "только", "лишь"), "only"),
    **dict.fromkeys(("except", "unless", "кроме"), "except"),
    **dict.fromkeys(("always", "never", "всегд", "никогд"), "always"),
    **dict.fromkeys(("guarant", "гарант"), "guaranteed"),
    **dict.fromkeys(("every", "each", "per", "all", "any", "любо", "все", "каждый"), "every"),
    **dict.fromkeys(("free", "беспл"), "free"),
    **dict.fromkeys(("even", "даже"), "even"),
}
# Whole words only, for the short ones: "all" is a restricting word, "allow" is not.
_WHOLE_WORDS = frozenset({"just", "per", "all", "any", "each", "even", "все", "free"})
# Words that say "not" by themselves: "gift cards are excluded" says what "gift cards
# cannot be returned" says, so it is no dropped negation.
_NEGATIVE_STEMS = (
    "exclud",
    "unavailab",
    "impossib",
    "prohibit",
    "forbid",
    "исключ",
    "невозмож",
    "недоступ",
    "запрещ",
)
# Clause breaks: punctuation, and the words that open a new clause.
_CLAUSE_BREAK = re.compile(
    r"[,;:.!?()\n—–]|\s-\s|\b(?:but|while|whereas|which|who|because|although|though|"
    r"however|а|но|который|которая|которые|потому|хотя)\b"
    # "and" opens a clause when a verb follows within three words ("… a record and
    # producers are planning …"), not when it joins names ("the US and Canada only").
    r"|\band(?=\s+(?:[^\W\d_]+\s+){0,2}(?:is|are|was|were|has|have|had|will|would|can|"
    r"could|may|might|must|should|did|does|do|said|says)\b)",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
# How many content words after a cue its scope holds.
_SCOPE_WORDS = 4


@dataclass(frozen=True)
class Scope:
    """One negation or restricting word, its kind, and the stems of what it bears on."""

    cue: str
    kind: str
    stems: frozenset[str]
    head: str | None = None


def _clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE_BREAK.split(text) if c and c.strip()]


def _is_negation(token: str) -> bool:
    return token in NEGATIONS or token.endswith("n't") or token.startswith(_NEGATIVE_STEMS)


def _restricting_kind(token: str) -> str | None:
    if token in _WHOLE_WORDS:
        return _RESTRICTING_KINDS[token]
    for prefix, kind in _RESTRICTING_KINDS.items():
        if prefix not in _WHOLE_WORDS and token.startswith(prefix):
            return kind
    return None


def _content(tokens: list[str]) -> list[str]:
    return [
        stem(t)
        for t in tokens
        if len(t) > 1
        and t not in STOP_WORDS
        and not any(c.isdigit() for c in t)
        and not _is_negation(t)
        and _restricting_kind(t) is None
    ]


def _scope(tokens: list[str], at: int, negative_word: bool) -> tuple[frozenset[str], str | None]:
    """What the cue at ``at`` bears on, and its head: the content words after it in its
    clause, the first of them the head ("not *refunded*"); when none follow ("free for
    members only", "gift cards are excluded"), those before it, with no head."""
    after = _content(tokens[at + 1 :])[:_SCOPE_WORDS]
    if after and not negative_word:
        return frozenset(after), after[0]
    before = _content(tokens[:at])[-_SCOPE_WORDS:]
    return (frozenset(after + before) if negative_word else frozenset(before)), None


def scopes(text: str) -> Iterator[Scope]:
    """Every negation and restricting word of ``text`` with the stems it bears on."""
    for clause in _clauses(text.replace("’", "'")):
        tokens = [t.lower() for t in _TOKEN.findall(clause)]
        for at, token in enumerate(tokens):
            if _is_negation(token):
                negative_word = token.startswith(_NEGATIVE_STEMS)
                yield Scope(token, "not", *_scope(tokens, at, negative_word))
            elif (kind := _restricting_kind(token)) is not None:
                yield Scope(token, kind, *_scope(tokens, at, False))


def _same(a: str, b: str) -> bool:
    """Two stems of one word: equal, or one the other's start ("room" of "rooms": a stem
    is a five-letter cut, so a four-letter word and its plural cut differently)."""
    short, long = sorted((a, b), key=len)
    return short == long or (len(short) >= 3 and long.startswith(short))


def _shared(stems: frozenset[str], other: frozenset[str]) -> int:
    """How many of ``stems`` the other text holds."""
    return sum(1 for s in stems if s in other or any(_same(s, o) for o in other))


@dataclass(frozen=True)
class Clause:
    """One clause: the stems of its content words and its cues with their scopes."""

    stems: frozenset[str]
    scopes: tuple[Scope, ...]
    sentence: int

    def has(self, kind: str) -> bool:
        return any(s.kind == kind for s in self.scopes)


def clauses_of(text: str) -> list[Clause]:
    """``text`` as clauses, each with what its negations and restrictions bear on and
    the sentence it is part of."""
    return [
        Clause(content_stems(clause), () if _asks(sentence) else tuple(scopes(clause)), number)
        for number, sentence in enumerate(sentence_pieces(text))
        for clause in _clauses(sentence)
    ]


def _asks(sentence: str) -> bool:
    """A question asserts nothing: the "not" of "wouldn't a trainee have noticed?" is no
    statement a claim could turn around."""
    return sentence.rstrip(" \"'»)").endswith("?")


def _states(clause: Clause, other: Clause, scope: Scope) -> bool:
    """``other`` states what ``clause`` says: two of the clause's words (or its only one)
    and, for a negation, its head and two of the words it bears on — a negation is turned
    around only where its own words are said ("not *refunded*"); a restriction is added
    to whatever the clause says ("free only for regular customers" restricts "free")."""
    if scope.kind == "not":
        if _shared(scope.stems, other.stems) < min(2, len(scope.stems)):
            return False
        if scope.head is not None and not _shared(frozenset({scope.head}), other.stems):
            return False
    return _shared(clause.stems, other.stems) >= min(2, len(clause.stems))


def _paraphrases(clause: Clause, other: Clause, source: list[Clause]) -> bool:
    """``clause`` is what ``other`` paraphrases: no clause of its text shares more of
    ``other``'s words ("Matt must win the HOH competition" paraphrases "which means Matt
    must win the HOH competition", not "he cannot compete in the next HOH competition")."""
    own = _shared(other.stems, clause.stems)
    return all(_shared(other.stems, c.stems) <= own for c in source)


def _turned(source: list[Clause], target: list[Clause], kind: str) -> Scope | None:
    """A cue of ``kind`` in ``source`` whose clause ``target`` states, no sentence of
    ``target`` that states it holding a cue of that kind anywhere — a cue in another
    clause of the same sentence may bear on it, so only its absence is a proof."""
    for clause in source:
        for scope in clause.scopes:
            if scope.kind != kind or not scope.stems:
                continue
            stating = {
                other.sentence
                for other in target
                if _states(clause, other, scope) and _paraphrases(clause, other, source)
            }
            cued = {other.sentence for other in target if other.has(kind)}
            if stating and not stating & cued:
                return scope
    return None


def polarity_differs(claim: str, passage: str) -> str:
    """How ``claim`` turns around or restricts what ``passage`` says ("" if it does not,
    or if nothing proves it does): :func:`negation_differs`, else
    :func:`restriction_added`."""
    return negation_differs(claim, passage) or restriction_added(claim, passage)


def negation_differs(claim: str, passage: str) -> str:
    """How ``claim`` states the opposite of the same predicate ``passage`` states ("are
    refunded" against "are not refunded"); "" if it does not."""
    claimed, passed = clauses_of(claim), clauses_of(passage)
    if dropped := _turned(passed, claimed, "not"):
        return f"drops the negation ({dropped.cue!r}) the passage puts on what it states"
    if added := _turned(claimed, passed, "not"):
        return f"negates ({added.cue!r}) what the passage states"
    return ""


def restriction_added(claim: str, passage: str) -> str:
    """A restricting word (``only``, ``always``, ``free``…) ``claim`` adds to what
    ``passage`` states; "" if none. Adding a word is no contradiction of the passage —
    at most a doubt (``unverified``) unless a team asks unsupported words to fail."""
    claimed, passed = clauses_of(claim), clauses_of(passage)
    kinds = {s.kind for c in claimed for s in c.scopes} - {"not"}
    for kind in sorted(kinds):
        if restriction := _turned(claimed, passed, kind):
            return f"adds {restriction.cue!r}, which the passage does not say"
    return ""
