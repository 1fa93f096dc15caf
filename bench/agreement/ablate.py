"""Leave one set out: does each value rule earn its place beyond the set it came from.

Why: every derivation and binding of AEM's evidence (``aem.evidence.derivations.DERIVATIONS``,
``aem.evidence.bindings.BINDINGS``) was
written for sessions of some set (its ``found_on``). A rule fitted to what one looked at
can only help there — the gain is the fit, not the rule. Here each rule is switched off
in turn (``disabled``, in this process) and the sets are scored again: a rule *keeps its
place* when removing it makes some set it was **not** found on worse on that set's
**check** half (the half no rule was tuned on); otherwise it helps only where it was
found, or nowhere, and should go.

    python -m bench.agreement.ablate --data DIR [--sets a,b] [--rules x,y] [--json out.json]

The sets are ``bench.agreement.run``'s, scored by their own ``measure`` (one reference run
with every rule, then one run per rule without it, workers=1 so the switch applies); the
default leaves out ``ragtruth`` (about 19 minutes a run) — name it in ``--sets`` to
include it. Each set's *headline* figures: tau-bench session agreement and
first-deviation agreement; perturbation false pass and false fail; Who&When agent and
step accuracy; matching's two rows; instrumented's two rows; RAGTruth precision and F1 —
AEM's rows — and, beside them, the suspect rows: tau-bench's passed runs with suspects
only (lower is better) and its first suspect at the first deviation, Who&When's accuracy
of "root cause, else first suspect". Why those: an unsupported value is ``unverified``
(a suspect), not a failure, so a derivation only ever turns suspects into passes —
removing one cannot change a root cause, and the proven rows alone could not see it
(the perturbation rows score the support check itself, judged strictly, so they can).

A change is printed in points as the *gain when removed*, signed by each figure's
direction (positive: the set is better without the rule; negative: the rule was needed),
per half. A set is *worse* on a half when its headline gains there sum below zero. The
leave-one-set-out column sums the gains on the check halves of the sets the rule was
not found on. The perturbation rows are measured on tau-bench's and Who&When's sessions,
so each counts as a set of its own *and* as the set its sessions come from: a rule found
on tau-bench does not earn its place by helping perturbation's tau-bench rows.

Verdicts: "keeps its place" (some set outside ``found_on`` is worse on its check half
without it); "remove: helps only where it was found" (only a ``found_on`` set is worse
without it, on either half — the table shows whether on its check half too); "remove:
helps nowhere" (no set is worse).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.agreement import perturbation, tau, whowhen
from bench.agreement.figures import Figure
from bench.agreement.run import SETS, data_dir
from bench.agreement.split import CHECK, HALVES
from bench.devdata import ENV

DEFAULT_SETS = tuple(name for name in SETS if name != "ragtruth")
# Where the ablation measures a set otherwise than bench.agreement.run: perturbation's
# strict rows alone (its default rows cannot move with a derivation).
MEASURES = {"perturbation": perturbation.measure_strict}
# Per set, its headline rows: (the ending of the figure's name, the method).
HEADLINES: dict[str, tuple[tuple[str, str], ...]] = {
    "tau-bench": (
        ("session agreement", "AEM"),
        ("first-deviation agreement", "AEM"),
        (tau.SUSPECT_ONLY, tau.PASSED_RUNS),
        (tau.SUSPECT_HIT, "AEM first suspect"),
    ),
    # The strict rows: whether the support check accepts a value, which is what a
    # derivation changes (by default it only turns a suspect into a pass).
    "perturbation": (("false pass (strict)", "AEM"), ("false fail (strict)", "AEM")),
    "whowhen": tuple(
        (f"{level} accuracy", method)
        for method in ("AEM", whowhen.EITHER)
        for level in ("agent", "step")
    ),
    "matching": (("pass-labelled judged failed", "AEM"), ("fail-labelled caught", "AEM")),
    "instrumented": (
        ("sessions with the golden verdicts", "AEM"),
        ("correct runs with a root cause", "AEM"),
    ),
    "ragtruth": (("precision", "AEM"), ("F1", "AEM")),
}
# The sets a set's rows are measured on, by the start of the row's name.
SOURCES = {"perturbation": perturbation.SOURCE}
KEEP = "keeps its place"
ONLY_FOUND = "remove: helps only where it was found"
NOWHERE = "remove: helps nowhere"
EPSILON = 1e-9


@dataclass(frozen=True)
class Change:
    """One headline figure without a rule: the gain when removed, per half (``None`` when
    the half has nothing to count)."""

    figure: str
    gains: dict[str, float | None]
    method: str = "AEM"

    @property
    def label(self) -> str:
        return self.figure if self.method == "AEM" else f"{self.figure} · {self.method}"


@dataclass(frozen=True)
class Ablation:
    """One rule switched off: its changes per set, the leave-one-set-out sum, the verdict."""

    rule: str
    found_on: tuple[str, ...]
    changes: dict[str, list[Change]]
    left_out: float
    verdict: str


def headlines(set_name: str, figures: Sequence[Figure]) -> list[Figure]:
    """The set's headline rows: a headline's method, on a figure ending with its name."""
    wanted = HEADLINES.get(set_name, ())
    return [
        f
        for f in figures
        if any(f.method == method and f.figure.endswith(end) for end, method in wanted)
    ]


def changes(reference: Sequence[Figure], without: Sequence[Figure]) -> list[Change]:
    """Each headline of ``reference`` against the same row of ``without``: the gain when
    the rule is removed (the value's change, negated when lower is better), per half."""
    after = {(f.figure, f.method): f for f in without}
    result = []
    for before in reference:
        other = after.get((before.figure, before.method))
        sign = 1.0 if before.better == "higher" else -1.0
        gains: dict[str, float | None] = {}
        for name in HALVES:
            old = before.cells[name].value
            new = other.cells[name].value if other else None
            gains[name] = None if old is None or new is None else sign * (new - old) + 0.0
        result.append(Change(before.figure, gains, before.method))
    return result


def net(set_changes: Sequence[Change], half_name: str) -> float:
    """A set's summed gain on one half (figures with nothing to count add nothing)."""
    return sum(c.gains[half_name] or 0.0 for c in set_changes)


def sources(set_name: str, change: Change) -> tuple[str, ...]:
    """The sets whose sessions a row is measured on: its own, and for a perturbation row
    the set its sessions come from (``tau-bench airline false fail``: tau-bench's)."""
    starts = SOURCES.get(set_name, {})
    return (set_name, *(s for k, s in starts.items() if change.figure.startswith(k)))


def groups(by_set: dict[str, list[Change]]) -> dict[tuple[str, ...], list[Change]]:
    """The changes grouped by the sets their sessions come from (see :func:`sources`)."""
    result: dict[tuple[str, ...], list[Change]] = {}
    for name, set_changes in by_set.items():
        for change in set_changes:
            result.setdefault(sources(name, change), []).append(change)
    return result


def left_out(by_set: dict[str, list[Change]], found_on: Sequence[str]) -> float:
    """The summed gain on the check halves of the sets the rule was not found on."""
    return sum(net(c, CHECK) for sets, c in groups(by_set).items() if not set(sets) & set(found_on))


def verdict(by_set: dict[str, list[Change]], found_on: Sequence[str]) -> str:
    """Keep a rule only when some set outside ``found_on`` is worse on its check half
    without it; else say whether it helped at least where it was found."""
    found = set(found_on)
    outside = [c for sets, c in groups(by_set).items() if not set(sets) & found]
    inside = [c for sets, c in groups(by_set).items() if set(sets) & found]
    if any(net(c, CHECK) < -EPSILON for c in outside):
        return KEEP
    if any(net(c, h) < -EPSILON for c in inside for h in HALVES):
        return ONLY_FOUND
    return NOWHERE if inside else f"{NOWHERE} measured (its sets were not run)"


def ablation(
    rule: str, found_on: tuple[str, ...], reference: dict[str, list[Figure]], without: Any
) -> Ablation:
    """One rule's row: ``without`` maps each set to its figures with the rule off."""
    by_set = {name: changes(reference[name], headlines(name, without[name])) for name in reference}
    return Ablation(rule, found_on, by_set, left_out(by_set, found_on), verdict(by_set, found_on))


def clear_caches() -> None:
    """Empty every module-level cache of AEM, so no answer computed with a rule on is
    served with it off (the caches in AEM today are pure; this keeps it so)."""
    for name, module in list(sys.modules.items()):
        if not (name == "aem" or name.startswith("aem.")) or module is None:
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == name:
                clear()


def measure(names: Sequence[str], data: Path, off: AbstractContextManager[Any]) -> Any:
    """Each set's headline figures, measured in this process with ``off`` in force."""
    result: dict[str, list[Figure]] = {}
    with off:
        for name in names:
            clear_caches()
            result[name] = headlines(name, MEASURES.get(name, SETS[name])(data, 1))
    return result


def run_all(
    names: Sequence[str],
    data: Path,
    rules: Sequence[Any],
    disabled: Callable[[list[str]], AbstractContextManager[Any]],
) -> Iterator[Ablation]:
    """The reference run, then one run per rule with that rule off; an :class:`Ablation`
    per rule, yielded as each finishes."""
    reference = measure(names, data, nullcontext())
    print(f"reference: {', '.join(names)} measured", file=sys.stderr)
    for rule in rules:
        without = measure(names, data, disabled([rule.name]))
        done = ablation(rule.name, tuple(rule.found_on), reference, without)
        print(f"{rule.name}: {done.verdict} ({done.left_out * 100:+.1f})", file=sys.stderr)
        yield done


def _points(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:+.1f}"


def render(ablations: Sequence[Ablation]) -> None:
    """One table: a row per rule × set × headline, the gain when removed per half, and
    per rule the leave-one-set-out sum and the verdict."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Gain when the rule is removed, points (+ better without it)")
    for column in ("rule", "found_on", "set", "figure", *HALVES, "left out (check)", "verdict"):
        table.add_column(column, justify="right" if column in HALVES else "left")
    for a in ablations:
        first = True
        for set_name, set_changes in a.changes.items():
            for c in set_changes:
                head = (a.rule, ",".join(a.found_on)) if first else ("", "")
                tail = (_points(a.left_out), a.verdict) if first else ("", "")
                gains = (_points(c.gains[h]) for h in HALVES)
                table.add_row(*head, set_name, c.label, *gains, *tail)
                first = False
        table.add_section()
    Console(width=180).print(table)


def as_json(a: Ablation) -> dict[str, Any]:
    return {
        "rule": a.rule,
        "found_on": list(a.found_on),
        "left_out_check_gain": a.left_out,
        "verdict": a.verdict,
        "changes": {
            name: [
                {"figure": c.figure, "method": c.method, "gain_when_removed": c.gains} for c in cs
            ]
            for name, cs in a.changes.items()
        },
    }


def evidence_rules() -> dict[str, Any]:
    """Every rule of the two evidence tables by name — the derivations, then the bindings.
    A name in both (``written_arithmetic``: one rule that derives or refutes) is one rule."""
    from aem.evidence.bindings import BINDINGS
    from aem.evidence.derivations import DERIVATIONS

    rules: dict[str, Any] = {}
    for table in (DERIVATIONS, BINDINGS):
        for rule in table.rules:
            rules.setdefault(rule.name, rule)
    return rules


@contextmanager
def disabled(names: list[str]) -> Iterator[None]:
    """``names`` switched off in every evidence table that has them."""
    from aem.evidence.bindings import BINDINGS
    from aem.evidence.derivations import DERIVATIONS

    tables = (DERIVATIONS, BINDINGS)
    unknown = [n for n in names if not any(n in t.names for t in tables)]
    if unknown:
        raise ValueError(f"unknown rules {unknown}")
    with ExitStack() as stack:
        for table in tables:
            stack.enter_context(table.disabled([n for n in names if n in table.names]))
        yield


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help=f"the development sets (or ${ENV})")
    parser.add_argument("--json", type=Path, default=None, help="write the ablations here")
    parser.add_argument(
        "--sets", default=",".join(DEFAULT_SETS), help=f"a subset of {','.join(SETS)}"
    )
    parser.add_argument(
        "--rules", default="", help="derivation or binding names (default: every one)"
    )
    return parser.parse_args(argv)


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    names, wanted = _names(args.sets), _names(args.rules)
    unknown = [n for n in names if n not in SETS]
    if unknown:
        print(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(SETS)}", file=sys.stderr)
        return 2
    data = data_dir(args)
    if isinstance(data, str):
        print(data, file=sys.stderr)
        return 2
    table = evidence_rules()
    missing = [n for n in wanted if n not in table]
    if missing:
        print(f"unknown rule(s) {', '.join(missing)}; known: {', '.join(table)}", file=sys.stderr)
        return 2
    rules = [rule for name, rule in table.items() if not wanted or name in wanted]
    ablations = list(run_all(names, data, rules, disabled))
    render(ablations)
    if args.json:
        payload = {"sets": names, "rules": [as_json(a) for a in ablations]}
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
