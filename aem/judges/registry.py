"""Judges by name: ``embedded`` always, the rest from ``[judges.<name>]`` tables.

Why by name: tests store a judge's name, and the same name must build the same judge in
every later run, extra evaluation and ``aem checks`` listing.
"""

from __future__ import annotations

from collections.abc import Callable

from aem.compare.core import SemanticComparator
from aem.config import AemConfig, closest
from aem.judges.base import Judge, JudgeConfigError
from aem.judges.embedded import EmbeddedJudge
from aem.judges.openai import OpenAIJudge
from aem.judges.settings import EMBEDDED, EmbeddedJudgeSettings, OpenAIJudgeSettings


def known_judges(config: AemConfig) -> list[str]:
    """Every judge name the configuration defines, ``embedded`` first."""
    return [EMBEDDED, *(n for n in config.judges if n != EMBEDDED)]


def build_judge(
    name: str,
    config: AemConfig,
    comparator: SemanticComparator | Callable[[], SemanticComparator] | None = None,
) -> Judge:
    """The judge called ``name``; an unknown name is an error that lists the known ones."""
    settings = config.judges.get(name)
    if name == EMBEDDED or isinstance(settings, EmbeddedJudgeSettings):
        embedded = settings if isinstance(settings, EmbeddedJudgeSettings) else None
        return EmbeddedJudge(comparator or (lambda: SemanticComparator(config.compare)), embedded)
    if isinstance(settings, OpenAIJudgeSettings):
        return OpenAIJudge(name, settings)
    known = known_judges(config)
    raise JudgeConfigError(
        f"no judge named {name!r}{closest(name, known)}; known: {', '.join(known)} "
        "(define others in [judges.<name>])"
    )
