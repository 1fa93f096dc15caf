"""``judge.step``: a judge reads the session turn by turn and says whether each turn is a
mistake given exactly what that turn saw (the step-by-step protocol of the Who&When
failure-attribution benchmark).

Why: most real agent failures are reasoning slips no rule sees — a wrong assumption,
code that runs but is wrong, a useless click. Its failures are causes like any other
metric's, so propagation makes the earliest judged mistake the root cause and labels
the later failing turns ``prior_action_failed``. Opt-in: with no ``judge`` set it gives
no results at all. Calls are capped per session and per run (the metric instance lives
for the run); turns past a cap are ``skip`` with the cap named, never guessed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from pydantic import Field

from aem.foundation.model import MetricResult, Outcome, Turn
from aem.judges.base import Judge, JudgeConfigError, JudgeRequest
from aem.judges.verdicts import verdict_result
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result

NAME = "judge.step"
_PIECE = 2_000


class JudgeStepSettings(MetricSettings):
    judge: str | None = Field(default=None, description="judge name; none: the metric is off")
    max_calls_per_session: int = Field(default=30, ge=1, description="judge calls per session")
    max_calls_per_run: int = Field(default=500, ge=1, description="judge calls per run")


def _clip(text: str) -> str:
    return text if len(text) <= _PIECE else text[: _PIECE - 1] + "…"


def _did(turn: Turn) -> list[str]:
    call = turn.tool_call
    lines = [f"kind: {turn.kind.value}, name: {turn.name}"]
    if call is not None:
        lines.append(f"called {call.name} with {_clip(call.arguments_raw or str(call.arguments))}")
        if call.error:
            lines.append(f"the call failed: {_clip(call.error)}")
        elif call.has_result:
            lines.append(f"result: {_clip(call.result_raw or str(call.result))}")
    if turn.text:
        lines.append(f"wrote: {_clip(turn.text)}")
    return lines


def render_step(context: MetricContext, turn: Turn) -> str:
    """What ``turn`` saw (its inputs, its ancestors' results) and what it did."""
    graph = context.graph
    ancestors = {t.turn_id for t in graph.ancestors(turn.turn_id)} if graph is not None else set()
    earlier = [t for t in context.session.turns if t.turn_id in ancestors]
    saw = [f"input: {_clip(text)}" for text in turn.seen_inputs or context.session.user_inputs]
    for t in earlier:
        saw.extend(f"earlier step {t.turn_id}: {line}" for line in _did(t))
    return "\n".join(
        [
            f"Step {turn.turn_id}.",
            "What the agent had seen:",
            *(saw or ["(nothing recorded)"]),
            "What the agent did in this step:",
            *_did(turn),
        ]
    )


class JudgeStep(BaseMetric[JudgeStepSettings]):
    name = NAME
    band = "judged"
    evaluator_type = "judge"
    Settings = JudgeStepSettings

    def __init__(self, settings: JudgeStepSettings | None = None, judge: Judge | None = None):
        super().__init__(settings)
        self.judge = judge
        self.calls = 0
        self._lock = threading.Lock()

    def _take_call(self, used: int) -> str | None:
        """Reserve one judge call, or say which cap stops it."""
        if used >= self.settings.max_calls_per_session:
            return f"judge call cap reached ({self.settings.max_calls_per_session} per session)"
        with self._lock:
            if self.calls >= self.settings.max_calls_per_run:
                return f"judge call cap reached ({self.settings.max_calls_per_run} per run)"
            self.calls += 1
        return None

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        if self.judge is None and self.settings.judge is None:
            return
        if self.judge is None:
            try:
                self.judge = context.services.judge(str(self.settings.judge))
            except JudgeConfigError as exc:
                for turn in context.session.turns:
                    yield result(NAME, turn, Outcome.ERROR, f"judge error: {exc}")
                return
        used = 0
        for turn in sorted(context.session.turns, key=lambda t: t.index):
            capped = self._take_call(used)
            if capped:
                yield result(NAME, turn, Outcome.SKIP, capped)
                continue
            used += 1
            verdict = self.judge.judge(JudgeRequest(check=NAME, step=render_step(context, turn)))
            yield verdict_result(NAME, turn, verdict)
