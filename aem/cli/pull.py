"""``aem audit --from URL [--since ISO|last] [--until ISO] [--sink NAME]``: the plumbing.

Why a module apart from :mod:`aem.cli.audit`: the audit command reads files; this module
adds what reading a backend needs around it — opening the sources, the time window, the
incremental ledger (``--since last``, :mod:`aem.pulls`) and delivering the verdicts
through sinks (:mod:`aem.sinks.delivery`). A new backend plugs in below, in
``collectors.backends``, and needs nothing here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer  # noqa: TID251
from pydantic import BaseModel

from aem.foundation.model import AuditReport
from aem.pulls import PullLedger, PullPlan
from aem.sinks.base import Sink
from aem.store import Store, default_store_path
from collectors.backends import BackendError, SourceWindow, SpanSource, open_source
from collectors.backends.settle import (
    DEFAULT_SETTLE_SECONDS,
    Unfinished,
    Waiting,
    Watched,
    WatchedSource,
    max_wait,
    unfinished,
)

FromOption = Annotated[
    list[str] | None,
    typer.Option(
        "--from",
        metavar="URL",
        help="read spans from a tracing backend instead of files: "
        "phoenix://HOST:PORT/PROJECT, mlflow://HOST:PORT/EXPERIMENT_ID, or a scheme a "
        "span-source plug-in registers (repeatable)",
    ),
]
SinceOption = Annotated[
    str | None,
    typer.Option(
        help="with --from: spans that started at or after this ISO-8601 time; 'last': only "
        "sessions new or changed since the previous --since last run (kept in --store)"
    ),
]
UntilOption = Annotated[
    str | None, typer.Option(help="with --from: spans that started before this ISO-8601 time")
]
SinkOption = Annotated[
    list[str] | None,
    typer.Option(
        "--sink",
        metavar="NAME",
        help="also deliver the verdicts through this sink, configured by [sinks.NAME] of "
        "--config (repeatable)",
    ),
]

SettleOption = Annotated[
    float,
    typer.Option(
        min=0,
        metavar="SECONDS",
        help="with --from: when a span read started in the last 10 minutes (the backend is "
        "in use), read those spans again every SECONDS until a read finds nothing new and "
        "the newest is SECONDS old (at most max(30, 6 x SECONDS) s); then say which "
        "sessions look unfinished (--strict: exit 2). 0: read once",
    ),
]

SINCE_LAST = "last"


def unix_nano(text: str, option: str) -> int:
    """An ISO-8601 time (no offset = UTC) as Unix nanoseconds; ValueError naming the option."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"{option} {text!r} is not an ISO-8601 time (or 'last')") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = int(moment.replace(microsecond=0).timestamp())
    return seconds * 1_000_000_000 + moment.microsecond * 1_000


@dataclass
class Pull:
    """The backend side of one audit: sources, window, and the ledger when incremental."""

    sources: list[SpanSource]
    window: SourceWindow
    ledger: PullLedger | None = None
    plans: list[PullPlan] = field(default_factory=list)
    settle_seconds: float = DEFAULT_SETTLE_SECONDS
    on_wait: Waiting | None = None
    watched: dict[str, Watched] = field(default_factory=dict)  # by source name

    def audit_options(self) -> dict[str, Any]:
        """What :func:`aem.audit.audit_paths` takes to read these sources (nothing without
        ``--from``, so an engine that reads files only is called as before); each source
        watched, so :meth:`unfinished` can tell which sessions ended just before the read."""
        if not self.sources:
            return {}
        self.watched = {s.name: Watched(self.settle_seconds, self.on_wait) for s in self.sources}
        sources = [WatchedSource(s, self.watched[s.name]) for s in self.sources]
        if not self.plans:
            return {"sources": sources, "window": self.window}
        [plan] = self.plans  # one source per incremental run (checked in open_pull)
        return {"sources": sources, "window": plan.window, "select": plan.select}

    def settle_notes(self) -> list[str]:
        """What waiting for the backends to settle came to, a line each (none: no wait)."""
        notes = (watched.summary(name) for name, watched in self.watched.items())
        return [note for note in notes if note]

    def unfinished(self, report: AuditReport) -> list[Unfinished]:
        """The sessions of each ``--from`` read that look unfinished (none: files, or none)."""
        sessions = [(s.session_id, s.trace_ids) for s in report.sessions]
        issues = [*report.issues, *(i for s in report.sessions for i in s.issues)]
        found = (unfinished(sessions, issues, w) for w in self.watched.values())
        return [f for f in found if f.count]

    def nothing_new(self) -> bool:
        return bool(self.plans) and all(p.news == 0 for p in self.plans)

    def record(self, report: AuditReport) -> None:
        """The incremental ledger, once the run and its sinks succeeded."""
        if self.ledger is None:
            return
        causes = {s.session_id: len(s.root_causes) for s in report.sessions}
        for plan in self.plans:
            self.ledger.record(plan, causes)


def open_pull(
    urls: Sequence[str],
    since: str | None,
    until: str | None,
    store: Path | None,
    settings: Mapping[str, BaseModel] | None = None,
    settle: float = DEFAULT_SETTLE_SECONDS,
    on_wait: Waiting | None = None,
) -> Pull:
    """Open every ``--from`` source; with ``--since last``, plan the incremental read. The
    read waits for each source to settle (``settle`` seconds,
    :mod:`collectors.backends.settle`; ``on_wait`` hears each wait).

    Raises ValueError (bad option) or BackendError (a source that cannot be read).
    """
    if (since or until) and not urls:
        raise ValueError("--since and --until need --from URL (files are read whole)")
    sources = [open_source(url, os.environ, settings) for url in urls]
    until_ns = unix_nano(until, "--until") if until else None
    since_ns = unix_nano(since, "--since") if since and since != SINCE_LAST else None
    if since == SINCE_LAST and len(sources) != 1:
        raise ValueError("--since last reads one --from source at a time")
    if since != SINCE_LAST:
        return Pull(sources, SourceWindow(since_ns, until_ns), None, [], settle, on_wait)
    ledger = PullLedger(Store(store or default_store_path()))
    plans = [ledger.plan(sources[0], until_ns)]
    return Pull(sources, SourceWindow(None, until_ns), ledger, plans, settle, on_wait)


def configured_sinks(
    names: Sequence[str], tables: Mapping[str, BaseModel], urls: Sequence[str] = ()
) -> list[Sink]:
    """The ``--sink`` sinks, each from its ``[sinks.<name>]`` table, checked when the
    configuration loaded (the file is not read again here); ``urls``, the ``--from``
    sources, name the Phoenix project a Phoenix sink's verdicts are about."""
    from aem.sinks.delivery import audit_sinks

    return audit_sinks(names, tables, urls)


__all__ = [
    "DEFAULT_SETTLE_SECONDS",
    "BackendError",
    "FromOption",
    "Pull",
    "SettleOption",
    "SinceOption",
    "SinkOption",
    "UntilOption",
    "configured_sinks",
    "max_wait",
    "open_pull",
]
