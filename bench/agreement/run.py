"""Score AEM on every development set at once, tune and check halves side by side.

Why: a rule fitted to the sessions one looks at can fail on the others (a gain of 14
points on a slice of Who&When was 4 points on the rest). Every change to AEM's verdicts
is measured here on all sets together, each split by a fixed hash into a *tune* half
(the one to look at) and a *check* half (only scored; ``bench.agreement.split``), beside
trivial baselines that show each figure's floor.

    python -m bench.agreement.run --data DIR [--json out.json] [--sets a,b] [--workers N]

``DIR`` is the folder of the development sets (or set ``AEM_DEV_DATA``); without either
the command exits 2. The sets: ``tau-bench``, ``whowhen``, ``ragtruth``, ``instrumented``,
``perturbation`` (the support check on changed numbers) and ``matching`` (the generated
tool-matching workload). ``--json`` writes every figure with its counts, per half.

Proven failures and suspects are scored apart (Who&When: root-cause precision and
coverage, the first suspect where nothing is proven; tau-bench: sessions with suspects
only, the first suspect against the first deviation), since a suspect is never a root
cause. Whether each of AEM's value derivations earns its place beyond the set it was
found on is ``bench.agreement.ablate``'s question (leave one set out).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.agreement import instrumented, matching, perturbation, ragtruth, tau, whowhen
from bench.agreement.figures import Figure
from bench.agreement.split import COLUMNS
from bench.devdata import ENV

Measure = Callable[[Path, int], list[Figure]]
SETS: dict[str, Measure] = {
    "tau-bench": tau.measure,
    "whowhen": whowhen.measure,
    "ragtruth": ragtruth.measure,
    "instrumented": instrumented.measure,
    "perturbation": perturbation.measure,
    "matching": matching.measure,
}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help=f"the development sets (or ${ENV})")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--sets", default=",".join(SETS), help=f"a subset of {','.join(SETS)}")
    parser.add_argument("--workers", type=int, default=1, help="worker processes per audit")
    return parser.parse_args(argv)


def data_dir(args: argparse.Namespace) -> Path | str:
    """The development sets' folder, or the message that says why there is none."""
    given = args.data or (Path(os.environ[ENV]) if os.environ.get(ENV) else None)
    if given is None:
        return f"no development data: pass its directory with --data DIR or set {ENV}"
    if not given.is_dir():
        return f"no development data at {given}: --data / {ENV} must name a directory"
    return given


def run_sets(names: list[str], data: Path, workers: int) -> dict[str, dict[str, object]]:
    """Each set's figures and wall time, printed as each finishes."""
    results: dict[str, dict[str, object]] = {}
    for name in names:
        start = time.perf_counter()
        figures = SETS[name](data, workers)
        seconds = time.perf_counter() - start
        print(f"{name}: {len(figures)} figures in {seconds:.1f} s", file=sys.stderr)
        results[name] = {"seconds": round(seconds, 1), "figures": figures}
    return results


def render(results: dict[str, dict[str, object]]) -> None:
    """One table: a row per set × figure × method, a column per half."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="AEM on the development sets (tune | check | all)")
    for column in ("set", "figure", "method", *COLUMNS):
        table.add_column(column, justify="right" if column in COLUMNS else "left")
    for name, result in results.items():
        for f in result["figures"]:  # type: ignore[attr-defined]
            style = "bold" if f.method == "AEM" else None
            table.add_row(
                name, f.figure, f.method, *(_cell(f.cells[c]) for c in COLUMNS), style=style
            )
        table.add_section()
    console = Console(width=160)
    console.print(table)
    console.print("wall time: " + ", ".join(f"{n} {r['seconds']} s" for n, r in results.items()))


def _cell(cell: object) -> str:
    """A ratio as a percentage with its counts, an expectation as a percentage, F1 as is."""
    value, detail = cell.value, cell.detail  # type: ignore[attr-defined]
    if value is None:
        return "–"
    if "/" in detail:
        return f"{value:.1%} ({detail})"
    return f"{value:.1%}" if detail.startswith("n=") else f"{value:.3f}"


def write_json(path: Path, results: dict[str, dict[str, object]]) -> None:
    payload = {
        "split": "check when sha256(set + ':' + id)[0] is odd, else tune",
        "sets": {
            name: {
                "seconds": r["seconds"],
                "figures": [f.as_json() for f in r["figures"]],  # type: ignore[attr-defined]
            }
            for name, r in results.items()
        },
    }
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    names = [n.strip() for n in args.sets.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETS]
    if unknown:
        print(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(SETS)}", file=sys.stderr)
        return 2
    data = data_dir(args)
    if isinstance(data, str):
        print(data, file=sys.stderr)
        return 2
    results = run_sets(names, data, args.workers)
    render(results)
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
