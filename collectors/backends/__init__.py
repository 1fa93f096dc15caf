"""Tracing backends as span sources: ``aem audit --from phoenix://…`` or ``mlflow://…``.

Why a package of its own: a backend's REST pages are one more way spans arrive, next to
files and OTLP receivers. Each backend module turns its pages into :class:`SpanRecord`
batches and nothing else; sessions are then assembled by
:class:`collectors.reading.SessionReading` exactly as for files, so the same spans give the
same report whichever way they came.
"""

from collectors.backends.base import (
    BackendError,
    Ingested,
    IngestionOrdered,
    OpenerSource,
    SourceServices,
    SourceWindow,
    SpanSource,
    open_source,
    register_scheme,
)

# The span sources AEM ships, registered in the ``aem.sources`` entry-point group
# (pyproject.toml) exactly as a team's own: each module is imported when its scheme is
# first opened, so ``aem`` starts without loading either HTTP client.
phoenix_source = OpenerSource("phoenix", "collectors.backends.phoenix:open_phoenix")
mlflow_source = OpenerSource("mlflow", "collectors.backends.mlflow:open_mlflow")

__all__ = [
    "BackendError",
    "Ingested",
    "IngestionOrdered",
    "OpenerSource",
    "SourceServices",
    "SourceWindow",
    "SpanSource",
    "open_source",
    "register_scheme",
]
