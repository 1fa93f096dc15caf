"""Is one claim supported by the context? The embedded default, offline, no model call.

A claim is supported when all of these hold:

* every value it states (number, amount, date, period, id) is in the context, by AEM's
  semantic comparison (``$4.99`` = ``4.99 USD``, ``March 16, 2026`` = ``2026-03-16``);
* every name it states (a capitalised word not opening the sentence, an acronym: ``UPS``,
  ``Mexico``) occurs in the context;
* when the context holds prose (a document, a text result) — JSON records alone have no
  sentences to entail anything, so there values and names are the whole check — its
  nearest passage — by sentence-embedding cosine, or by the share of the claim's
  word stems the passage holds (what carries Russian: the bundled model reads English
  best) — reaches the threshold;
* that passage says it with the same polarity (no ``not`` dropped or added) and without
  a restricting word the claim adds (``only``, ``always``, ``guaranteed``, ``только``…).

Why the extra rules: an embedding of "Shipping costs are refunded" is closer to "Shipping
costs are not refunded" than any paraphrase is, and "… for premium members only" to the
same sentence without the qualifier; cosine alone passes both. ``bench/groundedness``
measures the whole rule on labelled claims.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np

from aem.compare.core import SemanticComparator
from aem.compare.extract import StatedValue, extract_claims
from aem.compare.settings import CompareSettings
from aem.evidence.bindings import worked_out_wrong
from aem.evidence.claimed_success import reports_done
from aem.evidence.claims import words
from aem.evidence.grounding import Grounding, Passage
from aem.evidence.names import folded, folded_words
from aem.evidence.polarity import negation_differs, restriction_added
from aem.evidence.stems import content_stems, stem
from aem.evidence.support import ValueVerdict, judge_value
from aem.foundation.vocabulary import (
    MONTH_ABBREVIATIONS_EN,
    MONTH_NUMBERS,
    MONTHS_EN,
    STOP_WORDS,
    WEEKDAY_NUMBERS,
    WEEKDAYS_EN,
    language_of,
)

_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b(?:[A-ZА-ЯЁ][a-zа-яё]+|[A-ZА-ЯЁ]{2,})\b")


class ClaimStatus(StrEnum):
    """What the check could establish about a claim.

    Only ``contradicted`` and ``unsupported_value`` are proofs (a value or a polarity a
    reviewer can check against the context); ``unverified`` is the absence of proof
    either way — no passage is similar enough to say it, and nothing in it is wrong."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    UNSUPPORTED_VALUE = "unsupported_value"
    UNVERIFIED = "unverified"


@dataclass(frozen=True)
class ClaimCheck:
    """A claim's verdict, the passage it was set against, and why, when it is not
    supported. ``stated`` and ``closest`` are what a proof quotes: the value or name the
    claim states and the nearest candidate the context holds (for a contradiction: the
    claim and the passage it paraphrases)."""

    claim: str
    status: ClaimStatus
    similarity: float
    passage: Passage | None
    why: str = ""
    stated: str | None = None
    closest: str | None = None

    @property
    def supported(self) -> bool:
        return self.status is ClaimStatus.SUPPORTED

    @property
    def proven_wrong(self) -> bool:
        """The check holds evidence against the claim (a fail, not a doubt)."""
        return self.status in (ClaimStatus.CONTRADICTED, ClaimStatus.UNSUPPORTED_VALUE)


@dataclass(frozen=True)
class Thresholds:
    """The embedded default's thresholds (the groundedness metric's settings)."""

    similarity: float
    overlap: float
    date_slack_days: int = 0
    # ``[verdicts] unsupported = "fail"``: what no source supports is a proof, as a
    # contradiction is (a restricting word the claim adds; a value tool records lack).
    unsupported_fails: bool = False


@dataclass(frozen=True)
class Answer:
    """The whole answer a claim comes from, and its stated values: an aggregate may
    draw on the answer's other sentences ("The total is $329. … you will have $171
    remaining" of a $500 certificate; "$50 per passenger … 3 passengers … total $150")."""

    text: str
    values: list[StatedValue]

    @classmethod
    def of(cls, text: str, settings: CompareSettings) -> Answer:
        return cls(text, extract_claims(text, settings))


