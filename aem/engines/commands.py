"""The ``--workers`` and ``--engine`` options of ``aem audit``, and the Ray run behind them.

Why here and not in :mod:`aem.cli`: the command stays a short list of options, and what
the engines refuse (stdin or scorecards on Ray, Ray not installed) is decided in one place.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from aem.engines import EngineError
from aem.model import AuditReport, ClosedSession


class Engine(StrEnum):
    """Where sessions are evaluated."""

    LOCAL = "local"
    RAY = "ray"


WorkersOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        envvar="AEM_WORKERS",
        help="processes evaluating sessions (default: one per core, started once the audit "
        "has run a second here, so a short one starts none; 1 = in this process). "
        "With --engine ray: the CPUs of a local Ray and the evaluation actors",
    ),
]
EngineOption = Annotated[
    Engine,
    typer.Option(
        help="local: this machine; ray: Ray Data (pip install 'aem[ray]'), on the cluster "
        "at RAY_ADDRESS, else on a Ray started for this run",
    ),
]

SessionsDirOption = Annotated[
    Path | None,
    typer.Option(
        help="with --engine ray: also write per-session reports there as Parquet (one row per "
        "session: session_id, root_causes, cut, report as JSON)",
    ),
]


def audit_on_ray(
    paths: list[str],
    workers: int | None,
    show_progress: bool,
    *,
    on_closed: Callable[[ClosedSession], None] | None,
    **options: Any,
) -> AuditReport:
    """``aem audit --engine ray``: the Ray engine's report; :class:`EngineError` for
    what it cannot do (the command exits 2 with the message)."""
    if on_closed is not None:
        raise EngineError("--scorecard needs the local engine (the spans stay on the cluster)")
    if importlib.util.find_spec("ray") is None:  # pragma: no cover - CI installs the extra
        raise EngineError("--engine ray needs the ray extra: pip install 'aem[ray]'")
    from aem.engines import ray as ray_engine

    return ray_engine.audit(paths, workers=workers, show_progress=show_progress, **options)
