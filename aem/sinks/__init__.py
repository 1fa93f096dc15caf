"""Sinks: where verdicts go after evaluation, for ``aem serve`` (through its outbox) and
``aem audit --sink`` (:mod:`aem.sinks.delivery`, one run, synchronously).

A sink never computes a verdict; it only reshapes the delivery items (:mod:`records`) for
its wire, so every sink shows the same verdicts. Shipped: JSONL, OTLP (gRPC, or HTTP
through the bounded POST of :mod:`http`), Phoenix span annotations, MLflow assessments,
and standard output (``aem serve`` with no sink configured). Adding a sink is one module
with a sink class that owns its settings (:class:`~aem.sinks.base.SinkType`: ``name``,
``Settings``, ``from_settings``; a :class:`Sink` with ``deliver`` and ``close``) plus one
line in the ``aem.sinks`` entry-point group; :mod:`registry` loads the group and decides
what ``[sinks.<name>]`` may name.
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