def claim_value_support(
    value: StatedValue,
    claim: str,
    grounding: Grounding,
    settings: CompareSettings,
    answer: Answer,
    slack: int = 0,
) -> ValueVerdict:
    """The one value verdict on ``value`` (stated in ``claim``), read in the whole
    answer when the claim can be found in it — so a total may sum amounts the answer
    listed in earlier sentences, and a count see the noun after it."""
    offset = answer.text.find(claim)
    if offset < 0:
        text, own, moved = claim, extract_claims(claim, settings), value
    else:
        text, own = answer.text, answer.values
        moved = replace(value, start=value.start + offset, end=value.end + offset)
    return judge_value(
        moved,
        grounding.values,
        settings,
        text=text,
        own=own,
        calls=grounding.calls,
        date_slack_days=slack,
    )


def _missing_value(
    claim: str,
    values: list[StatedValue],
    grounding: Grounding,
    comparator: SemanticComparator,
    slack: int,
    answer: Answer | None = None,
) -> ValueVerdict | None:
    """The verdict on the first value of ``claim`` the one verdict leaves open — a
    contradicted one before any unsupported one: a value not worth checking (a small
    integer that counts nothing) is no proof either way, exactly as for
    ``correctness.truthfulness``."""
    answer = answer or Answer(claim, values)
    first: ValueVerdict | None = None
    for value in values:
        verdict = claim_value_support(value, claim, grounding, comparator.settings, answer, slack)
        if verdict.status == "contradicted":
            return verdict
        if verdict.open and first is None:
            first = verdict
    return first


def _without_values(claim: str, values: list[StatedValue]) -> str:
    """The claim with its values blanked: "March" in "March 12, 2026" is a date's month,
    which the value rule has already compared, not a name."""
    for value in sorted(values, key=lambda v: -v.start):
        claim = claim[: value.start] + " " * (value.end - value.start) + claim[value.end :]
    return claim


# A short lead-in label ("**Total Price:**", "First Leg:", "Departure:") and the markup
# before it: its capitals are formatting, not names the context must hold.
_LABEL = re.compile(r"^[\s*_#>•-]*(?:[^:\n]{1,40}:(?!\d)[\s*_]*)?")
# Clock suffixes and calendar words: "07:00 PM", "May 20" state a time or a date, whose
# value the value check compares.
_NOT_NAMES = frozenset(
    {
        *("AM", "PM", "Uhr"),  # "07:00 PM", "17:00 Uhr"
        *(name.capitalize() for name in (*MONTHS_EN, *MONTH_ABBREVIATIONS_EN, *WEEKDAYS_EN)),
        *(name.capitalize() for name in (*MONTH_NUMBERS, *WEEKDAY_NUMBERS)),
    }
)


# "Chicago (ORD)", "ORD (Chicago O'Hare)": a name and, in brackets, another name for it.
_GLOSS = re.compile(
    r"(?P<name>(?:[A-ZА-ЯЁ][\w'.&/-]*\s+){0,3}[A-ZА-ЯЁ][\w'.&/-]*)\s*\((?P<gloss>[^()\n]{1,40})\)"
)


def _held(phrase: str, text: str) -> bool:
    """Whether every word of ``phrase`` is in the context ``text``."""
    return all(w in text for w in words(phrase))


def _without_glosses(claim: str, text: str) -> str:
    """The claim with each bracketed gloss blanked when the other side of it is in the
    context: the agent named the same thing twice, once as the context did ("Chicago
    (ORD)" after a record with ``destination: ORD``), and the other name spells out the
    first — world knowledge about the context's own term, not a new fact. A name so
    glossed may come again without its brackets ("… returning to Seattle")."""
    glossed: list[str] = []

    def blank(match: re.Match[str]) -> str:
        name, gloss = match.group("name"), match.group("gloss")
        if _held(gloss, text):
            glossed.extend(re.split(r"[\s/]+", name))
            return " " * len(name) + match.group(0)[len(name) :]
        if _held(name, text):
            return match.group(0)[: match.start("gloss") - match.start()] + " " * len(gloss) + ")"
        return match.group(0)

    claim = _GLOSS.sub(blank, claim)
    for name in glossed:
        claim = re.sub(rf"\b{re.escape(name)}\b", " " * len(name), claim)
    return claim


_AFTER_COLON = re.compile(r":[\s*_]*$")


