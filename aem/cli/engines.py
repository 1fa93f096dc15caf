"""The ``--workers``, ``--engine`` and ``--sessions-dir`` options of ``aem audit``.

Why a module of their own: the audit command stays a list of options, and the engine
choice they offer is decided below (:mod:`aem.engines.choice`), where the engines are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer  # noqa: TID251

from aem.engines.choice import Engine

WorkersOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        envvar="AEM_WORKERS",
        help="processes evaluating sessions (default: one per core, started once the audit "
        "has run a second here and the input left looks worth 8 s more, so a short one "
        "starts none; 1 = in this process). "
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

__all__ = ["Engine", "EngineOption", "SessionsDirOption", "WorkersOption"]
