"""The in-memory sink: keeps what it is given, for tests of ``aem serve`` and of what a
sink receives, and for a library user who wants the verdict items in the process.

Why a sink of its own and an entry point (``memory``): it is built and configured like
every sink (``[sinks.memory]``, no keys), so a test exercises the same path a real sink
takes; ``aem.testing`` re-exports it, where it used to live.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from aem.sinks.base import DeliveryError, SinkSettings
from aem.sinks.records import ALL_ITEM_KINDS, OutboxItem


class MemorySettings(SinkSettings):
    """The in-memory sink takes no settings: any key in ``[sinks.memory]`` is an error."""


class InMemorySink:
    """A sink that keeps what it is given (``items``, ``payloads()``).

    It follows the :class:`aem.sinks.base.Sink` protocol, so it can be handed to
    ``LiveServer(settings, evaluate=..., sinks=[InMemorySink()])``; ``fail_next`` makes the
    next deliveries raise, to exercise the outbox's retries.
    """

    name = "memory"
    Settings = MemorySettings
    item_kinds = ALL_ITEM_KINDS  # every item, to look at

    @classmethod
    def from_settings(cls, settings: MemorySettings, services: object = None) -> InMemorySink:
        del settings, services
        return cls()

    def __init__(self) -> None:
        self.items: list[OutboxItem] = []
        self.fail_next = 0
        self.closed = False
        self._lock = threading.Lock()

    def deliver(self, items: Sequence[OutboxItem]) -> list[str]:
        with self._lock:
            if self.fail_next > 0:
                self.fail_next -= 1
                raise DeliveryError("in-memory sink told to fail")
            self.items.extend(items)
        return [item.key for item in items]

    def close(self) -> None:
        self.closed = True

    def payloads(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Delivered payloads (optionally of one kind: ``"metric"``, ``"turn"`` or
        ``"session"``)."""
        with self._lock:
            return [i.payload for i in self.items if kind is None or i.kind == kind]
