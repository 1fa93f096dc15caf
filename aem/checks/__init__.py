"""Checks: metrics of the answer turn that dataset tests are made of (docs/tests.md).

Rule checks (``check.json_schema``, ``check.tool_calls``) need no judge; LLM checks
(``check.relevance``, ``check.faithfulness``, ``check.task_completion``) are scored 0–10
by a judge (:mod:`aem.judges`). ``judge.step`` asks a judge about every turn. Each check
declares the case fields it reads (:mod:`aem.checks.base`); the ``aem.checks``
entry-point group registers them (:mod:`aem.checks.registry`).
"""

from aem.checks.registry import (
    applicable,
    check_names,
    find_check,
    judged_checks,
    missing_fields,
    registered_checks,
)

__all__ = [
    "applicable",
    "check_names",
    "find_check",
    "judged_checks",
    "missing_fields",
    "registered_checks",
]
