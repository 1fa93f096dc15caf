"""Turn the spans of one session into turns, with the link keys the turn graph needs.

``build_session`` (in ``build``) runs the steps; each step is a module with one job:
``repair`` (span tree), ``contexts`` (agent contexts), ``pairing`` (calls, runs and
results), ``history`` (which model call continues which), ``turns`` (turn cutting).
Dialect knowledge stays behind ``collectors.dialects``.
"""

from __future__ import annotations

from collectors.sessions.build import build_session

__all__ = ["build_session"]
