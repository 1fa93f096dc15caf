"""Sinks: where verdicts go after evaluation (OTLP, JSONL, Phoenix), via a durable outbox.

A sink never computes a verdict (design.md); it only reshapes report fields for its wire.
"""

from aem.sinks.base import DeliveryError, Sink
from aem.sinks.jsonl import JsonlSink
from aem.sinks.outbox import Outbox, RetryPolicy
from aem.sinks.records import OutboxItem, verdict_items

__all__ = [
    "DeliveryError",
    "JsonlSink",
    "Outbox",
    "OutboxItem",
    "RetryPolicy",
    "Sink",
    "verdict_items",
]