@dataclass(frozen=True)
class MissingName:
    """A name the context does not hold, and ``beside`` — another word of the same
    multi-word name that the context does hold ("Tulsa" of "Tulsa County"), if any."""

    name: str
    beside: str | None = None


# A multi-word name: capitalised words joined by spaces or the small words names hold.
_NAME_RUN = re.compile(
    r"[A-ZА-ЯЁ][\w'.&-]*(?:(?:\s+(?:of|and|the|de|la|van|von|der|du|di|del))*\s+"
    r"[A-ZА-ЯЁ][\w'.&-]*)*"
)


def _held_word(word: str, text: str, stems: Set[str]) -> bool:
    lowered = word.lower()
    return bool(re.search(rf"(?<!\w){re.escape(lowered)}(?!\w)", text)) or stem(lowered) in stems


def _beside(body: str, at: int, name: str, text: str, stems: Set[str]) -> str | None:
    """Another word of the multi-word name around ``body[at]`` that the context holds."""
    for run in _NAME_RUN.finditer(body):
        if run.start() <= at < run.end():
            others = [w for w in run.group(0).split() if w[:1].isupper() and w != name]
            held = [w for w in others if w.lower() not in STOP_WORDS and _held_word(w, text, stems)]
            return held[0] if held else None
    return None


def _missing_name(claim: str, grounding: Grounding) -> MissingName | None:
    """The first capitalised word (a name) of ``claim`` the context does not hold.

    The claim's first word, a lead-in label, the first word after a colon and clock
    suffixes are capitalised by grammar or layout, so they are no names; a name glossing
    one the context holds is no new name (:func:`_without_glosses`). A word that extends
    a name the context holds ("Tulsa *County*", "Sally Kohn" after "Kohn") may be the
    same entity or another one: it is reported with the word beside it."""
    text = grounding.values.text
    stems = content_stems(text)
    claim = _without_glosses(claim, text)
    label = _LABEL.match(claim)
    body = claim[label.end() :] if label and len(words(label.group(0))) <= 4 else claim
    # German capitalises every noun: there only an acronym is surely a name.
    nouns_capitalised = language_of(claim) == "de"
    for match in _NAME.finditer(body):
        name = match.group(0)
        if nouns_capitalised and not name.isupper():
            continue
        if name in _NOT_NAMES or _AFTER_COLON.search(body, 0, match.start()):
            continue  # a field's value starts capitalised: "Basic Economy: Sold Out"
        if (
            name.lower() not in text
            and stem(name.lower()) not in stems
            and folded(name) not in folded_words(text)  # "Muller", "Anna" for "Müller", "Анна"
        ):
            return MissingName(name, _beside(body, match.start(), name, text, stems))
    return None


def _records_restated(claim: str, values: list[StatedValue], grounding: Grounding) -> bool:
    """A claim made mostly of values (two or more, all in the context) whose every other
    word is in the context too: a restatement of records that the context's structure
    spreads over several passages ("TP 537 at 09:40 (189 EUR) or FR 1946 at 17:15")."""
    if len(values) < 2:
        return False
    text = grounding.values.text
    stems = content_stems(text)
    rest = [
        w
        for w in words(claim)
        if w not in STOP_WORDS and len(w) > 1 and not any(c.isdigit() for c in w)
    ]
    return all(stem(w) in stems or w in text for w in rest)


# Words that report a failure ("unavailable", "timed out", "could not") — the claim then
# says a call failed, which a failed call in the context supports.
_FAILURE = re.compile(
    r"\b(?:unavailable|not available|timed out|time(?:d)?-?out|failed|failure|error|could not|"
    r"couldn't|can't|cannot|unable|down)\b|недоступ|ошибк|не удалось|не получилось",
    re.IGNORECASE,
)


def _reports_failure(claim: str, grounding: Grounding) -> bool:
    """The claim reports a failure and names a call that did fail (its tool name, an
    argument or a word of its error): "Hotels are unavailable right now: the hotel search
    timed out" after ``get_hotels(city: Lisbon)`` raised a timeout."""
    if not grounding.failures or not _FAILURE.search(claim):
        return False
    said = content_stems(_FAILURE.sub(" ", claim))
    return any(said & content_stems(failure.replace("_", " ")) for failure in grounding.failures)


