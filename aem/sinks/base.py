"""What every sink promises the outbox.

Why "return the delivered keys" instead of raising on the first failure: a batch can
partly succeed (the events went, the spans did not); the outbox marks exactly what the
downstream accepted and retries the rest, so nothing is sent twice by our own doing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from aem.sinks.records import SPAN_ITEM_KINDS, OutboxItem


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


def item_kinds_of(sink: Sink) -> frozenset[str]:
    """The item kinds ``sink`` takes: its ``item_kinds``, else ``metric`` and ``turn``."""
    return frozenset(getattr(sink, "item_kinds", SPAN_ITEM_KINDS))


def deliver_to(sink: Sink, items: Sequence[OutboxItem]) -> list[str]:
    """``sink.deliver`` for the items of the kinds it takes; the keys it accepted, and
    those of the items it does not take (nothing to send is nothing left to retry).

    Why a sink names its kinds (``item_kinds``, default ``metric`` and ``turn``): session
    items came later; a sink written before them (a team's own, through ``aem.sinks``)
    would meet a payload with no span id. It keeps working, and never sees one.
    """
    kinds = item_kinds_of(sink)
    taken = [i for i in items if i.kind in kinds]
    passed = [i.key for i in items if i.kind not in kinds]
    return [*(sink.deliver(taken) if taken else []), *passed]


class SinkSettings(BaseModel):
    """Base of every sink's settings: a typo in ``[serve.sinks.<name>]`` is an error."""

    model_config = ConfigDict(extra="forbid")


class SinkType(Protocol):
    """What an ``aem.sinks`` entry point names: a sink class that owns its settings.

    Why the class carries its settings model: adding a sink is then one module and one
    registration line; ``[serve.sinks.<name>]`` is validated against ``Settings`` and
    ``python -m aem.serve`` grows a ``--<name>-<field>`` flag per field, with no table of
    sinks to edit anywhere else.
    """

    name: ClassVar[str]
    Settings: ClassVar[type[SinkSettings]]

    @classmethod
    def from_settings(cls, settings: Any, services: Any = None) -> Sink: ...
