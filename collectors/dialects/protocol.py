"""What a dialect is: the one interface session building and the assembler rely on.

Kept as small as the OTel SDK's ``SpanProcessor``/``SpanExporter``: a name, a place in
the order, which spans it claims, how it reads one, and three optional hooks (session-key
attributes, declared tool schemas, a repair over the whole session). Everything
dialect-specific lives behind it, so adding a dialect is one module plus one entry point
in ``aem.dialects`` — no edit to session building, the assembler or the dispatch.
See ``docs/dialects.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from aem.foundation.model import SpanRecord
from collectors.dialects.base import Operation


@dataclass(frozen=True, slots=True)
class SessionKey:
    """An attribute that names a session, with its global priority (lower wins).

    Priorities are global rather than per dialect because one trace may mix dialects and
    the assembler must pick the same key whichever dialect's span arrives first.
    """

    attribute: str
    priority: int


@runtime_checkable
class Dialect(Protocol):
    """One telemetry dialect (a semantic convention, or a framework's own shape).

    ``band``: dialects are asked band by band (:data:`aem.foundation.plugins.DIALECT_BANDS`:
    ``framework``, ``convention``, ``legacy``, ``vendor``, ``fallback``, ``plugin``), in
    group order inside a band; the first that claims a span and observes something wins.
    ``exclusive``: a span it claims is never offered to later dialects even when it
    observes nothing there (its glue spans may carry copies of another dialect's
    attributes that must not be read twice).
    """

    name: str
    band: str
    exclusive: bool
    session_keys: Sequence[SessionKey]

    def claims(self, span: SpanRecord) -> bool:
        """Whether the span is written in this dialect (cheap: a marker attribute)."""
        ...

    def observe(self, span: SpanRecord) -> Operation | None:
        """What a claimed span means, or ``None`` for glue (chains, tasks, prompts)."""
        ...

    def tool_definitions(self, span: SpanRecord) -> dict[str, Any]:
        """Tool JSON Schemas declared on the span, ``{tool name: parameters schema}``."""
        ...

    def repair(self, operations: Mapping[str, Operation], spans: Mapping[str, SpanRecord]) -> None:
        """Fill what the dialect leaves out of single spans, from the session around them.

        ``operations`` are by span id, from every dialect; edit them in place.
        """
        ...


class BaseDialect:
    """Defaults for the optional parts, so a dialect writes only what it reads."""

    name: str = ""
    band: str = "plugin"
    exclusive: bool = False
    session_keys: Sequence[SessionKey] = ()

    def claims(self, span: SpanRecord) -> bool:
        return False

    def observe(self, span: SpanRecord) -> Operation | None:
        return None

    def tool_definitions(self, span: SpanRecord) -> dict[str, Any]:
        return {}

    def repair(self, operations: Mapping[str, Operation], spans: Mapping[str, SpanRecord]) -> None:
        return None
