"""Tracing backends as span sources: ``aem audit --from phoenix://…`` or ``mlflow://…``.

Why a package of its own: a backend's REST pages are one more way spans arrive, next to
files and OTLP receivers. Each backend module turns its pages into :class:`SpanRecord`
batches and nothing else; sessions are then assembled by
:class:`collectors.reading.SessionReading` exactly as for files, so the same spans give the
same report whichever way they came.
"""

from collectors.backends.base import (
    BackendError,
    SourceWindow,
    SpanSource,
    open_source,
    register_scheme,
)

__all__ = ["BackendError", "SourceWindow", "SpanSource", "open_source", "register_scheme"]
