"""``groundedness`` as a dataset-test criterion: the groundedness metric for happy / edge
cases, the refusal metric for oos ones (:mod:`aem.runs.gates`), so ``--gate groundedness=0.85``
means the same in ``aem test`` as in ``aem audit``.

Not a metric of its own (its verdict per case is the gate's, from those two metrics):
an ``aem.checks`` entry point like every check, it declares ``decided_by`` (the metrics
that decide it) instead of ``evaluate``, so the metric registry leaves it out. It needs
no field — the metrics decide by the case's type and the session's context, and say why
when they skip.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from aem.cases import CaseField, CaseFields

GROUNDEDNESS = "groundedness"


class GroundednessCriterion:
    name: ClassVar[str] = GROUNDEDNESS
    decided_by: ClassVar[tuple[str, ...]] = ("groundedness", "refusal")
    case_fields: ClassVar[CaseFields] = (
        CaseField(
            "type",
            Literal["happy", "edge", "oos"],
            required=False,
            note="happy / edge / oos; typeless: a session that retrieved or called tools",
        ),
    )
    summary: ClassVar[str] = (
        "happy / edge: every claim rests on what the agent found and cites a "
        'source [N]; oos: an honest "I don\'t know" (metrics groundedness and refusal; '
        "embedded, or their configured judge); pass or fail"
    )
    threshold_unit: ClassVar[str | None] = None
    judged: ClassVar[bool] = False
