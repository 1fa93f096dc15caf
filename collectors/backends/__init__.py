"""Tracing backends as span sources: ``aem audit --from phoenix://…`` or ``mlflow://…``.

Why a package of its own: a backend's REST pages are one more way spans arrive, next to
files and OTLP receivers. Each backend module turns its pages into :class:`SpanRecord`
batches and nothing else; sessions are then assembled by
:class:`collectors.reading.SessionReading` exactly as for files, so the same spans give the
same report whichever way they came.
"""

from collections.abc import Mapping
from urllib.parse import SplitResult

from collectors.backends.base import (
    BackendError,
    Ingested,
    IngestionOrdered,
    SourceWindow,
    SpanSource,
    open_source,
    register_scheme,
)


def _open_mlflow(parts: SplitResult, environ: Mapping[str, str]) -> SpanSource:
    """Imported on first use: ``aem`` starts without loading the MLflow source."""
    from collectors.backends.mlflow import open_mlflow

    return open_mlflow(parts, environ)


register_scheme("mlflow", _open_mlflow)

__all__ = [
    "BackendError",
    "Ingested",
    "IngestionOrdered",
    "SourceWindow",
    "SpanSource",
    "open_source",
    "register_scheme",
]
