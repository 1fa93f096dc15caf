"""Checks: metrics of the answer turn that dataset tests are made of (docs/tests.md).

Rule checks (``check.json_schema``, ``check.tool_calls``) need no judge; LLM checks
(``check.relevance``, ``check.faithfulness``, ``check.task_completion``) are scored 0–10
by a judge (:mod:`aem.judges`). ``judge.step`` asks a judge about every turn.
"""

from aem.checks.fields import ALL_CHECKS, LLM_CHECKS, RULE_CHECKS, applicable, missing_fields

__all__ = ["ALL_CHECKS", "LLM_CHECKS", "RULE_CHECKS", "applicable", "missing_fields"]
