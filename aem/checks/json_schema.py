"""``check.json_schema``: the final answer is only JSON and valid against the case's
``json_schema`` (formats checked). Pass or fail, no threshold. A case with a
``json_schema`` asks for it in ``aem audit`` too (:mod:`aem.checks.base`).

The explanation names the first violation — where (a JSON path), what the schema
expected, what the answer had — because "does not match the schema" alone sends the
reader to diff the two by hand.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from jsonschema import exceptions, validators

from aem.cases import Case, CaseField
from aem.checks.answer import NO_ANSWER, answer_turn, landing_turn
from aem.checks.base import BaseCheck
from aem.checks.json_only import read_json_only
from aem.foundation.model import Evidence, MetricResult, Outcome
from aem.metrics.base import MetricContext, NoSettings, result

JSON_SCHEMA = "check.json_schema"
JSON_SCHEMA_FIELD = CaseField("json_schema", dict)


def json_path(path: Iterable[Any]) -> str:
    """``["items", 0, "id"]`` → ``$.items[0].id``."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def first_violation(schema: dict[str, Any], value: Any) -> exceptions.ValidationError | None:
    """The first error the validator reports, formats checked; raises SchemaError."""
    cls = validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return next(iter(validator.iter_errors(value)), None)


def describe(error: exceptions.ValidationError) -> str:
    """``at $.age: expected type 'integer', got "ten"``."""
    got = json.dumps(error.instance, ensure_ascii=False, default=str)
    got = got if len(got) <= 80 else got[:79] + "…"
    return (
        f"at {json_path(error.absolute_path)}: expected {error.validator} "
        f"{error.validator_value!r}, got {got} ({error.message})"
    )


class JsonSchemaCheck(BaseCheck[NoSettings]):
    name = JSON_SCHEMA
    case_fields = (JSON_SCHEMA_FIELD,)
    summary = (
        "rule: the answer is only JSON (raw or one code block) and valid "
        "against the case's schema; pass or fail"
    )

    def asked_by_case(self, case: Case) -> bool:
        """A case with a ``json_schema`` asks for this check: no other metric reads it."""
        return JSON_SCHEMA_FIELD.given(case)

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        turn = landing_turn(context)
        if turn is None or context.case is None or not self.asked(context):
            return
        skip = self.skip_reason(context.case)
        if skip or context.case.json_schema is None:
            yield result(JSON_SCHEMA, turn, Outcome.SKIP, skip or "no case")
            return
        answer = answer_turn(context)
        if answer is None:
            yield self.unmet(turn, NO_ANSWER)
            return
        value, problem = read_json_only(answer.text or "")
        if problem is not None:
            proof = Evidence(span_id=next(iter(answer.span_ids), None), detail=problem)
            why = f"not only JSON: {problem}"
            yield result(JSON_SCHEMA, answer, Outcome.FAIL, why, score=0.0, evidence=[proof])
            return
        try:
            error = first_violation(context.case.json_schema, value)
        except exceptions.SchemaError as exc:
            why = f"the case's json_schema is not a valid schema: {exc.message}"
            yield result(JSON_SCHEMA, answer, Outcome.ERROR, why)
            return
        if error is None:
            yield result(
                JSON_SCHEMA, answer, Outcome.PASS, "only JSON, valid against the schema", score=1.0
            )
            return
        yield result(
            JSON_SCHEMA,
            answer,
            Outcome.FAIL,
            f"schema violation {describe(error)}",
            score=0.0,
            evidence=[
                Evidence(
                    span_id=answer.span_ids[0] if answer.span_ids else None,
                    field=json_path(error.absolute_path),
                    expected=f"{error.validator} {error.validator_value!r}",
                    actual=error.instance,
                )
            ],
        )
