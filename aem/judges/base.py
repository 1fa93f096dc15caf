"""The judge interface: what a check asks a judge, and what a judge answers.

Why an interface: a check must not care whether its score came from a hosted model, a
local vLLM/Ollama server or AEM's embedded comparison — only whether a score exists,
and if not, whether the judge *could not* score (``skip``, with the reason) or *failed*
(``error``: a judge error, excluded from pass rate and mean). A judge never invents a
number to fill either gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Status = Literal["scored", "skip", "error"]


@dataclass(frozen=True)
class JudgeRequest:
    """One evaluation to judge: the check, the case's fields, and the agent's answer.

    ``step`` is set instead of the answer fields by ``judge.step``: the one turn under
    judgement, rendered as exactly what that turn saw and did.

    What the check itself declares travels with the request, so a judge needs no table of
    checks: ``instructions`` (the rubric and the check's prompt, ``{nonce}`` standing for
    the data delimiters' nonce), ``extra`` (the check's own case fields, as named data
    blocks) and ``embedded_scoring`` (which of the embedded judge's scorings fits it;
    None: the embedded judge cannot score it).
    """

    check: str
    question: str = ""
    answer: str = ""
    reference_answer: str | None = None
    judge_instruction: str | None = None
    step: str | None = None
    instructions: str | None = None
    extra: tuple[tuple[str, str], ...] = ()
    embedded_scoring: str | None = None


@dataclass(frozen=True)
class JudgeVerdict:
    """A judge's answer: a 0–10 score (or a mistake flag for steps) and its reason.

    ``status`` is ``scored`` with a score, ``skip`` when the judge honestly cannot score
    this request, ``error`` when it failed to (timeout, server error, unreadable reply).
    """

    judge: str
    status: Status
    explanation: str
    score: float | None = None
    mistake: bool | None = None
    usage: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def skip(cls, judge: str, reason: str) -> JudgeVerdict:
        return cls(judge=judge, status="skip", explanation=reason)

    @classmethod
    def error(cls, judge: str, reason: str, usage: dict[str, Any] | None = None) -> JudgeVerdict:
        return cls(judge=judge, status="error", explanation=reason, usage=usage or {})


@runtime_checkable
class Judge(Protocol):
    """Scores one request. Must not raise for a judge failure: return an ``error``."""

    name: str

    def judge(self, request: JudgeRequest) -> JudgeVerdict: ...


def verdict_of(judge: Judge, request: JudgeRequest) -> JudgeVerdict:
    """``judge``'s verdict on ``request``; a judge that raises anyway (a plug-in's bug)
    gives a judge error for this request, and the run goes on."""
    try:
        return judge.judge(request)
    except Exception as exc:
        name = getattr(judge, "name", "judge")
        return JudgeVerdict.error(name, f"judge error: {type(exc).__name__}: {exc}")


class JudgeConfigError(ValueError):
    """A judge is named that the configuration does not define, or is misconfigured."""
