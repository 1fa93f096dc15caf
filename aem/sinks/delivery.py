"""One audit's verdicts through sinks, synchronously: ``aem audit … --sink NAME``.

Why not the outbox ``aem serve`` uses: an audit is one run that ends; its verdicts either
all reach the sink or the command fails and says which sink refused what. Items go in
chunks with a bounded number of retries (a sink returns the keys it accepted, so a retry
sends only the rest), and every sink AEM ships is idempotent on the items' keys, so a
re-run after a failure, or after the traces changed, replaces what the first one wrote.

Settings come from ``[sinks.<name>]`` of the configuration file, the same fields as
``[serve.sinks.<name>]``. A Phoenix sink whose table names no ``project`` takes it from
the ``--from phoenix://HOST/PROJECT`` the audit reads (one project; with several, none),
so the session annotations of two projects that share a session id stay apart.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aem.foundation.http import RetryPolicy
from aem.foundation.model import SessionReport
from aem.sinks.base import DeliveryError, Sink, SinkSettings, deliver_to
from aem.sinks.phoenix import PhoenixSettings, phoenix_project
from aem.sinks.records import OutboxItem, verdict_items
from aem.sinks.registry import build_sinks, sink_types, validate_sink_settings

CHUNK_ITEMS = 500
# A chunk is sent again (only what the sink did not accept) after a doubling pause.
DELIVERY_RETRY = RetryPolicy(attempts=3, backoff_seconds=0.5)
ATTEMPTS = DELIVERY_RETRY.attempts


def audit_sinks(
    names: Sequence[str], tables: Mapping[str, Any], sources: Sequence[str] = ()
) -> list[Sink]:
    """The sinks ``--sink`` names, each configured by its ``[sinks.<name>]`` table; a
    Phoenix sink with no ``project`` gets the one the ``--from`` URLs ``sources`` read."""
    known = sink_types()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(
            f"--sink {', '.join(unknown)}: unknown sink; known sinks: {', '.join(sorted(known))}"
        )
    missing = [n for n in names if n not in tables]
    if missing:
        raise ValueError(
            f"--sink {', '.join(missing)}: no [sinks.{missing[0]}] table in the configuration "
            "file (--config), with the same fields as [serve.sinks.<name>]"
        )
    try:
        settings = validate_sink_settings({n: tables[n] for n in names})
    except ValueError as exc:  # the serve wording names the table it came from
        raise ValueError(str(exc).replace("serve.sinks.", "sinks.")) from exc
    return build_sinks({n: _with_project(s, sources) for n, s in settings.items()})


def _with_project(settings: SinkSettings, sources: Sequence[str]) -> SinkSettings:
    """``settings`` of a Phoenix sink with no project given the audit's one Phoenix
    project (none when it reads several, or none); any other sink's as they are."""
    if not isinstance(settings, PhoenixSettings) or settings.project is not None:
        return settings
    projects = {p for p in map(phoenix_project, sources) if p is not None}
    if len(projects) != 1:
        return settings
    return settings.model_copy(update={"project": projects.pop()})


def deliver_reports(
    reports: Iterable[SessionReport],
    sinks: Sequence[Sink],
    *,
    completed_at: float | None = None,
    provenance: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, int]:
    """Every verdict item of ``reports`` through every sink; items delivered per sink.
    ``provenance`` names each metric's evaluator on its items (:mod:`aem.foundation.provenance`).

    Raises :class:`DeliveryError` naming the sink when one still refuses after the retries.
    """
    when = time.time() if completed_at is None else completed_at
    items = [
        item
        for report in reports
        for item in verdict_items(report, completed_at=when, provenance=provenance)
    ]
    delivered: dict[str, int] = {}
    for sink in sinks:
        for start in range(0, len(items), CHUNK_ITEMS):
            _deliver_chunk(sink, items[start : start + CHUNK_ITEMS])
        delivered[sink.name] = len(items)
    return delivered


def _deliver_chunk(sink: Sink, chunk: Sequence[OutboxItem]) -> None:
    pending = list(chunk)
    problem = "accepted only part of the batch"
    for attempt in range(ATTEMPTS):
        if attempt:
            DELIVERY_RETRY.pause(attempt)
        try:
            accepted = set(deliver_to(sink, pending))
        except DeliveryError as exc:
            problem = str(exc)
            continue
        pending = [i for i in pending if i.key not in accepted]
        if not pending:
            return
    raise DeliveryError(
        f"sink {sink.name}: {len(pending)} of {len(chunk)} verdict items not delivered after "
        f"{ATTEMPTS} attempts: {problem}"
    )


def close_all(sinks: Iterable[Sink]) -> None:
    for sink in sinks:
        sink.close()
