"""The contract every backend span source keeps, and the scheme registry.

A source is opened from a URL (``phoenix://127.0.0.1:6006/default``,
``mlflow+https://host/experiment``) and yields spans page by page, so memory stays bounded
by one page whatever the project holds. Problems with single records become
:class:`InputIssue` items (the rest of the page is kept); a backend that cannot be read at
all raises :class:`BackendError`, naming the backend and the page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Protocol
from urllib.parse import SplitResult, urlsplit

from aem.model import InputIssue, SpanRecord


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


Opener = Callable[[SplitResult, Mapping[str, str]], SpanSource]

_OPENERS: dict[str, Opener] = {}

# The backends AEM ships, imported when their scheme is first asked for: a file audit never
# loads an HTTP client, and adding a backend is one line here (its module registers itself).
BUILT_IN_SCHEMES = {
    "phoenix": "collectors.backends.phoenix",
}


def register_scheme(scheme: str, opener: Opener) -> None:
    """Make ``scheme://`` (and ``scheme+https://``) URLs open with ``opener``."""
    _OPENERS[scheme] = opener


def open_source(url: str, environ: Mapping[str, str]) -> SpanSource:
    """The source for ``url``; ``environ`` supplies tokens (never the URL itself)."""
    parts = urlsplit(url)
    scheme = parts.scheme.split("+", 1)[0]
    if scheme not in _OPENERS and scheme in BUILT_IN_SCHEMES:
        import_module(BUILT_IN_SCHEMES[scheme])
    opener = _OPENERS.get(scheme)
    if opener is None:
        known = ", ".join(sorted({*_OPENERS, *BUILT_IN_SCHEMES})) or "none"
        raise BackendError(
            f"unknown trace source {url!r}: expected one of {known}://HOST:PORT/NAME"
        )
    return opener(parts, environ)
