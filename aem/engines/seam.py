"""What every engine is: closed sessions in, one outcome per session out, in order.

Why a module of its own, inside the engines: the audit (:mod:`aem.audit`) chooses an
engine and the engines (in this process, :mod:`aem.engines.pool`, :mod:`aem.engines.ray`)
implement it; with the seam here the audit imports the engines and no engine imports the
audit. A session that cannot be evaluated becomes the same issue in every engine
(:func:`evaluate_closed`), so the report cannot depend on where it was evaluated.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from aem.evaluate import Evaluator
from aem.foundation.model import ClosedSession, InputIssue, SessionReport

# The issue kind of a session whose evaluation raised: reported, never a verdict.
EVALUATION_ERROR = "evaluation_error"
# What evaluating one closed session gives: its report, or why it could not be evaluated.
SessionOutcome = SessionReport | InputIssue
# Where an engine hands an outcome, with the issue position recorded when it was submitted.
Deliver = Callable[[SessionOutcome, int], None]


class SessionEngine(Protocol):
    """Evaluates closed sessions and delivers every outcome, in submission order."""

    def submit(self, sessions: list[ClosedSession], position: int) -> None: ...

    def finish(self) -> None: ...

    def close(self) -> None: ...


class InProcessEngine:
    """``--workers 1``: evaluate each session here, as it is submitted."""

    def __init__(self, evaluator: Evaluator, deliver: Deliver) -> None:
        self.evaluator = evaluator
        self.deliver = deliver

    def submit(self, sessions: list[ClosedSession], position: int) -> None:
        for session in sessions:
            self.deliver(evaluate_closed(self.evaluator, session), position)

    def finish(self) -> None:
        """Nothing is pending: every session was evaluated when submitted."""

    def close(self) -> None:
        """Nothing to release."""


class DeferredEngine:
    """Worker processes only once the audit has shown it is long enough to pay for them.

    Why: starting the pool (a forkserver, then each worker importing AEM and loading the
    model again) costs more than a second of wall time and of CPU per worker on this kind
    of machine, more than evaluating a short audit takes. So sessions are evaluated here,
    as submitted, until they have taken ``here_seconds`` of evaluation; then the pool
    starts and takes every later session. Outcomes are delivered in submission order
    either way (all sessions evaluated here were submitted before any sent to the pool),
    so the report is the one either engine alone gives. A long audit loses at most
    ``here_seconds`` of parallel work; a one-session audit never starts a process.
    ``worth_pool(last session evaluated here, seconds spent)`` says whether what is left
    pays for a pool at all: an audit that will end within a few seconds is finished here.
    """

    def __init__(
        self,
        here: SessionEngine,
        start_pool: Callable[[], SessionEngine],
        here_seconds: float,
        worth_pool: Callable[[ClosedSession, float], bool] | None = None,
    ) -> None:
        self._here = here
        self._start_pool = start_pool
        self._budget = here_seconds
        self._next_check = here_seconds
        self._spent = 0.0
        self._worth = worth_pool
        self._last: ClosedSession | None = None
        self._pool: SessionEngine | None = None

    def _pool_now(self) -> bool:
        """Whether to start the pool before the next session: ``here_seconds`` spent and,
        with ``worth_pool``, enough work estimated to remain (asked again after each
        further ``here_seconds``: a small audit never starts one)."""
        if self._spent < self._next_check:
            return False
        if self._worth is None or self._last is None or self._worth(self._last, self._spent):
            return True
        self._next_check = self._spent + self._budget
        return False

    def submit(self, sessions: list[ClosedSession], position: int) -> None:
        """One at a time while here (a reader's last group can hold every session)."""
        for at, session in enumerate(sessions):
            if self._pool is None and self._pool_now():
                self._pool = self._start_pool()
            if self._pool is not None:
                self._pool.submit(sessions[at:], position)
                return
            started = time.perf_counter()
            self._here.submit([session], position)
            self._spent += time.perf_counter() - started
            self._last = session

    def finish(self) -> None:
        """Outcomes still out in the pool, if it started (those evaluated here are in)."""
        if self._pool is not None:
            self._pool.finish()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        self._here.close()


def evaluate_closed(evaluator: Evaluator, session: ClosedSession) -> SessionOutcome:
    """One session's report, or an ``evaluation_error`` issue when evaluating it raised:
    the same in this process and in a worker, so neither path can end the audit early."""
    try:
        return evaluator.evaluate(session)
    except Exception as exc:  # one session must not end the audit
        return evaluation_error(session, exc)


def evaluation_error(session: ClosedSession, exc: Exception) -> InputIssue:
    """A session whose evaluation raised, as an issue naming where its first span came
    from: the other sessions are still evaluated, and the run still ends with a report.
    The decoder refuses what it knows would raise; this is for what it does not know."""
    origin = next((s.origin for s in session.spans if s.origin is not None), None)
    return InputIssue(
        kind=EVALUATION_ERROR,
        message=(
            f"session {session.session_id!r} not evaluated: {type(exc).__name__}: {exc}"[:2000]
        ),
        source=origin.source if origin else None,
        line=origin.line if origin else None,
        session_id=session.session_id,
        spans_skipped=len(session.spans),
    )
