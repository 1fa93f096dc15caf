"""Building and evaluating a session runs with the cyclic collector paused, which is
given back as it was found, and no evaluated session stays in memory."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator

import pytest

from aem.config import AemConfig
from aem.evaluate import Evaluator
from aem.foundation.gcpause import cyclic_gc_paused
from aem.foundation.model import ClosedSession, MetricResult, Outcome
from aem.metrics.base import MetricContext, result
from bench.session_size.run import EMBEDDING_METRICS, installed_metrics
from bench.session_size.workload import generate


class CollectorProbe:
    """A metric that records whether the collector ran while it was evaluated."""

    name = "collector_probe"

    def __init__(self) -> None:
        self.enabled: list[bool] = []

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        self.enabled.append(gc.isenabled())
        turn = context.session.turns[0]
        return [result(self.name, turn, Outcome.PASS, "probed")]


def _closed(spans: int) -> ClosedSession:
    return ClosedSession("long-session", "gen_ai.conversation.id", False, generate(spans))


@pytest.fixture
def collector_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_evaluation_pauses_the_collector_and_gives_it_back(collector_enabled: None) -> None:
    probe = CollectorProbe()
    report = Evaluator(AemConfig(), metrics=[probe]).evaluate(_closed(60))
    assert probe.enabled == [False]
    assert gc.isenabled()
    assert report.turns[0].metrics[0].explanation == "probed"


def test_a_collector_the_caller_disabled_stays_disabled(collector_enabled: None) -> None:
    probe = CollectorProbe()
    gc.disable()
    try:
        Evaluator(AemConfig(), metrics=[probe]).evaluate(_closed(60))
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert probe.enabled == [False]


def test_the_collector_comes_back_when_the_block_raises(collector_enabled: None) -> None:
    with pytest.raises(RuntimeError), cyclic_gc_paused():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_evaluated_sessions_are_freed(collector_enabled: None) -> None:
    """Nothing of an evaluated session outlives it (the caches keyed by its turn graph
    let go of it), so pausing the collector per session cannot pile sessions up."""
    evaluator = Evaluator(AemConfig(), metrics=installed_metrics(EMBEDDING_METRICS))
    evaluator.evaluate(_closed(300))  # warm caches: compiled patterns, lazy imports
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(3):
        evaluator.evaluate(_closed(300))
    gc.collect()
    assert len(gc.get_objects()) - before < 200  # one session holds about 2,700
