"""The contract every backend span source keeps, and opening one by its URL scheme.

A source is opened from a URL (``phoenix://127.0.0.1:6006/default``,
``mlflow+https://host/experiment``) and yields spans page by page, so memory stays bounded
by one page whatever the project holds. Problems with single records become
:class:`InputIssue` items (the rest of the page is kept); a backend that cannot be read at
all raises :class:`BackendError`, naming the backend and the page; a bound reached after
some pages were read (:mod:`collectors.backends.bounded`) is an issue too, and what was
read is kept.

Which scheme opens which source is the ``aem.sources`` entry-point group (loaded by the
extension kernel, :mod:`aem.foundation.plugins`): Phoenix and MLflow are registered there like any
team's own source, which is one module and one entry-point line.

``aem audit --since last`` needs to know what a backend received since the previous run.
A source that can page in the order the backend stored its spans says so by having
:meth:`IngestionOrdered.ingested`; the ledger (:mod:`aem.pulls`) keeps its mark. Any other
source is read by start time with an overlap and a set of spans already seen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Protocol, runtime_checkable
from urllib.parse import SplitResult, urlsplit

from pydantic import BaseModel, ConfigDict

from aem.foundation import plugins
from aem.foundation.model import InputIssue, SpanRecord


class BackendError(RuntimeError):
    """A backend could not be read: down, refusing, or answering pages we cannot parse."""


@dataclass(frozen=True)
class SourceWindow:
    """Which spans to pull: start times in ``[since, until)``, in Unix nanoseconds."""

    since_unix_nano: int | None = None
    until_unix_nano: int | None = None


class SpanSource(Protocol):
    """One backend project or experiment, read page by page."""

    @property
    def name(self) -> str:
        """The URL it was opened from, without credentials (for reports and errors)."""
        ...

    def batches(self, window: SourceWindow, issues: list[InputIssue]) -> Iterator[list[SpanRecord]]:
        """Spans in pages, oldest first; bad records appended to ``issues``."""
        ...


@dataclass
class Ingested:
    """Spans a backend stored after a mark, and the mark just after them: the next
    incremental read starts there (``None``: the batch moved nothing forward)."""

    spans: list[SpanRecord]
    mark: str | None


@runtime_checkable
class IngestionOrdered(Protocol):
    """A source that pages in the order its backend stored the spans (Phoenix's row ids).

    Why the ledger prefers it: "what arrived since the last run" is then exact. Spans that
    reach the backend late (a conversation exported after the run, a root span that
    ends last) or that carry a wrong clock (a start time in 2099) are news once, when they
    arrive, whatever their start time.
    """

    def ingested(
        self, mark: str | None, until_unix_nano: int | None, issues: list[InputIssue]
    ) -> Iterator[Ingested]:
        """Spans stored after ``mark`` (all with ``None``) that started before
        ``until_unix_nano``, in storage order, each batch with the mark after it."""
        ...

    def defer_issues(self, issues: list[InputIssue]) -> None:
        """Issues the ledger met while finding the news, for the next read to report."""
        ...


# A span that starts this long after the moment it is read was dated by a wrong clock.
FUTURE_TOLERANCE_NANOS = 10 * 60 * 1_000_000_000


def future_starts(spans: list[SpanRecord], now_unix_nano: int, issues: list[InputIssue]) -> None:
    """Report each span that starts in the future: it is kept and evaluated, but its start
    time is not trusted (``--since last`` never takes it as the newest start read)."""
    for span in spans:
        if span.start_unix_nano > now_unix_nano + FUTURE_TOLERANCE_NANOS:
            ahead = (span.start_unix_nano - now_unix_nano) / 86_400e9
            issues.append(
                InputIssue.at_span(
                    "future_start",
                    f"span {span.span_id} starts {ahead:,.1f} day(s) after it was read: the "
                    "clock that dated it is wrong; the span is kept, its start not trusted",
                    span,
                )
            )


class DeferredIssues:
    """Issues held back for a source's next read (the ledger's planning read has no
    report of its own: what it met is said by the audit's read)."""

    def __init__(self) -> None:
        self._deferred: list[InputIssue] = []

    def defer_issues(self, issues: list[InputIssue]) -> None:
        self._deferred.extend(issues)

    def take_deferred(self, issues: list[InputIssue]) -> None:
        issues.extend(self._deferred)
        self._deferred.clear()


Opener = Callable[[SplitResult, Mapping[str, str]], SpanSource]


@dataclass(frozen=True)
class SourceServices:
    """What AEM lends a span source it opens: the URL (credentials never in it) and the
    environment its tokens come from."""

    url: SplitResult
    environ: Mapping[str, str]


class NoSourceSettings(BaseModel):
    """The settings of a source that has none: any key in ``[sources.<scheme>]`` is an
    error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class OpenerSource:
    """A span-source plug-in made of an opener: what an ``aem.sources`` entry point names.

    ``name`` is the URL scheme (``phoenix`` opens ``phoenix://`` and ``phoenix+https://``);
    ``opener`` is imported on first use, so listing the plug-ins (or a file audit) never
    loads a backend's HTTP client. A source with settings of its own declares a class
    with ``name``, ``Settings`` and ``from_settings(settings, services)`` instead.
    """

    name: str
    opener: str  # "module:function", the function taking (url parts, environ)
    Settings: type[BaseModel] = NoSourceSettings

    def from_settings(self, settings: BaseModel, services: SourceServices) -> SpanSource:
        del settings  # an opener reads everything it needs from the URL
        module, _, function = self.opener.partition(":")
        open_url: Opener = getattr(import_module(module), function)
        return open_url(services.url, services.environ)


# Environment variables that hold a credential: lent only to AEM's own sources and to a
# source the configuration names in a ``[sources.<scheme>]`` table.
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE", re.I)


def lent_environ(environ: Mapping[str, str], trusted: bool) -> Mapping[str, str]:
    """The environment a source is given: all of it when ``trusted``; otherwise without
    the variables that name a credential (``PHOENIX_API_KEY``, ``MLFLOW_TRACKING_TOKEN``…)."""
    if trusted:
        return environ
    return {name: value for name, value in environ.items() if not _SECRET.search(name)}


# Sources registered in this process by a host application (``register_scheme``); a
# package registers its own in the ``aem.sources`` entry-point group instead.
_OPENERS: dict[str, Opener] = {}


def register_scheme(scheme: str, opener: Opener) -> None:
    """Make ``scheme://`` (and ``scheme+https://``) URLs open with ``opener`` in this
    process (an entry point in ``aem.sources`` does it for every process)."""
    _OPENERS[scheme] = opener


def open_source(
    url: str, environ: Mapping[str, str], settings: Mapping[str, BaseModel] | None = None
) -> SpanSource:
    """The source for ``url``; ``environ`` supplies tokens (never the URL itself) — to
    AEM's own sources, and to another distribution's only when the configuration names it
    in a ``[sources.<scheme>]`` table; ``settings`` are those checked tables (none: each
    source's defaults)."""
    parts = urlsplit(url)
    scheme = parts.scheme.split("+", 1)[0]
    if scheme in _OPENERS:
        return _OPENERS[scheme](parts, environ)
    loaded = plugins.load(plugins.SOURCE)
    plugin = loaded.get(scheme)
    if plugin is None:
        broken = next((e for e in loaded.errors if e.entry_point == scheme), None)
        if broken is not None:
            raise BackendError(f"trace source {url!r}: {broken}")
        known = ", ".join(sorted({*loaded.names(), *_OPENERS})) or "none"
        raise BackendError(
            f"unknown trace source {url!r}: expected one of {known}://HOST:PORT/NAME"
        )
    configured = settings or {}
    chosen = plugin.settings(configured.get(scheme))
    lent = lent_environ(environ, plugin.builtin or scheme in configured)
    source: SpanSource = plugin.build(chosen, SourceServices(parts, lent))
    return source
