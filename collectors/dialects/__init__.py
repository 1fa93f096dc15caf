"""Dialects: each turns the spans it claims into operations (``base.py``).

Every dialect implements :class:`~collectors.dialects.protocol.Dialect` and is registered
in the ``aem.dialects`` entry-point group; :mod:`collectors.dialects.registry` loads them
in order and answers for all of them. See ``docs/dialects.md``.
"""

from __future__ import annotations

from collectors.dialects.registry import observe, tool_definitions

__all__ = ["observe", "tool_definitions"]
