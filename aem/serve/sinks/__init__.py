"""Sinks: where verdicts go after evaluation (OTLP, JSONL, Phoenix), via a durable outbox.

A sink never computes a verdict; it only reshapes report fields for its wire, so every
sink shows the same verdicts. Adding a sink is one module with a ``name`` and a
``deliver(items)`` method (see :class:`Sink`) plus one line in ``build_sinks``.
"""

from aem.serve.sinks.base import DeliveryError, Sink
from aem.serve.sinks.jsonl import JsonlSink
from aem.serve.sinks.outbox import Outbox, RetryPolicy
from aem.serve.sinks.records import OutboxItem, verdict_items

__all__ = [
    "DeliveryError",
    "JsonlSink",
    "Outbox",
    "OutboxItem",
    "RetryPolicy",
    "Sink",
    "verdict_items",
]
