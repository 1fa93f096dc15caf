"""Imported once by the pool's forkserver, never by hand: what every worker needs before
its first session (the registered metrics' and checks' modules, session building), so
that each worker forked from the server starts with it instead of importing it again.

A plug-in that fails here is not this module's to report: the audit's own Evaluator
reports it, in the worker, as it would in one process.
"""

from __future__ import annotations

import contextlib

import collectors.sessions  # noqa: F401 - imported for the forked workers
from aem.metrics.registry import registered_metrics

# Loading the entry points imports every metric's module; building them is the job's (each
# worker resolves its job's configuration once, in aem.engines.jobs).
with contextlib.suppress(Exception):  # see the module docstring
    registered_metrics()
