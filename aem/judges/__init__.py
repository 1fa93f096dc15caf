"""Judges for the LLM checks: the interface, an OpenAI-compatible client, the embedded
default. See ``docs/tests.md``."""

from aem.judges.base import Judge, JudgeConfigError, JudgeRequest, JudgeVerdict
from aem.judges.settings import EMBEDDED, EmbeddedJudgeSettings, OpenAIJudgeSettings

__all__ = [
    "EMBEDDED",
    "EmbeddedJudgeSettings",
    "Judge",
    "JudgeConfigError",
    "JudgeRequest",
    "JudgeVerdict",
    "OpenAIJudgeSettings",
]
