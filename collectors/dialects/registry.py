"""Which dialects exist and in what order: the ``aem.dialects`` entry-point group, loaded
and put in band order by the extension kernel (:mod:`aem.foundation.plugins`).

The built-ins are registered the same way in ``pyproject.toml``, so a third-party
dialect is as much a first-class citizen as ours and the bands — not an if-chain —
decide who reads a span. Loaded once per process; :func:`reload` forgets the cache
(tests, or a host that installs a plug-in at run time).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aem.foundation import plugins
from aem.foundation.model import SpanRecord
from collectors.dialects.base import Operation
from collectors.dialects.protocol import Dialect, SessionKey

ENTRY_POINT_GROUP = plugins.DIALECT.group


@cache
def dialects() -> tuple[Dialect, ...]:
    """Every registered dialect, in the order they are asked about a span (asked per
    span, so cached once per process: :func:`reload` forgets them).

    A broken one is the error (a span it would have read would silently be glue); none
    at all means the package metadata is missing (a source tree that was never
    installed): every span would silently be glue, so that is an error, not an empty audit.
    """
    loaded = plugins.load(plugins.DIALECT)
    loaded.raise_first_error()
    found: tuple[Dialect, ...] = tuple(p.target for p in loaded.plugins)
    if not found:
        raise plugins.PluginError(
            "dialect",
            "(none)",
            "the installed distributions",
            f"no dialects registered in the {ENTRY_POINT_GROUP!r} entry-point group; "
            "install AEM (pip install -e ./record -e .) so its built-in dialects are registered",
        )
    return found


@cache
def session_keys() -> tuple[str, ...]:
    """Session-key attributes of all dialects, best first (an attribute counted once)."""
    keys: dict[str, SessionKey] = {}
    for dialect in dialects():
        for key in dialect.session_keys:
            if key.attribute not in keys or key.priority < keys[key.attribute].priority:
                keys[key.attribute] = key
    return tuple(k.attribute for k in sorted(keys.values(), key=lambda k: k.priority))


def reload() -> None:
    """Forget the loaded dialects; the next call reads the entry points again."""
    plugins.reload()
    dialects.cache_clear()
    session_keys.cache_clear()


def observe(span: SpanRecord) -> Operation | None:
    """What this span means for AEM, or ``None`` for glue: the first dialect that claims
    it and observes something wins, unless an exclusive dialect claimed it first."""
    for dialect in dialects():
        if dialect.claims(span):
            observed = dialect.observe(span)
            if observed is not None or dialect.exclusive:
                return observed
    return None


def tool_definitions(span: SpanRecord) -> dict[str, Any]:
    """Tool JSON Schemas declared on a span in any dialect; an earlier dialect wins a name."""
    found: dict[str, Any] = {}
    for dialect in dialects():
        for name, schema in dialect.tool_definitions(span).items():
            found.setdefault(name, schema)
    return found


def repair(operations: dict[str, Operation], spans: dict[str, SpanRecord]) -> None:
    """Every dialect's session-wide repair, in dialect order."""
    for dialect in dialects():
        dialect.repair(operations, spans)
