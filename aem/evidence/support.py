"""Whether a stated value is supported by what the turn saw: the one verdict.

Used by ``correctness.truthfulness`` and ``groundedness``: a number, date or id that a
reasoning or answer turn states must appear in what that turn could see — its model input
(user messages, system prompt, history), the results of tool calls among its ancestors in
the turn graph, the documents of ancestor retrievals — or in the case's facts. What a text
states and what a record holds is read in :mod:`aem.evidence.values`; how a value is
worked out from seen ones, in :mod:`aem.evidence.derivations`. This module weighs them
into one :class:`ValueSupport` and re-exports the names other modules import from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from aem.compare.extract import StatedValue
from aem.compare.settings import CompareSettings
from aem.evidence.derivations import Cue, aggregate_cue, derive
from aem.evidence.values import (
    _ARITHMETIC,
    _MAY_HOLD_ARITHMETIC,
    LABEL_BEFORE,
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
from aem.vocabulary import DOCUMENT_NOUNS

__all__ = [
    "_ARITHMETIC",
    "_MAY_HOLD_ARITHMETIC",
    "Cue",
    "IndexedSeenValues",
    "Quantity",
    "SeenValues",
    "SupportStatus",
    "ValueIndex",
    "ValueSupport",
    "aggregate_cue",
    "arithmetic_results",
    "counted_noun",
    "day_range",
    "day_without_year",
    "derive",
    "is_distinctive",
    "keyed_quantities",
    "list_lengths",
    "near_any",
    "said_at_boundary",
    "support_value",
]

SupportStatus = Literal["supported", "contradicted", "unsupported", "not checkable"]


@dataclass(frozen=True, slots=True)
class ValueSupport:
    """What the context says of one stated value.

    ``how`` (when supported): ``verbatim`` (said as such), ``tolerance`` (equal after
    normalisation, within the tolerances) or ``derived`` (``quote`` holds the
    derivation); ``quote`` of a contradiction is the record's other value for the same
    key; ``closest`` of an unsupported value is the nearest candidate of its kind.
    """

    value: StatedValue
    status: SupportStatus
    how: Literal["verbatim", "tolerance", "derived"] | None = None
    quote: str = ""
    closest: str | None = None

    @property
    def fails(self) -> bool:
        """A value a reviewer can check is wrong: contradicted or unsupported."""
        return self.status in ("contradicted", "unsupported")


def support_value(
    value: StatedValue,
    seen: SeenValues,
    settings: CompareSettings,
    *,
    text: str = "",
    own: Iterable[StatedValue] = (),
    date_slack_days: int = 0,
) -> ValueSupport:
    """The one value-support rule of truthfulness and groundedness: whether ``value``
    (stated in ``text``, whose values are ``own``) is worth checking
    (:func:`is_distinctive`), said in what the turn saw (:meth:`SeenValues.supports`:
    a date with a year matches its year, a long digit run matches digit for digit,
    values match at token boundaries), produced by the records (:func:`derive`), given
    otherwise by a record under the same key (contradicted), or none of these."""
    if not is_distinctive(value, text):
        return ValueSupport(value, "not checkable", quote="not distinctive")
    noun = counted_noun(value, text)
    if noun is not None and _counts_checkable(value) and not _enumerated(noun, seen, text):
        return ValueSupport(value, "not checkable", quote=f"nothing the turn saw lists {noun}")
    if seen.supports(value, settings, date_slack_days=date_slack_days):
        text_seen = seen.text_at_hand()
        verbatim = text_seen is not None and said_at_boundary(value.raw.lower(), text_seen)
        return ValueSupport(value, "supported", "verbatim" if verbatim else "tolerance")
    how = derive(value, text, own, seen, settings)
    if how is not None:
        return ValueSupport(value, "supported", "derived", quote=how)
    other = _same_key_value(value, text, seen)
    if other is not None:
        return ValueSupport(value, "contradicted", quote=other, closest=other)
    return ValueSupport(value, "unsupported", closest=seen.closest(value))


def _counts_checkable(value: StatedValue) -> bool:
    """Checkable as a count only: a small bare integer (no unit, under 100)."""
    return value.unit is None and float(value.value) < 100  # type: ignore[arg-type]


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


def _same_key_value(value: StatedValue, text: str, seen: SeenValues) -> str | None:
    """The value a record gives under the key the claim states ``value`` under ("Total
    price: $503" against ``"total_price": 480``) — only when the record has that key
    once, so it is the same thing, not another row's."""
    if value.kind != "number" or not text:
        return None
    line_start = text.rfind("\n", 0, value.start) + 1
    found = LABEL_BEFORE.search(text[line_start : value.start])
    if found is None:
        return None
    label = re.sub(r"\W+", "_", found.group("label").strip().lower())
    same = [q for q in seen.quantities if q.key and q.key.rsplit(".", 1)[-1].lower() == label]
    if len(same) != 1:
        return None
    return f"{same[0].key} = {same[0].raw} in {same[0].source}"
