"""Which engine ``aem audit`` runs on, and the Ray run behind ``--engine ray``.

Why here and not in :mod:`aem.cli`: what the engines refuse (scorecards on Ray, Ray not
installed) is decided in one place, below the command line that only offers the choice
(:mod:`aem.cli.engines`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from aem.engines import EngineError
from aem.foundation.model import AuditReport, ClosedSession


class Engine(StrEnum):
    """Where sessions are evaluated."""

    LOCAL = "local"
    RAY = "ray"


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