def _nearest(
    claim: str,
    vector: np.ndarray | None,
    passages: Sequence[Passage],
    matrix: np.ndarray | None,
) -> tuple[int, float, float]:
    """The passage that best supports ``claim``: index, cosine (0 without embeddings), and
    stem overlap."""
    embedded = vector is not None and matrix is not None and len(passages)
    cosines = matrix @ vector if embedded else np.zeros(len(passages))  # type: ignore[operator]
    stems = content_stems(claim)
    overlaps = np.array(
        [len(stems & content_stems(p.text)) / len(stems) if stems else 0.0 for p in passages]
    )
    scores = np.maximum(cosines, overlaps)
    best = int(np.argmax(scores))
    return best, float(cosines[best]), float(overlaps[best])


def check_claims(
    claims: Sequence[str],
    grounding: Grounding,
    comparator: SemanticComparator,
    thresholds: Thresholds,
    answer: str | None = None,
) -> list[ClaimCheck]:
    """Each claim's verdict against ``grounding`` (one embedding batch for all texts);
    ``answer``, the text the claims were split from, lets a stated aggregate draw on the
    answer's other sentences.

    Only what can change a verdict is embedded. A claim its values, names or a reported
    call decide (:func:`_decided`) is not: the passage it quotes is the one sharing most
    of its words; and when every claim is so decided, no passage is embedded either (a
    long article costs a second of encoding per answer, a claim's value a lookup). Of
    the passages, only :func:`candidates` are: those sharing a word with an open claim."""
    whole = Answer.of(answer, comparator.settings) if answer else None
    passages = grounding.passages
    if not claims:
        return []
    if not passages:
        why = "the context holds no passage"
        return [ClaimCheck(c, ClaimStatus.UNVERIFIED, 0.0, None, why) for c in claims]
    early = [_decided(claim, grounding, comparator, thresholds, whole) for claim in claims]
    # Records only: values and names are the whole check (see ``_decided``), so the passage
    # quoted is the one sharing most words. Embedding every ``key: value`` line of large
    # tool results cost ~3 s per tau-bench session and decided nothing.
    open_claims = [c for c, (_, verdict) in zip(claims, early, strict=True) if verdict is None]
    vectors: dict[str, np.ndarray] = {}
    matrix: np.ndarray | None = None
    if grounding.prose and open_claims:
        vectors, matrix = _embedded(open_claims, passages, comparator, thresholds.similarity)
    checks = []
    for claim, (values, verdict) in zip(claims, early, strict=True):
        best, cosine, overlap = _nearest(claim, vectors.get(claim), passages, matrix)
        passage, score = passages[best], max(cosine, overlap)
        if verdict is not None:
            checks.append(verdict(score, passage))
            continue
        checks.append(_by_passage(claim, values, cosine, overlap, passage, grounding, thresholds))
    return checks


def _terms(text: str) -> frozenset[str]:
    """What the lexical gate compares: content stems, and the words holding a digit."""
    return content_stems(text) | {w for w in words(text) if any(c.isdigit() for c in w)}


def candidates(claims: Sequence[str], passages: Sequence[Passage]) -> tuple[list[int], list[int]]:
    """The passages worth embedding for ``claims``: those sharing a content word, a
    number or a name with one of them (a sentence with no word of any claim paraphrases
    none closely enough to decide it; encoding such sentences was most of a long
    article's cost) — a pair of neighbouring sentences only when one claim shares words
    with both (a claim joining two sentences draws on each). Two lists of indices: the
    plain passages, and the "question + sentence" ones, whose sentence is checked (the
    question adds the same words to all)."""
    said = [_terms(c) for c in claims]
    wanted = frozenset().union(*said)
    plain: list[int] = []
    led: list[int] = []
    for index, passage in enumerate(passages):
        body = passage.text[len(passage.lead) + 1 :] if passage.lead else passage.text
        if not wanted & _terms(body):
            continue
        if passage.joined and not passage.lead:  # a pair: some claim bears on both
            first, second = _terms(body[: passage.joined]), _terms(body[passage.joined + 1 :])
            if not any(terms & first and terms & second for terms in said):
                continue
        (led if passage.lead else plain).append(index)
    return plain, led


