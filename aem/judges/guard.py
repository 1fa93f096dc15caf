"""What one judge may cost a run: a time budget and a circuit breaker.

Why: a judge that is down or hangs turns every evaluation into the worst case — every
retry, every backoff, every timeout — so 2,000 evaluations against a dead server cost
days, not seconds. Both bounds turn that into judge errors with the reason, at once:

* the **circuit breaker** opens after ``errors`` consecutive judge errors; while open,
  a request is a judge error without being sent ("circuit open after 5 consecutive judge
  errors"), and once ``retry_seconds`` have passed one request is let through to see
  whether the judge is back (a success closes the circuit);
* the **budget** caps the seconds the judge spends on requests over its lifetime, which
  is one run for ``aem test`` and ``aem audit`` (one process for ``aem serve``); once
  spent, every further request is a judge error.

Thread-safe: worker threads of one process share a judge.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class JudgeGuard:
    """The breaker and the budget of one judge; ``refusal()`` before, ``record()`` after."""

    def __init__(
        self,
        errors: int,
        retry_seconds: float,
        budget_seconds: float | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.errors = errors
        self.retry_seconds = retry_seconds
        self.budget_seconds = budget_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._consecutive = 0
        self._opened_at: float | None = None
        self._trial = False
        self._spent = 0.0
        self._last_error = ""

    def remaining(self) -> float | None:
        """Seconds left in the budget (None: no budget)."""
        if self.budget_seconds is None:
            return None
        with self._lock:
            return max(0.0, self.budget_seconds - self._spent)

    def refusal(self) -> str | None:
        """Why the next request must not be sent, or None to send it."""
        with self._lock:
            if self.budget_seconds is not None and self._spent >= self.budget_seconds:
                return (
                    f"judge budget spent: {self._spent:.1f}s of "
                    f"budget_seconds={self.budget_seconds:g} used in this run"
                )
            if self._opened_at is None:
                return None
            if not self._trial and self._clock() - self._opened_at >= self.retry_seconds:
                self._trial = True  # one request goes through to probe the judge
                return None
            return (
                f"circuit open after {self._consecutive} consecutive judge errors "
                f"(last: {self._last_error})"
            )

    def record(self, error: str | None, seconds: float) -> None:
        """The outcome of a request that was sent: its error (None: it succeeded) and the
        seconds it took."""
        with self._lock:
            self._spent += seconds
            self._trial = False
            if error is None:
                self._consecutive, self._opened_at = 0, None
                return
            self._consecutive += 1
            self._last_error = error if len(error) <= 200 else error[:199] + "…"
            if self._consecutive >= self.errors:
                self._opened_at = self._clock()
