"""Which answer metric a case gets: groundedness for ordinary and edge questions, refusal
for out-of-scope ones.

Why by the case's ``type``: an ``oos`` question has no answer in the knowledge base, so
"every claim rests on the context" is the wrong test there — the right one is an honest
"I don't know". A case with no ``type`` (or no case at all) gets groundedness when the
session retrieved something or called a tool (there is a context to rest on), and never
the refusal metric, which needs someone to have said the question is out of scope.
"""

from __future__ import annotations

from aem.evidence import session_gathered
from aem.foundation.model import Turn, TurnKind
from aem.metrics.base import CaseField, MetricContext

GROUNDED_TYPES = ("happy", "edge")
OOS = "oos"


def case_type(context: MetricContext) -> str | None:
    """The case's ``type``, or None without a case or a type."""
    return context.case.type if context.case is not None else None


def gets_groundedness(context: MetricContext) -> bool:
    kind = case_type(context)
    if kind is None:
        return session_gathered(context.session)
    return kind in GROUNDED_TYPES


def gets_refusal(context: MetricContext) -> bool:
    return case_type(context) == OOS


def refusal_owns(context: MetricContext, turn: Turn) -> bool:
    """An answer of an ``oos`` case: the values it states are the refusal metric's to judge,
    so ``correctness.truthfulness`` leaves their support alone (one finding, one metric; an
    honest refusal repeating the question's date in another form is no failure at all)."""
    return turn.kind is TurnKind.ANSWER and gets_refusal(context)


# A case field of its own (not a Case attribute): read through its declaration, typed.
REQUIRES_CONTEXT = CaseField("requires_context", bool, required=False)


def requires_context(context: MetricContext, default: bool) -> bool:
    """The case's ``requires_context``, else ``default``; CaseFieldError if not a boolean."""
    value = REQUIRES_CONTEXT.value(context.case)
    return default if value is None else bool(value)
