"""``check.tool_calls``: the share of the case's functions the agent called as tools.

Only calls made *as tools* count (a tool-call turn in the session); a call counts even
when the function failed, and order and arguments are ignored — those are
``tool_choice`` / ``argument_validity``'s questions. The threshold is a share 1–100 %,
default 100 %: with two functions and 50 %, either one passes.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from aem.cases import CaseField
from aem.checks.answer import landing_turn
from aem.checks.base import BaseCheck
from aem.metrics.base import MetricContext, MetricSettings, result
from aem.model import Evidence, MetricResult, Outcome

TOOL_CALLS = "check.tool_calls"


class ToolCallsSettings(MetricSettings):
    threshold: float = Field(
        default=100.0, ge=1, le=100, description="share of the case's functions, in percent"
    )


def percent(share: float) -> str:
    """``0.666…`` → ``67%``."""
    return f"{share * 100:.0f}%"


class ToolCallsCheck(BaseCheck[ToolCallsSettings]):
    name = TOOL_CALLS
    Settings = ToolCallsSettings
    case_fields = (
        CaseField("expected_tool_calls", list, note="at least one function"),
        CaseField("match_tools", list, required=False),
    )
    summary = (
        "rule: the share of the case's functions called as tools; errored "
        "calls count, order and arguments do not"
    )
    threshold_unit = "%"

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        turn = landing_turn(context)
        if turn is None:
            return
        if context.case is None:
            return
        skip = self.skip_reason(context.case)
        if skip:
            yield result(TOOL_CALLS, turn, Outcome.SKIP, skip)
            return
        # ``match_tools`` scopes the comparison for this check as for the matcher: an
        # expected call to a tool outside it is not required.
        scope = context.case.match_tools
        wanted = list(
            dict.fromkeys(
                c.name
                for c in context.case.expected_tool_calls or []
                if scope is None or c.name in scope
            )
        )
        if not wanted:
            yield result(TOOL_CALLS, turn, Outcome.SKIP, "no expected function is in match_tools")
            return
        by_name: dict[str, list[str]] = {}
        for t in context.tool_turns:
            if t.tool_call is not None:
                by_name.setdefault(t.tool_call.name, []).extend(t.span_ids[:1])
        called = [n for n in wanted if n in by_name]
        share = len(called) / len(wanted)
        threshold = self.settings.threshold
        outcome = Outcome.PASS if share * 100 >= threshold - 1e-9 else Outcome.FAIL
        missing = [n for n in wanted if n not in by_name]
        why = f"{len(called)} of {len(wanted)} functions called ({percent(share)}, threshold "
        why += f"{threshold:g}%)" + (f"; not called: {', '.join(missing)}" if missing else "")
        yield result(
            TOOL_CALLS,
            turn,
            outcome,
            why,
            score=round(share * 100, 1),
            threshold=threshold,
            evidence=[
                Evidence(span_id=by_name[n][0] if by_name[n] else None, actual=n) for n in called
            ]
            + [Evidence(expected=n, detail="not called") for n in missing],
        )
