"""What every sink promises the outbox.

Why "return the delivered keys" instead of raising on the first failure: a batch can
partly succeed (the events went, the spans did not); the outbox marks exactly what the
downstream accepted and retries the rest, so nothing is sent twice by our own doing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from aem.sinks.records import OutboxItem


class DeliveryError(RuntimeError):
    """The downstream did not accept a batch; the outbox retries it with backoff."""


class Sink(Protocol):
    """A destination for verdict items. ``name`` keys its rows in the outbox."""

    name: str

    def deliver(self, items: Sequence[OutboxItem]) -> Sequence[str]:
        """Send items; return the keys the downstream accepted (raise = none)."""
        ...

    def close(self) -> None:
        """Release connections; called once at shutdown after the last delivery."""
        ...
