"""Perturbation benchmark of the support check: how often a changed number still passes.

Takes every answer and reasoning turn of real sessions (the tau-bench airline and
Who&When development sets; not shipped with the repository) — except the answers of
out-of-scope cases, whose values the refusal metric judges —, and for each number it
states that the check accepts, changes that one number by a plausible amount (3 % to 50 %,
written the same way) to a value the turn did not see, and judges the turn again with
``correctness.truthfulness``. Prints per data set:

- false pass: perturbed turns that still pass (the check called an invented number
  supported);
- proven: perturbed turns that fail (a source binds another value to the changed one);
  the rest are left ``unverified`` — suspects, shown, never a failure;
- false fail: unperturbed turns that fail (turns stating at least one checked value);

each beside the baseline, measured on the same turns and perturbations in the same run:
the rule before issue 8, which accepted a number equal to a sum, difference, small
multiple or three-term sum of any numbers the turn saw (``bench.support.baseline``);

then the derivations the check accepted on unperturbed turns and a sample of the false
passes, so each can be read.

    python -m bench.support.run [--shared DIR] [--per-turn N] [--seed S]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from aem.cases import Case, load_cases
from aem.compare.extract import extract_claims
from aem.config import AemConfig
from aem.evaluate import Evaluator
from aem.evidence import is_distinctive
from aem.foundation.model import Outcome, Session, TurnKind
from aem.graph import session_graph
from aem.metrics.applies import refusal_owns
from aem.metrics.context import MetricContext
from aem.metrics.truthfulness import Truthfulness
from aem.services import services_from
from bench.devdata import dev_root
from bench.support.baseline import passes_baseline
from bench.support.perturb import perturbations
from collectors.assembler import SessionAssembler
from collectors.readers import read_batches

SHARED = dev_root() or Path(".")
DATA_SETS = {
    "tau-bench airline": ("tau-bench-airline-dev/traces.otlp.jsonl", "references.jsonl"),
    "Who&When AG": ("whowhen-dev/whowhen_algorithm_generated.otlp.jsonl", None),
    "Who&When HC": ("whowhen-dev/whowhen_hand_crafted.otlp.jsonl", None),
}


@dataclass
class Tally:
    """Counts of one data set, and examples to read."""

    turns: int = 0
    failed_turns: int = 0
    perturbed: int = 0
    passed_perturbed: int = 0
    # Perturbed turns a source proves wrong (fail); the others are unverified or passed.
    proven_perturbed: int = 0
    baseline_failed_turns: int = 0
    baseline_passed_perturbed: int = 0
    no_perturbation: int = 0
    false_passes: list[str] = field(default_factory=list)
    derivations: list[str] = field(default_factory=list)


def sessions(traces: Path) -> Iterator[Session]:
    """Every session of a trace file, with its turn graph (as the audit builds it)."""
    assembler = SessionAssembler(idle=10**9)
    for batch in read_batches(str(traces)):
        for span in batch.spans:
            assembler.add(span, 0)
    evaluator = Evaluator(AemConfig())
    for closed in assembler.drain():
        yield evaluator.build(closed)


def measure(
    session: Session,
    case: Case | None,
    tally: Tally,
    rng: random.Random,
    per_turn: int,
    config: AemConfig | None = None,
) -> None:
    """Judge each narrating turn as written, then with one number changed at a time
    (under ``config``: the defaults, or ``[verdicts] unsupported = "fail"``)."""
    config = config or AemConfig()
    context = MetricContext(
        session=session, case=case, services=services_from(config), graph=session_graph(session)
    )
    metric = Truthfulness()
    for turn in session.turns:
        if turn.kind not in (TurnKind.ANSWER, TurnKind.REASONING) or not turn.text:
            continue
        if refusal_owns(context, turn):
            continue  # an out-of-scope answer's values are the refusal metric's to judge
        claims = [
            v
            for v in extract_claims(turn.text, config.compare)
            if v.kind == "number" and is_distinctive(v)
        ]
        if not claims:
            continue
        tally.turns += 1
        verdict = metric.judge(context, turn)
        seen = context.seen(turn).values
        if verdict.outcome is Outcome.FAIL:
            tally.failed_turns += 1
            if not passes_baseline(verdict, seen.numbers, config.compare):
                tally.baseline_failed_turns += 1
            continue
        if "derived:" in verdict.explanation:
            tally.derivations.append(f"{session.session_id} {turn.turn_id}: {verdict.explanation}")
        for claim in rng.sample(claims, min(per_turn, len(claims))):
            changed = _unseen_perturbation(claim, seen, config, rng)
            if changed is None:
                tally.no_perturbation += 1
                continue
            text = turn.text[: claim.start] + changed + turn.text[claim.end :]
            again = metric.judge(context, turn.model_copy(update={"text": text}))
            tally.perturbed += 1
            if passes_baseline(again, seen.numbers, config.compare):
                tally.baseline_passed_perturbed += 1
            if again.outcome is Outcome.FAIL:
                tally.proven_perturbed += 1
            elif again.outcome is not Outcome.UNVERIFIED:
                tally.passed_perturbed += 1
                tally.false_passes.append(
                    f"{session.session_id} {turn.turn_id}: {claim.raw} -> {changed}: "
                    f"{again.explanation[:200]}"
                )


def _unseen_perturbation(claim, seen, config, rng) -> str | None:  # type: ignore[no-untyped-def]
    """The first plausible rewrite whose value the check would look at (distinctive) and
    the turn did not see as such."""
    for raw in perturbations(claim, rng):
        values = [v for v in extract_claims(raw, config.compare) if v.kind == "number"]
        if (
            len(values) == 1
            and is_distinctive(values[0])
            and not seen.supports(values[0], config.compare)
        ):
            return raw
    return None


def measure_data_set(
    shared: Path,
    name: str,
    rng: random.Random,
    per_turn: int,
    tally_of: Callable[[str], Tally],
    config: AemConfig | None = None,
) -> None:
    """Every session of one data set (a key of ``DATA_SETS``), each counted in the tally
    ``tally_of(session_id)`` names — one tally for the set, or one per half of a split."""
    traces, references = DATA_SETS[name]
    path = shared / traces
    cases = load_cases(path.parent / references) if references else {}
    for session in sessions(path):
        case = cases.get(session.session_id)
        measure(session, case, tally_of(session.session_id), rng, per_turn, config)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", type=Path, default=SHARED, help="the development sets (default: $AEM_DEV_DATA)"
    )
    parser.add_argument("--per-turn", type=int, default=3, help="numbers changed per turn")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--examples", type=int, default=15)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    totals = Tally()
    for name in DATA_SETS:
        tally = Tally()
        measure_data_set(args.shared, name, rng, args.per_turn, lambda _session_id, t=tally: t)
        _report(name, tally, args.examples)
        for key in (
            "turns",
            "failed_turns",
            "perturbed",
            "passed_perturbed",
            "proven_perturbed",
            "no_perturbation",
            "baseline_failed_turns",
            "baseline_passed_perturbed",
        ):
            setattr(totals, key, getattr(totals, key) + getattr(tally, key))
    _report("all", totals, 0)
    return 0


def _report(name: str, tally: Tally, examples: int) -> None:
    false_pass = tally.passed_perturbed / max(tally.perturbed, 1)
    false_fail = tally.failed_turns / max(tally.turns, 1)
    print(
        f"{name}: false pass {tally.passed_perturbed}/{tally.perturbed} = {false_pass:.1%}; "
        f"proven {tally.proven_perturbed}/{tally.perturbed} (the rest unverified); "
        f"false fail {tally.failed_turns}/{tally.turns} = {false_fail:.1%} "
        f"(no unseen perturbation for {tally.no_perturbation} value(s))"
    )
    print(
        f"{'':{len(name)}}  baseline (any arithmetic): false pass "
        f"{tally.baseline_passed_perturbed}/{tally.perturbed} = "
        f"{tally.baseline_passed_perturbed / max(tally.perturbed, 1):.1%}; false fail "
        f"{tally.baseline_failed_turns}/{tally.turns} = "
        f"{tally.baseline_failed_turns / max(tally.turns, 1):.1%}"
    )
    for line in tally.derivations[:examples]:
        print("  derived   ", line[:300])
    for line in tally.false_passes[:examples]:
        print("  false pass", line[:300])


if __name__ == "__main__":
    sys.exit(main())
