"""Judge kinds: the ``aem.judges`` entry-point group (loaded by the extension kernel,
:mod:`aem.foundation.plugins`), and the checking of judge tables.

A judge kind is a class with three declarations::

    class MyJudge:
        kind = "mine"                    # [judges.<name>] kind = "mine" chooses it
        Settings = MyJudgeSettings       # a pydantic model: the table's other keys

        @classmethod
        def from_settings(cls, settings, services): ...   # -> a Judge

registered in a package's ``pyproject.toml`` as ``[project.entry-points."aem.judges"]
mine = "my_package:MyJudge"``. AEM's own kinds, ``embedded`` and ``openai``, are
registered the same way. ``services`` (:class:`JudgeServices`) is what AEM lends a judge:
its name (a kind is configured under many names) and the semantic comparator.

Why a registry: a team adds a judge (a house model gateway, a rules engine, a recorded
replay) without editing AEM, and its table is validated exactly like a built-in's — at
load, with errors that name the key (``judges.local.base_urll: unknown setting``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, create_model

from aem.foundation import plugins

if TYPE_CHECKING:
    from aem.compare.core import SemanticComparator
    from aem.judges.base import Judge

EMBEDDED = "embedded"


@dataclass(frozen=True)
class JudgeServices:
    """What AEM lends a judge kind's ``from_settings``: the judge's name, and the
    comparator or a factory of it (so a judge that never compares text never loads the
    embedding model)."""

    name: str
    comparator: SemanticComparator | Callable[[], SemanticComparator]


def _loaded() -> plugins.Loaded:
    return plugins.load(plugins.JUDGE_KIND)


def validate_judge_settings(table: Any) -> BaseModel:
    """A ``[judges.<name>]`` table → its kind's settings; ``ValidationError`` locations
    are relative to the table (``("kind",)``, ``("base_url",)``): a missing or unknown
    kind is an error at ``kind`` listing the kinds there are."""
    if isinstance(table, BaseModel):
        return table
    kinds = [*_loaded().names(), *(e.entry_point for e in _loaded().errors)]
    choice: Any = Literal[tuple(kinds)] if kinds else str
    data = dict(table) if isinstance(table, dict) else table
    chosen = create_model("JudgeKind", kind=(choice, ...)).model_validate(
        {"kind": data.get("kind")} if isinstance(data, dict) and "kind" in data else data
    )
    model = _loaded().require(cast(Any, chosen).kind, "judges.<name>.kind").settings_model
    if "kind" not in model.model_fields:
        data = {k: v for k, v in data.items() if k != "kind"}
    return model.model_validate(data)


def build_from_settings(settings: BaseModel, services: JudgeServices) -> Judge:
    """Judge ``services.name`` of the registered kind whose settings ``settings`` are."""
    for plugin in _loaded().plugins:
        if type(settings) is plugin.settings_model:
            built: Judge = plugin.build(settings, services)
            return built
    raise ValueError(f"no registered judge kind has settings {type(settings).__name__}")


__all__ = ["EMBEDDED", "JudgeServices", "build_from_settings", "validate_judge_settings"]
