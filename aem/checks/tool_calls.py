"""``check.tool_calls``: the share of the case's functions the agent called as tools.

Only calls made *as tools* count (a tool-call turn in the session); a call counts even
when the function failed, and order and arguments are ignored — those are
``tool_choice`` / ``argument_validity``'s questions. The threshold is a share 1–100 %,
default 100 %: with two functions and 50 %, either one passes.

In ``aem audit`` it runs only when its ``[metrics."check.tool_calls"]`` table is in the
configuration — ``expected_tool_calls`` asks for ``tool_choice`` there — and leaves out
the functions ``tool_choice`` already reports missing (:mod:`aem.checks.base`).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from aem.cases import Case, CaseField
from aem.checks.answer import landing_turn
from aem.checks.base import BaseCheck
from aem.foundation.model import Evidence, MetricResult, Outcome, Turn
from aem.metrics.base import MetricContext, MetricSettings, result
from aem.metrics.tool_set import TOOL_CHOICE

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
        if turn is None or context.case is None or not self.asked(context):
            return
        skip = self.skip_reason(context.case)
        if skip:
            yield result(TOOL_CALLS, turn, Outcome.SKIP, skip)
            return
        wanted = _wanted(context.case)
        if not wanted:
            yield result(TOOL_CALLS, turn, Outcome.SKIP, "no expected function is in match_tools")
            return
        owned = self._reported_by_tool_choice(context, wanted)
        if owned and owned == wanted:
            why = f"not called: {', '.join(owned)} — reported by {TOOL_CHOICE} in this audit"
            yield result(TOOL_CALLS, turn, Outcome.SKIP, why)
            return
        yield self._share(context, turn, [n for n in wanted if n not in owned], owned)

    def _reported_by_tool_choice(self, context: MetricContext, wanted: list[str]) -> list[str]:
        """The functions never called that ``tool_choice`` reports missing on this session.

        Why: in ``aem audit`` both read the case's ``expected_tool_calls``; ``tool_choice``
        is the audit metric of that field, so a missing call is its finding and this check
        leaves it out rather than report it twice. A dataset test chose this check: there
        it counts every function.
        """
        if self.audit is None or TOOL_CHOICE not in self.audit.running:
            return []
        found = context.tool_set_match
        if found is None:
            return []
        called = _called(context)
        missing = {found.expected_call(i).name for i in found.match.missing}
        return [n for n in wanted if n in missing and n not in called]

    def _share(
        self, context: MetricContext, turn: Turn, wanted: list[str], owned: list[str]
    ) -> MetricResult:
        """The share of ``wanted`` called as tools, against the threshold."""
        by_name = _called(context)
        called = [n for n in wanted if n in by_name]
        share = len(called) / len(wanted)
        threshold = self.settings.threshold
        outcome = Outcome.PASS if share * 100 >= threshold - 1e-9 else Outcome.FAIL
        missing = [n for n in wanted if n not in by_name]
        why = f"{len(called)} of {len(wanted)} functions called ({percent(share)}, threshold "
        why += f"{threshold:g}%)" + (f"; not called: {', '.join(missing)}" if missing else "")
        if owned:
            why += f"; left to {TOOL_CHOICE}, which reports them missing: {', '.join(owned)}"
        return result(
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


def _wanted(case: Case) -> list[str]:
    """The case's functions, each once; ``match_tools`` scopes them for this check as for
    the matcher: an expected call to a tool outside it is not required."""
    scope = case.match_tools
    return list(
        dict.fromkeys(
            c.name for c in case.expected_tool_calls or [] if scope is None or c.name in scope
        )
    )


def _called(context: MetricContext) -> dict[str, list[str]]:
    """The functions called as tools, each with its calls' first span ids."""
    by_name: dict[str, list[str]] = {}
    for t in context.tool_turns:
        if t.tool_call is not None:
            by_name.setdefault(t.tool_call.name, []).extend(t.span_ids[:1])
    return by_name
