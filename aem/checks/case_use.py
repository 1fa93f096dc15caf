"""Case fields a run cannot use, said once: never accepted in silence.

Why: a cases file with ``reference_answer`` and ``judge_instruction`` audited with no
judge configured came out all ``ok`` with exit 0 — the reader could not tell "the answers
match the references" from "nothing compared them". The fields only a judge reads are
named with what would read them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aem.cases import Case, declared_fields

# Read by nothing but a judged check's request (aem/checks/llm.py): without a judge,
# nothing in an audit looks at them.
JUDGE_ONLY_FIELDS = ("reference_answer", "judge_instruction")


def _judge_reads(metric: Any) -> bool:
    """Whether ``metric`` is a judged check that will ask a judge in this run."""
    judge = getattr(getattr(metric, "settings", None), "judge", None)
    return bool(getattr(metric, "judged", False) and judge)


def unused_case_fields(cases: Mapping[str, Case], metrics: Iterable[Any]) -> list[str]:
    """One line per judge-only field the cases give and no metric of this run will read.

    >>> from aem.cases import Case
    >>> cases = {"s": Case(session_id="s", reference_answer="30 days")}
    >>> unused_case_fields(cases, [])[0].split(":")[0]
    'cases give reference_answer (1 case)'
    """
    running = list(metrics)
    readers = {
        f.name
        for m in running
        if _judge_reads(m)
        for f in declared_fields(getattr(m, "case_fields", ()))
    }
    judged = sorted(m.name for m in running if getattr(m, "judged", False))
    lines = []
    for field in JUDGE_ONLY_FIELDS:
        given = sum(1 for case in cases.values() if getattr(case, field, None))
        if not given or field in readers:
            continue
        checks = f" ({', '.join(judged)})" if judged else ""
        lines.append(
            f"cases give {field} ({given} case{'s' if given != 1 else ''}): it is read by the "
            f"judge checks{checks}, and none has a judge in this run; configure [judges] and "
            "a check's judge, or run `aem test`"
        )
    return lines
