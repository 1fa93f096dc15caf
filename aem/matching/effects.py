"""Whether a tool only reads or changes state, and what says so.

Why: a call the case does not list is harmless when it only looked something up (``ls``,
``get_user``) and is the failure itself when it booked, cancelled or sent something
nobody asked for. Telling the two apart needs a source, and the verdict names it:

1. the case (``read_only_tools``, ``state_changing_tools``), then the configuration
   (``[matching] read_only_tools``, ``state_changing_tools``): a person said so;
2. the tool's definition in the trace — MCP annotations ``readOnlyHint`` /
   ``destructiveHint`` (hints the tool's author gives; a person's word comes first);
3. else the verb of the tool's name, read by :data:`aem.foundation.vocabulary.TOOL_READ_VERBS` and
   :data:`aem.foundation.vocabulary.TOOL_WRITE_VERBS`.

Nothing says → unknown, and unknown is never read as "only reads".
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise
from typing import Any

from aem.foundation.vocabulary import (
    TOOL_NAME_CONJUNCTIONS,
    TOOL_NAME_FILLER,
    TOOL_PHRASAL_READ,
    TOOL_PHRASAL_WRITE,
    TOOL_READ_VERBS,
    TOOL_VERB_MODIFIERS,
    TOOL_VERB_PARTICLES,
    TOOL_WRITE_VERBS,
)
from aem.matching.names import tool_key


class Effect(Enum):
    READ = "read"
    WRITE = "write"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ToolEffect:
    """A tool's effect and why it is believed: ``read verb 'ls'``, ``the case's
    read_only_tools``, ``readOnlyHint: true in its definition``."""

    effect: Effect
    why: str

    @property
    def reads(self) -> bool:
        return self.effect is Effect.READ


_CHANNEL = re.compile(r"<\|[^|>]*\|>.*$", re.DOTALL)
_SEGMENTS = re.compile(r"__|[.:/]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORDS = re.compile(r"[\s_\-]+")


def _words(segment: str) -> list[str]:
    text = _CAMEL.sub("_", segment)
    return [w for w in _WORDS.split(text.casefold()) if w and w not in TOOL_NAME_FILLER]


def _verb_of(words: list[str]) -> ToolEffect | None:
    """The effect the words of one name segment state, or None when they name no verb."""
    while len(words) > 1 and words[0] in TOOL_VERB_MODIFIERS:
        words = words[1:]
    if not words:
        return None
    joined = [w for before, w in pairwise(words) if before in TOOL_NAME_CONJUNCTIONS]
    writes = [w for w in joined if w in TOOL_WRITE_VERBS]
    first, second = words[0], (words[1] if len(words) > 1 else "")
    if (first, second) in TOOL_PHRASAL_WRITE:
        return ToolEffect(Effect.WRITE, f"write verb '{first} {second}'")
    if first in TOOL_WRITE_VERBS:
        return ToolEffect(Effect.WRITE, f"write verb '{first}'")
    if writes:
        return ToolEffect(Effect.WRITE, f"write verb '{writes[0]}' after '{first}'")
    if (first, second) in TOOL_PHRASAL_READ:
        return ToolEffect(Effect.READ, f"read verb '{first} {second}'")
    if first in TOOL_READ_VERBS:
        if second in TOOL_VERB_PARTICLES:
            return ToolEffect(Effect.UNKNOWN, f"'{first} {second}' is no known verb")
        if any(w not in TOOL_READ_VERBS for w in joined):
            return ToolEffect(Effect.UNKNOWN, f"'{first}' joined with '{joined[0]}'")
        return ToolEffect(Effect.READ, f"read verb '{first}'")
    last = words[-1]
    if len(words) > 1 and last in TOOL_WRITE_VERBS:
        return ToolEffect(Effect.WRITE, f"write verb '{last}'")
    if len(words) > 1 and last in TOOL_READ_VERBS:
        return ToolEffect(Effect.READ, f"read verb '{last}'")
    return None


def effect_by_name(name: str) -> ToolEffect:
    """The effect the verb of a tool's name states, in any spelling.

    The last namespace segment is read first (``fs.ls``, ``files/list``,
    ``mcp__github__create_issue``); its first word, else its last, is the verb.

    >>> [effect_by_name(n).why for n in ("fs.ls", "getUserId", "files/list")]
    ["read verb 'ls'", "read verb 'get'", "read verb 'list'"]
    >>> effect_by_name("mcp__github__create_issue").effect, effect_by_name("cd").effect
    (<Effect.WRITE: 'write'>, <Effect.UNKNOWN: 'unknown'>)
    >>> effect_by_name("get_or_create_user").why
    "write verb 'create' after 'get'"
    """
    text = _CHANNEL.sub("", name).strip()
    for segment in reversed([s for s in _SEGMENTS.split(text) if s]):
        found = _verb_of(_words(segment))
        if found is not None:
            return found
    return ToolEffect(Effect.UNKNOWN, "no read or write verb in its name")


_READ_ONLY_KEYS = ("readOnlyHint", "read_only_hint", "readOnly", "read_only")
_DESTRUCTIVE_KEYS = ("destructiveHint", "destructive_hint", "destructive")


def _hint(where: Mapping[str, Any], keys: Sequence[str]) -> tuple[str, bool] | None:
    for key in keys:
        value = where.get(key)
        if isinstance(value, bool):
            return key, value
    return None


def effect_by_annotations(definition: Any) -> ToolEffect | None:
    """The effect a tool's definition declares (MCP ``annotations``), or None.

    ``readOnlyHint: true`` reads; ``readOnlyHint: false`` or ``destructiveHint: true``
    writes. The hints may sit in ``annotations`` or on the definition itself.

    >>> effect_by_annotations({"annotations": {"readOnlyHint": True}}).why
    'readOnlyHint: true in its definition'
    >>> effect_by_annotations({"name": "x"}) is None
    True
    """
    if not isinstance(definition, Mapping):
        return None
    places = [definition.get("annotations"), definition]
    for where in (p for p in places if isinstance(p, Mapping)):
        read_only = _hint(where, _READ_ONLY_KEYS)
        destructive = _hint(where, _DESTRUCTIVE_KEYS)
        if destructive is not None and destructive[1]:
            return ToolEffect(Effect.WRITE, f"{destructive[0]}: true in its definition")
        if read_only is not None:
            key, value = read_only
            effect = Effect.READ if value else Effect.WRITE
            return ToolEffect(effect, f"{key}: {str(value).lower()} in its definition")
    return None


@dataclass(frozen=True)
class DeclaredEffects:
    """Tools a person declared read-only or state-changing, and where: ``where`` leads
    the list's name in the reason (``the case's``, ``[matching]``)."""

    where: str
    read_only: Collection[str] = ()
    state_changing: Collection[str] = ()


class ToolEffects:
    """Each tool's effect from the first source that names it (order in the module doc).

    >>> effects = ToolEffects([DeclaredEffects("the case's", read_only=["cd"])])
    >>> effects.of("cd").why, effects.of("rm").why
    ("the case's read_only_tools", "write verb 'rm'")
    """

    def __init__(
        self,
        declared: Sequence[DeclaredEffects] = (),
        annotations: Mapping[str, Any] | None = None,
    ) -> None:
        self._declared = [
            (d.where, {tool_key(n) for n in d.read_only}, {tool_key(n) for n in d.state_changing})
            for d in declared
        ]
        self._annotations = dict(annotations or {})
        self._known: dict[str, ToolEffect] = {}

    def of(self, name: str) -> ToolEffect:
        found = self._known.get(name)
        if found is None:
            found = self._known[name] = self._resolve(name)
        return found

    def _resolve(self, name: str) -> ToolEffect:
        key = tool_key(name)
        for where, read_only, state_changing in self._declared:
            if key in state_changing:  # both lists: the careful reading wins
                return ToolEffect(Effect.WRITE, f"{where} state_changing_tools")
            if key in read_only:
                return ToolEffect(Effect.READ, f"{where} read_only_tools")
        declared = effect_by_annotations(self._annotations.get(name))
        return declared if declared is not None else effect_by_name(name)


NO_DECLARATIONS = ToolEffects()
