"""Sinks: where verdicts go after evaluation (OTLP, JSONL, Phoenix).

A sink never computes a verdict; it only reshapes report fields for its wire, so every
sink shows the same verdicts. Adding a sink is one module with a ``name`` and a
``deliver(items)`` method (see :class:`Sink`) plus one line in ``build_sinks``.
"""

from aem.sinks.base import DeliveryError, Sink
from aem.sinks.jsonl import JsonlSink
from aem.sinks.records import OutboxItem, verdict_items

__all__ = [
    "DeliveryError",
    "JsonlSink",
    "OutboxItem",
    "Sink",
    "verdict_items",
]
