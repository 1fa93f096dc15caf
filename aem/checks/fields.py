"""Which case fields each check needs, in one place: the metrics skip on it and the test
runner counts evaluations (the 2,000 cap) with it, so both always agree.

A case without the fields is not evaluated by that check: its result is ``skip`` with
the reason, and it counts in no pass rate, mean or cap.
"""

from __future__ import annotations

from aem.cases import Case

RELEVANCE = "check.relevance"
FAITHFULNESS = "check.faithfulness"
TASK_COMPLETION = "check.task_completion"
JSON_SCHEMA = "check.json_schema"
TOOL_CALLS = "check.tool_calls"
# The groundedness criterion as a dataset-test check: groundedness for happy / edge
# cases, refusal for oos ones (aem.gates), so ``--gate groundedness=0.85`` means the same
# in ``aem test`` as in ``aem audit``.
GROUNDEDNESS = "groundedness"
LLM_CHECKS = (RELEVANCE, FAITHFULNESS, TASK_COMPLETION)
RULE_CHECKS = (JSON_SCHEMA, TOOL_CALLS, GROUNDEDNESS)
ALL_CHECKS = (*LLM_CHECKS, *RULE_CHECKS)
# Checks with no per-evaluation threshold to copy into a test (a match, or a verdict whose
# run-level minimum is the gate).
NO_THRESHOLD = (JSON_SCHEMA, GROUNDEDNESS)

NEEDS = {
    RELEVANCE: "question",
    FAITHFULNESS: "question",
    TASK_COMPLETION: "reference_answer or judge_instruction",
    JSON_SCHEMA: "json_schema",
    TOOL_CALLS: "expected_tool_calls (at least one function)",
    GROUNDEDNESS: "type happy / edge / oos (typeless: a session that retrieved or called tools)",
}


def missing_fields(check: str, case: Case | None) -> str | None:
    """Why ``check`` does not evaluate ``case``, or None when it does."""
    if case is None:
        return "no case for this session"
    if check in (RELEVANCE, FAITHFULNESS):
        ok = bool(case.question)
    elif check == TASK_COMPLETION:
        ok = bool(case.reference_answer or case.judge_instruction)
    elif check == JSON_SCHEMA:
        ok = case.json_schema is not None
    elif check == TOOL_CALLS:
        ok = bool(case.expected_tool_calls)
    elif check == GROUNDEDNESS:
        ok = True  # the metrics decide by type and context, and say why when they skip
    else:
        raise ValueError(f"unknown check {check!r}")
    return None if ok else f"the case has no {NEEDS[check]}"


def applicable(checks: list[str] | tuple[str, ...], case: Case) -> list[str]:
    """The checks of ``checks`` that evaluate ``case``."""
    return [c for c in checks if missing_fields(c, case) is None]
