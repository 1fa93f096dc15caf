"""Whether a stated value is supported by what the turn saw: the one value verdict.

Used by ``correctness.truthfulness``, ``groundedness`` and ``refusal``: a number, date or id that a
reasoning or answer turn states must appear in what that turn could see — its model input
(user messages, system prompt, history), the results of tool calls among its ancestors in
the turn graph, the documents of ancestor retrievals — or in the case's facts. What a text
states and what a record holds is read in :mod:`aem.evidence.values`; how a value is
worked out from seen ones, in :mod:`aem.evidence.derivations`; what binds it to another
value, in :mod:`aem.evidence.bindings`. :func:`judge_value` weighs them into one
:class:`ValueVerdict` naming the rule that decided; this module also re-exports the names
other modules import from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from aem.compare.extract import StatedValue
from aem.compare.settings import CompareSettings
from aem.evidence.bindings import BINDINGS, Call, Stated, refutation
from aem.evidence.derivations import DERIVATIONS, Cue, ValueClaim, aggregate_cue, derive
from aem.evidence.values import (
    _ARITHMETIC,
    _MAY_HOLD_ARITHMETIC,
    IndexedSeenValues,
    Quantity,
    SeenValues,
    ValueIndex,
    arithmetic_results,
    counted_noun,
    day_range,
    day_without_year,
    is_distinctive,
    keyed_quantities,
    list_lengths,
    near_any,
    noun_stem,
    said_at_boundary,
)
from aem.foundation.vocabulary import DOCUMENT_NOUNS

__all__ = [
    "_ARITHMETIC",
    "_MAY_HOLD_ARITHMETIC",
    "Cue",
    "IndexedSeenValues",
    "Quantity",
    "SeenValues",
    "ValueIndex",
    "ValueStatus",
    "ValueVerdict",
    "aggregate_cue",
    "arithmetic_results",
    "counted_noun",
    "day_range",
    "day_without_year",
    "derive",
    "is_distinctive",
    "judge_value",
    "keyed_quantities",
    "list_lengths",
    "near_any",
    "said_at_boundary",
]

ValueStatus = Literal["supported", "derived", "contradicted", "unverified", "not checkable"]


@dataclass(frozen=True, slots=True)
class ValueVerdict:
    """What the sources say of one stated value, and the rule that decided it.

    ``status``: ``supported`` (said by a source: ``rule`` is ``verbatim`` or
    ``tolerance``), ``derived`` (worked out from what the turn saw: ``rule`` names the
    derivation, ``quote`` shows it), ``contradicted`` (a source binds another value to the
    same thing: ``rule`` names the binding, ``quote`` is the source's value), ``unverified``
    (nothing supports or contradicts it: a suspect; ``closest`` is the nearest candidate
    of its kind), ``not checkable`` (not worth checking: ``quote`` says why).
    """

    value: StatedValue
    status: ValueStatus
    rule: str = ""
    quote: str = ""
    closest: str | None = None

    @property
    def open(self) -> bool:
        """Neither supported nor set aside: contradicted, or a suspect."""
        return self.status in ("contradicted", "unverified")

    def proves(self, unsupported_fails: bool) -> bool:
        """Whether the value fails its turn: a contradiction always; a suspect only where
        the team asks unsupported values to fail (``[verdicts] unsupported = "fail"``) —
        the one place that setting acts on a value."""
        return self.status == "contradicted" or (self.status == "unverified" and unsupported_fails)


def judge_value(
    value: StatedValue,
    seen: SeenValues,
    settings: CompareSettings,
    *,
    text: str = "",
    own: Iterable[StatedValue] = (),
    calls: Sequence[Call] = (),
    date_slack_days: int = 0,
) -> ValueVerdict:
    """The one value verdict of truthfulness, groundedness and refusal on ``value``
    (stated in ``text``, whose values are ``own``), from plain data: what the turn saw
    (``seen``) and the calls that ran. In order: not worth checking
    (:func:`is_distinctive`; a count of what nothing lists); said in what the turn saw
    (:meth:`SeenValues.supports`: a date with a year matches its year, a long digit run
    matches digit for digit, values match at token boundaries; "in 5 days" also by its
    five days); worked out, or its written arithmetic refuted
    (:data:`aem.evidence.derivations.DERIVATIONS`); bound to another value by a source
    (:data:`aem.evidence.bindings.BINDINGS`); else unverified."""
    if not is_distinctive(value, text):
        return ValueVerdict(value, "not checkable", "distinctive", "not distinctive")
    noun = counted_noun(value, text)
    if noun is not None and _counts_checkable(value) and not _enumerated(noun, seen, text):
        why = f"nothing the turn saw lists {noun}"
        return ValueVerdict(value, "not checkable", "enumerated", why)
    if seen.supports(value, settings, date_slack_days=date_slack_days):
        text_seen = seen.text_at_hand()
        verbatim = text_seen is not None and said_at_boundary(value.raw.lower(), text_seen)
        return ValueVerdict(value, "supported", "verbatim" if verbatim else "tolerance")
    own = tuple(own)
    if value.kind == "number":
        found = DERIVATIONS.first(ValueClaim.of(value, text, own, seen, settings))
        if found is not None:
            rule, how = found
            if isinstance(how, str):
                return ValueVerdict(value, "derived", rule, how)
            wrong = refutation(value.raw, how)
            return ValueVerdict(value, "contradicted", rule, wrong.quote, wrong.bound)
    bound = BINDINGS.first(Stated.of(value, text, calls, settings, seen.ids, seen))
    if bound is not None:
        rule, wrong = bound
        return ValueVerdict(value, "contradicted", rule, wrong.quote, wrong.bound)
    return ValueVerdict(value, "unverified", closest=seen.closest(value))


def _counts_checkable(value: StatedValue) -> bool:
    """Checkable as a count only: a small bare integer (no unit, under 100)."""
    return value.unit is None and value.number < 100


def _enumerated(noun: str, seen: SeenValues, text: str) -> bool:
    """Whether what the turn saw enumerates ``noun``, so a count of it is a checkable
    fact: a list under a key naming it, a result that is itself a list (its rows),
    retrieved documents counted as documents, or an
    amount of it per unit ("2 free bags per passenger"). "Compare the two menus" in a
    plan counts nothing the context lists: no proof either way."""
    for counted in seen.counts:
        if counted.key == "documents":
            if noun.startswith(DOCUMENT_NOUNS):
                return True
        elif counted.key is None or noun_stem(counted.key.rsplit(".", 1)[-1]) == noun_stem(noun):
            return True  # a result that is a list: its rows are what the answer counts
    per_unit = re.compile(rf"\b{re.escape(noun_stem(noun))}\w*\s+(?:per|each|for each)\b")
    return bool(per_unit.search(seen.text) or per_unit.search(text.lower()))