# How far the question before a sentence may lift a claim's cosine to it: a "question +
# sentence" passage is embedded only for claims within this of the threshold on the
# sentence alone. On RAGTruth's 41 answers of the speed bench (19,675 claim × passage
# pairs) no pair reaching 0.75 was lifted by more than 0.044 (the largest lift anywhere,
# far below the threshold, 0.27; 99.9 % under 0.18).
_QUESTION_LIFT = 0.2


def _embedded(
    claims: list[str],
    passages: Sequence[Passage],
    comparator: SemanticComparator,
    similarity: float,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The claims' vectors and a matrix of the passages' (zero rows: not embedded, their
    cosine counts as 0), in two steps: the plain :func:`candidates` with the claims; then
    a "question + sentence" candidate only for a claim no plain passage reached the
    similarity threshold for, and only where the sentence alone came within
    :data:`_QUESTION_LIFT` of it — the question can lift a sentence over the threshold
    ("Refunds are accepted within 30 days" after "How long do I have to return an
    item?"), not from far below (on RAGTruth the question is "Summarize the following
    news." before every sentence: half of all texts, and of the encoding)."""
    plain, led = candidates(claims, passages)
    encoded = comparator.embedder.encode([*claims, *(passages[i].text for i in plain)])
    vectors = dict(zip(claims, encoded, strict=False))
    matrix = np.zeros((len(passages), encoded.shape[1]), dtype=encoded.dtype)
    if plain:
        matrix[plain] = encoded[len(claims) :]
    if not led:
        return vectors, matrix
    where = {passages[i].text: i for i in plain}
    wanted: set[int] = set()
    for claim in claims:
        cosines = matrix @ vectors[claim]
        if plain and float(np.max(cosines)) >= similarity:
            continue  # decided by a sentence as it stands
        for index in led:
            alone = where.get(passages[index].text[len(passages[index].lead) + 1 :])
            if alone is not None and cosines[alone] >= similarity - _QUESTION_LIFT:
                wanted.add(index)
    if wanted:
        chosen = sorted(wanted)
        matrix[chosen] = comparator.embedder.encode([passages[i].text for i in chosen])
    return vectors, matrix


# A verdict reached without the claim's nearest passage, given it (score, passage) to quote.
Decision = Callable[[float, Passage], ClaimCheck]


def _decided(
    claim: str,
    grounding: Grounding,
    comparator: SemanticComparator,
    thresholds: Thresholds,
    answer: Answer | None = None,
) -> tuple[list[StatedValue], Decision | None]:
    """The claim's values, and its verdict when they, its names or a reported call decide
    it whatever passage is nearest: a value worked out wrong, a value or a name the
    context does not hold (a proof), a failure or an action the calls bear out, or a
    context of records alone (values and names are then the whole check)."""
    values = extract_claims(claim, comparator.settings)
    wrong = worked_out_wrong(values, claim, grounding.calls, comparator.settings)
    if wrong:
        why = f"states {wrong[0].stated!r} where {wrong[0].quote}"
        stated, quote = wrong[0].stated, wrong[0].quote
        return values, lambda score, passage: ClaimCheck(
            claim, ClaimStatus.CONTRADICTED, score, passage, why, stated, quote
        )
    missing = _missing_value(
        claim, values, grounding, comparator, thresholds.date_slack_days, answer
    )
    if missing is not None:
        return values, lambda score, passage: _missing_check(
            claim, missing, score, passage, grounding, thresholds
        )
    missing_name = _missing_name(_without_values(claim, values), grounding)
    if missing_name is not None:
        return values, lambda score, passage: _name_check(
            claim, missing_name, score, passage, grounding, thresholds
        )
    if (
        _reports_failure(claim, grounding)
        or any(reports_done(claim, name) for name in grounding.succeeded)
        or not grounding.prose  # records only: their values and names were the check
    ):
        return values, lambda score, passage: ClaimCheck(
            claim, ClaimStatus.SUPPORTED, score, passage
        )
    return values, None


def _by_passage(
    claim: str,
    values: list[StatedValue],
    cosine: float,
    overlap: float,
    passage: Passage,
    grounding: Grounding,
    thresholds: Thresholds,
) -> ClaimCheck:
    """A claim nothing in it decides, against its nearest passage: paraphrased (cosine or
    word overlap at the thresholds) and then held against the passage's polarity and
    qualifiers, or ``unverified``."""
    score = max(cosine, overlap)
    paraphrased = cosine >= thresholds.similarity or overlap >= thresholds.overlap
    if paraphrased or _records_restated(claim, values, grounding):
        return _against_passage(claim, score, passage, paraphrased, thresholds)
    why = (
        f"no passage says it (cosine {cosine:.2f} < {thresholds.similarity:.2f}, "
        f"word overlap {overlap:.2f} < {thresholds.overlap:.2f}); nothing in it contradicts "
        "the context"
    )
    return ClaimCheck(claim, ClaimStatus.UNVERIFIED, score, passage, why)


def _name_check(
    claim: str,
    missing: MissingName,
    score: float,
    passage: Passage,
    grounding: Grounding,
    thresholds: Thresholds,
) -> ClaimCheck:
    """A name no source holds is unsupported (:func:`_unsupported_status`); one that
    extends a name the context holds proves nothing either way — the same entity named
    longer, or another one — so it is a doubt unless unsupported names fail."""
    name = missing.name
    if missing.beside is not None and not thresholds.unsupported_fails:
        why = (
            f"names {name!r} beside {missing.beside!r}, which the context holds: the same "
            "entity named longer, or another one"
        )
        return ClaimCheck(claim, ClaimStatus.UNVERIFIED, score, passage, why, name, passage.text)
    why = f"names {name!r}, which the context does not"
    status = _unsupported_status(grounding, thresholds)
    return ClaimCheck(claim, status, score, passage, why, name, passage.text)


def _unsupported_status(grounding: Grounding, thresholds: Thresholds) -> ClaimStatus:
    """What a value or a name no source holds proves. Against retrieved documents it is
    unsupported by definition (a grounded answer says only what its passages say); against
    tool records alone it may be worked out from them (a count, a sum, a date), so it is a
    doubt — unless the team asks unsupported values to fail."""
    if grounding.documents > 0 or thresholds.unsupported_fails:
        return ClaimStatus.UNSUPPORTED_VALUE
    return ClaimStatus.UNVERIFIED


def _missing_check(
    claim: str,
    missing: ValueVerdict,
    score: float,
    passage: Passage,
    grounding: Grounding,
    thresholds: Thresholds,
) -> ClaimCheck:
    """The check of a claim with a value the one rule does not support: a contradiction
    (a record binds another value to the same thing) is a proof; a value nothing holds is
    :func:`_unsupported_status`."""
    raw = missing.value.raw
    if missing.status == "contradicted":
        why = f"states {raw!r} where {missing.quote}"
        return ClaimCheck(claim, ClaimStatus.CONTRADICTED, score, passage, why, raw, missing.quote)
    closest = missing.closest
    near = f" (closest: {closest!r})" if closest else ""
    why = f"states {raw!r}, which the context does not hold{near}"
    status = _unsupported_status(grounding, thresholds)
    return ClaimCheck(claim, status, score, passage, why, raw, closest)


def _against_passage(
    claim: str, score: float, passage: Passage, paraphrased: bool, thresholds: Thresholds
) -> ClaimCheck:
    """A claim the context covers, held against its nearest passage's polarity and
    qualifiers. Only a passage the claim paraphrases can contradict it, and only by
    stating the opposite of the same predicate (a negation dropped or added); a negation
    set against an unrelated sentence, or a restricting word the claim merely adds, is a
    doubt (unverified) — a proof only under ``unsupported = "fail"``."""
    if not passage.prose:  # a record's fields have no polarity or qualifiers to compare
        return ClaimCheck(claim, ClaimStatus.SUPPORTED, score, passage)
    negated = negation_differs(claim, passage.text)
    added = "" if negated else restriction_added(claim, passage.text)
    differs = negated or added
    if not differs:
        return ClaimCheck(claim, ClaimStatus.SUPPORTED, score, passage)
    if not paraphrased:
        why = f"{differs}, but no passage paraphrases it closely enough to contradict it"
        return ClaimCheck(claim, ClaimStatus.UNVERIFIED, score, passage, why)
    if added and not thresholds.unsupported_fails:
        why = f"{added}: a restriction no passage states, which none contradicts either"
        return ClaimCheck(claim, ClaimStatus.UNVERIFIED, score, passage, why)
    return ClaimCheck(claim, ClaimStatus.CONTRADICTED, score, passage, differs, claim, passage.text)
