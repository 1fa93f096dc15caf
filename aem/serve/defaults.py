"""Defaults of ``aem serve`` that more than one module states, each written once.

Why a module of its own: the settings model (:mod:`aem.serve.settings`, the documented
defaults) and the classes that take the same values as keyword defaults (the spool, the
outbox: tests and library users build those without settings) must agree, and the
settings must not import the spool's or the outbox's machinery to learn them.
"""

from __future__ import annotations

from typing import Final

# --- spool ------------------------------------------------------------------------
# FULL: an acknowledged span survives power loss (NORMAL: a crash of the process only).
SPOOL_SYNCHRONOUS: Final = "FULL"
# Most requests one spool transaction groups (group commit).
SPOOL_COMMIT_BATCH: Final = 64

# --- outbox -----------------------------------------------------------------------
# Outbox rows handed to a sink at once, and how often a sink looks for due rows.
DELIVERY_BATCH: Final = 256
DELIVERY_POLL_SECONDS: Final = 0.2
# A failed delivery is retried after this, doubling up to the maximum (never dropped).
DELIVERY_RETRY_INITIAL_SECONDS: Final = 0.5
DELIVERY_RETRY_MAX_SECONDS: Final = 30.0
# At shutdown, after the drain: how long the sinks' workers get to stop in all. A sink's
# delivery in flight is cut (its rows stay pending), so shutdown never waits on a
# downstream beyond drain_timeout_seconds plus this.
OUTBOX_CLOSE_SECONDS: Final = 5.0

# --- pipeline ---------------------------------------------------------------------
# A complete session with more spans than this is evaluated in a lane of its own, one
# at a time, so it never holds the evaluators the small sessions need.
LARGE_SESSION_SPANS: Final = 10_000
# With evaluation in this process (workers = 0): how long a thread may hold the GIL while
# another waits for it (Python's default is 5 ms). See aem.serve.server.GilShare.
IN_PROCESS_SWITCH_INTERVAL_SECONDS: Final = 0.0005
