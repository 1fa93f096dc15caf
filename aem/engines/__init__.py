"""Engines that evaluate closed sessions somewhere other than the calling thread.

Why a package of its own: ``aem audit`` evaluates in this process (``--workers 1``), in a
pool of worker processes on this machine (:mod:`aem.engines.pool`), or on a Ray cluster
(:mod:`aem.engines.ray`, the ``aem[ray]`` extra). Every engine hands each closed session
to the same :class:`aem.evaluate.Evaluator` and ranks root causes with the same
:func:`aem.evaluate.build_report`, so the report cannot depend on the engine.
"""

from __future__ import annotations

import os


class EngineError(ValueError):
    """What an engine cannot do with this input or set-up (``aem audit`` exits 2)."""


def available_cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
