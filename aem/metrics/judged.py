"""Groundedness and refusal through a configured judge (an LLM behind chat completions).

Why a step request: the judge must see exactly what the agent saw when it answered —
the passages of its retrievals and tool results and the user's question — and the
answer, and say yes or no. That is the shape of ``judge.step`` (a ``mistake`` flag and a
reason); the judge module picks the metric's own prompt by the request's ``check``.
A judge error is an ``error`` outcome (the gate leaves it out of its denominator), a
judge that cannot decide is ``skip``; neither is ever counted as a pass or a fail.
"""

from __future__ import annotations

from aem.evidence import Grounding
from aem.foundation.model import MetricResult, Turn
from aem.judges import verdicts
from aem.judges.base import Judge, JudgeRequest, JudgeVerdict
from aem.judges.settings import EMBEDDED
from aem.metrics.base import MetricContext

_PIECE = 1_500
_MAX_SOURCES = 40


def wants_judge(name: str | None) -> bool:
    """A judge other than the embedded default is configured."""
    return name is not None and name != EMBEDDED


def build(name: str, context: MetricContext) -> Judge:
    """The judge ``name`` from ``[judges.<name>]``; raises JudgeConfigError if unknown."""
    return context.services.judge(name)


def _clip(text: str) -> str:
    return text if len(text) <= _PIECE else text[: _PIECE - 1] + "…"


def render(grounding: Grounding, questions: list[str], answer: str) -> str:
    """What the judge reads: the numbered sources, the question, the answer."""
    lines = ["The user's question:", *(f"  {_clip(q)}" for q in questions or ["(none recorded)"])]
    lines.append("What the agent had found (numbered as the agent may cite them):")
    for source in grounding.sources[:_MAX_SOURCES]:
        lines.append(f"  [{source.position}] {source.label}: {_clip(source.text)}")
    if not grounding.sources:
        lines.append("  (nothing: no retrieval and no tool result)")
    lines += ["The agent's answer:", answer]
    return "\n".join(lines)


def ask(judge: Judge, check: str, text: str) -> JudgeVerdict:
    """One judge call; a judge that raises is turned into an error verdict."""
    try:
        return judge.judge(JudgeRequest(check=check, step=text))
    except Exception as exc:  # a judge must not end the evaluation
        return JudgeVerdict.error(getattr(judge, "name", "judge"), f"judge error: {exc}")


def metric_verdict(name: str, turn: Turn, verdict: JudgeVerdict) -> MetricResult:
    """The judge's yes/no as the metric's result (1 / 0), the judge and its reason in the
    evidence: the shared converter, worded as the judged metrics word it."""
    return verdicts.verdict_result(
        name,
        turn,
        verdict,
        why=verdicts.METRIC_WHY,
        detail=verdict.explanation[:500],
        mistake_score=True,
    )
