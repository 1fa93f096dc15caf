"""Extra look-ups allowed, extra state changes failed: agreement with the truth of
generated sessions, under each ``[matching] extra_calls`` and as before it existed.

Run: ``python -m bench.toolsets.run [--per-category N] [--seed S]``

Each session of :mod:`bench.toolsets.workload` is evaluated by the full evaluator with
its case; a session *agrees* when it has a root cause exactly when it is invalid, and an
invalid session with a culprit call is *localised* when its earliest root cause is that
call. "before" is the behaviour this setting replaced: every extra call fails, and no
expected call is optional (the case's ``optional`` marks are dropped).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from aem.config import load_config
from aem.evaluate import Evaluator
from aem.foundation.model import SessionReport
from aem.testing import make_case, make_session, make_tool_call, make_turn
from bench.toolsets.workload import CATEGORIES, Generated, generate

RUNS: dict[str, tuple[list[str], bool]] = {
    # name -> (overrides, keep the case's optional marks)
    "before": (['matching.extra_calls="fail"'], False),
    "writes (default)": ([], True),
    "allow": (['matching.extra_calls="allow"'], True),
}


def _evaluate(evaluator: Evaluator, item: Generated, sid: str, optional: bool) -> SessionReport:
    turns = [make_tool_call(c.name, c.arguments, result="ok") for c in item.calls]
    session = make_session(*turns, make_turn("answer", "agent", text="Done."), session_id=sid)
    session.tool_annotations = dict(item.annotations)
    expected: list[dict[str, Any]] = [
        c if optional else {k: v for k, v in c.items() if k != "optional"} for c in item.expected
    ]
    evaluator.cases = {sid: make_case(sid, expected_tool_calls=expected)}
    return evaluator.evaluate(session)


def measure(
    items: list[Generated], overrides: list[str], optional: bool
) -> dict[str, Counter[str]]:
    """Per category: sessions, agreeing ones, invalid ones with a culprit, localised ones."""
    evaluator = Evaluator(config=load_config(None, overrides))
    counts: dict[str, Counter[str]] = {c: Counter() for c in CATEGORIES}
    for n, item in enumerate(items):
        report = _evaluate(evaluator, item, f"gen-{n}", optional)
        count = counts[item.category]
        count["sessions"] += 1
        count["agree"] += (not report.root_causes) == item.valid
        if item.culprit is not None:
            count["culprits"] += 1
            first = min(report.root_causes, key=lambda c: int(c.turn_id[1:]), default=None)
            count["localised"] += first is not None and first.turn_id == f"t{item.culprit + 1}"
    return counts


def _share(hit: int, total: int) -> str:
    return f"{hit}/{total} = {hit / total:.1%}" if total else "–"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per-category", type=int, default=40)
    parser.add_argument("--seed", type=int, default=44)
    args = parser.parse_args(argv)
    items = list(generate(args.per_category, args.seed))
    print(f"{len(items)} generated sessions, {len(CATEGORIES)} categories")
    for name, (overrides, optional) in RUNS.items():
        counts = measure(items, overrides, optional)
        total = sum(counts.values(), Counter())
        agree = _share(total["agree"], total["sessions"])
        localised = _share(total["localised"], total["culprits"])
        print(f"\n{name}: agreement {agree}, culprit is the earliest root cause {localised}")
        for category, count in counts.items():
            print(f"  {category:22} {_share(count['agree'], count['sessions'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
