"""Judges by name: ``embedded`` always, the rest from ``[judges.<name>]`` tables.

Why by name: tests store a judge's name, and the same name must build the same judge in
every later run, extra evaluation and ``aem checks`` listing. Which class a table builds
is its ``kind``'s (:mod:`aem.judges.kinds`, the ``aem.judges`` entry-point group).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from pydantic import BaseModel

from aem.compare.core import SemanticComparator, lazy_comparator
from aem.compare.settings import CompareSettings
from aem.foundation.strict import closest
from aem.judges.base import Judge, JudgeConfigError
from aem.judges.kinds import JudgeServices, build_from_settings
from aem.judges.settings import EMBEDDED, EmbeddedJudgeSettings


class JudgeTables(Protocol):
    """What building a judge reads of the configuration (``aem.settings.AemConfig`` has
    both): the checked ``[judges.<name>]`` tables, and the comparison settings the embedded
    judge's comparator is built with. A protocol, so the judges never import the schema."""

    @property
    def judges(self) -> Mapping[str, BaseModel]: ...

    @property
    def compare(self) -> CompareSettings: ...


def known_judges(config: JudgeTables) -> list[str]:
    """Every judge name the configuration defines, ``embedded`` first."""
    return [EMBEDDED, *(n for n in config.judges if n != EMBEDDED)]


def build_judge(
    name: str,
    config: JudgeTables,
    comparator: SemanticComparator | Callable[[], SemanticComparator] | None = None,
) -> Judge:
    """The judge called ``name``; an unknown name is an error that lists the known ones."""
    settings = config.judges.get(name)
    if name == EMBEDDED and not isinstance(settings, EmbeddedJudgeSettings):
        settings = EmbeddedJudgeSettings()  # always there; a table only tunes it
    if settings is None:
        known = known_judges(config)
        raise JudgeConfigError(
            f"no judge named {name!r}{closest(name, known)}; known: {', '.join(known)} "
            "(define others in [judges.<name>])"
        )
    services = JudgeServices(name, comparator or lazy_comparator(config.compare))
    return build_from_settings(settings, services)
