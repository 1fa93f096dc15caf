"""An example plug-in metric: a turn that took too long (an observation, not a cause).

Shown in docs/metrics.md and exercised by tests/test_metric_example.py. Install it with
``pip install -e examples/latency_metric`` or list it in ``metrics.plugins``.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from aem.foundation.model import MetricResult, Outcome
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result


class LatencySettings(MetricSettings):
    max_seconds: float = Field(default=2.0, gt=0, description="slowest acceptable turn")


class Latency(BaseMetric[LatencySettings]):
    name = "latency"
    role = "observation"  # slow is worth reporting, but it is never why a task failed
    Settings = LatencySettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        limit = self.settings.max_seconds
        for turn in context.session.turns:
            seconds = (turn.end_unix_nano - turn.start_unix_nano) / 1e9
            outcome = Outcome.FAIL if seconds > limit else Outcome.PASS
            yield result(
                self.name,
                turn,
                outcome,
                f"took {seconds:.2f} s (limit {limit:g} s)",
                score=seconds,
                threshold=limit,
            )
