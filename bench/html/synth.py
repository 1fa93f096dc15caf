"""A synthetic :class:`AuditReport` of any size, shaped like a real run.

Why synthetic: the HTML report must stay usable at 10,000 sessions, and no trace set of
that size ships with the repository. Each session has 4-14 turns of mixed kinds, four or
five metrics per turn with explanations and evidence of realistic length; about a third
of the sessions fail, on signatures drawn from a skewed distribution (a few causes hit
many sessions), and later turns inherit a failure as propagation would label them.
Seeded, so every run measures the same report.
"""

from __future__ import annotations

import random
from typing import Any

from aem.foundation.model import AuditReport
from aem.ranking import rank_root_causes, signature

_KINDS = ["reasoning", "tool_call", "tool_call", "tool_call", "retrieval", "answer"]
_TOOLS = [f"tool_{i:02d}" for i in range(30)]
_METRICS = ["tool_execution", "tool_choice", "argument_validity", "correctness.truthfulness"]
_CATEGORIES = ["bad date", "wrong tool", "tool outage", "made-up number", None]


def _metric(name: str, turn_id: str, outcome: str, rng: random.Random) -> dict[str, Any]:
    value = f"ORD-{rng.randrange(10_000):04d}"
    if outcome == "fail":
        explanation = (
            f"{name} failed: called with order_id={value!r} where the case expects "
            f"'ORD-{rng.randrange(10_000):04d}'; period '2025-03' contradicts period=2026-03"
        )
        evidence = [
            {
                "span_id": f"{rng.getrandbits(64):016x}",
                "field": "order_id",
                "expected": "ORD-0042",
                "actual": value,
                "detail": "ids differ",
            }
        ]
    else:
        explanation = f"{name}: {outcome} — every stated value is supported by tool results"
        evidence = []
    return {
        "name": name,
        "turn_id": turn_id,
        "outcome": outcome,
        "score": 0.0 if outcome == "fail" else 1.0,
        "threshold": 1.0,
        "explanation": explanation,
        "evidence": evidence,
    }


def _session(number: int, rng: random.Random) -> dict[str, Any]:
    trace_id = f"{rng.getrandbits(128):032x}"
    turns: list[dict[str, Any]] = []
    count = rng.randint(4, 14)
    failing_at = rng.randrange(count) if rng.random() < 0.35 else None
    failed_metric = _METRICS[min(int(rng.paretovariate(1.2)) - 1, len(_METRICS) - 1)]
    for index in range(count):
        kind = "answer" if index == count - 1 else rng.choice(_KINDS[:-1])
        turn_id = f"t{index + 1}"
        name = _TOOLS[min(int(rng.paretovariate(0.9)), len(_TOOLS) - 1)]
        name = name if kind == "tool_call" else "support_agent"
        metrics = []
        for metric in _METRICS + (["correctness.completeness"] if kind == "answer" else []):
            outcome = "pass" if rng.random() > 0.08 else "skip"
            if index == failing_at and metric == failed_metric:
                outcome = "fail"
            metrics.append(_metric(metric, turn_id, outcome, rng))
        label = "ok"
        inherited: list[str] = []
        if failing_at is not None and index == failing_at:
            label = "root_cause"
        elif failing_at is not None and index > failing_at and rng.random() < 0.5:
            label, inherited = "prior_action_failed", [f"t{failing_at + 1}"]
            metrics[-1] = _metric(metrics[-1]["name"], turn_id, "fail", rng)
        turns.append(
            {
                "turn_id": turn_id,
                "span_ids": [f"{rng.getrandbits(64):016x}"],
                "trace_id": trace_id,
                "kind": kind,
                "name": name,
                "label": label,
                "inherited_from": inherited,
                "metrics": metrics,
            }
        )
    return {
        "session_id": f"session-{number:05d}",
        "trace_ids": [trace_id],
        "case_found": True,
        "turns": turns,
        "root_causes": _root_causes(turns, rng),
    }


def _root_causes(turns: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    causes = []
    for turn in turns:
        if turn["label"] != "root_cause":
            continue
        failed = [m["name"] for m in turn["metrics"] if m["outcome"] == "fail"]
        category = rng.choice(_CATEGORIES)
        causes.append(
            {
                "turn_id": turn["turn_id"],
                "span_ids": turn["span_ids"],
                "kind": turn["kind"],
                "name": turn["name"],
                "metrics": failed,
                "category": category,
                "signature": signature(failed[0], turn["kind"], turn["name"], category),
            }
        )
    return causes


def synthesize(sessions: int, *, seed: int = 13) -> AuditReport:
    """A report of ``sessions`` sessions, ranked as ``aem audit`` would rank them."""
    rng = random.Random(seed)
    report = AuditReport.model_validate(
        {"sessions": [_session(n, rng) for n in range(sessions)], "spans_read": sessions * 12}
    )
    report.ranking = rank_root_causes(report.sessions)
    report.sessions_with_root_cause = sum(1 for s in report.sessions if s.root_causes)
    return report
