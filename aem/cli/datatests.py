"""``aem test …``, ``aem threshold …`` and ``aem checks``: dataset tests from the shell.

The codes (:mod:`aem.cli.exit_codes`): OK — done and every declared gate met; FOUND — a
run is below a gate the test declares (``--gate check=0.9``), so CI can fail on it;
BAD_INPUT — bad usage, unknown names, or a refused run (the 2,000 cap, a judge change
after the first run); NOT_EVALUABLE — a gated check's evaluations are more than half
judge errors, or nothing passed or failed at all (every evaluation skipped or a judge
error). FOUND wins over NOT_EVALUABLE: a gate proven missed is a failure whatever else
could not be evaluated. What each command does is :mod:`aem.datatests.api`.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer  # noqa: TID251
from rich.console import Console
from rich.text import Text

from aem.cases import CasesError
from aem.cli.exit_codes import ExitCode
from aem.config import load_resolved
from aem.datatests import api
from aem.datatests.results import RunResult
from aem.foundation.terminaltext import safe as plain
from aem.metrics.registry import ResolvedMetrics
from aem.store import Store, StoreError, default_store_path

test_app = typer.Typer(no_args_is_help=True, help="Dataset tests: create, run, show, compare")
threshold_app = typer.Typer(no_args_is_help=True, help="Project thresholds of the checks")
# A run's status (:class:`RunResult`) as the exit code of the command that showed it.
_EXIT_BY_STATUS = {
    "ok": ExitCode.OK,
    "below gate": ExitCode.FOUND,
    "not evaluable": ExitCode.NOT_EVALUABLE,
}

StoreOpt = Annotated[Path | None, typer.Option(help="results store ($AEM_STORE, aem.sqlite)")]
ConfigOpt = Annotated[Path | None, typer.Option(help="configuration file (TOML)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON")]


def _error(exc: BaseException) -> None:
    """``error: <message>`` on stderr; the message (it may quote input) printed as text."""
    Console(stderr=True).print(Text("error: ", "red").append_text(plain(exc)))


@contextmanager
def _session(
    store: Path | None, config: Path | None = None
) -> Iterator[tuple[Store, ResolvedMetrics]]:
    """The store and the checked configuration with its metrics (resolved once for the
    command); any refusal becomes a one-line error and exit 2."""
    try:
        settings = load_resolved(config)
        opened = api.open_store(store)
    except (ValueError, OSError, StoreError) as exc:
        _error(exc)
        raise typer.Exit(ExitCode.BAD_INPUT) from exc
    try:
        yield opened, settings
    except (ValueError, OSError, StoreError, CasesError) as exc:
        _error(exc)
        raise typer.Exit(ExitCode.BAD_INPUT) from exc
    finally:
        opened.close()


def _pairs(items: list[str] | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            if what == "judge":
                out["*"] = item
                continue
            raise typer.BadParameter(f"--{what} {item!r} is not CHECK=VALUE")
        out[key.strip()] = value.strip()
    return out


def _finish(run: RunResult, json_: bool) -> None:
    if json_:
        sys.stdout.write(json.dumps(run.as_json(), indent=2) + "\n")
    else:
        from aem.datatests.render import render_run

        render_run(run, Console())
    raise typer.Exit(_EXIT_BY_STATUS[run.status])


@test_app.command("create")
def create(
    name: str,
    cases: Annotated[Path, typer.Option(help="cases file (JSONL or YAML); its content is stored")],
    check: Annotated[list[str], typer.Option(help="a check to run (repeat)")],
    judge: Annotated[list[str] | None, typer.Option(help="CHECK=JUDGE, or JUDGE for all")] = None,
    gate: Annotated[list[str] | None, typer.Option(help="CHECK=0.9 or all=0.9: minimum")] = None,
    traces: Annotated[list[str] | None, typer.Option(help="default answers: trace files")] = None,
    agent: Annotated[str | None, typer.Option(help="default answers: module:function")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Create a test: store the cases, copy the thresholds, choose the judges."""
    with _session(store, config) as (opened, settings):
        gates = {k: float(v) for k, v in _pairs(gate, "gate").items()}
        source: dict[str, Any] = {"traces": traces} if traces else {}
        if agent:
            source = {"agent": agent}
        spec = api.create_test(
            opened,
            settings.config,
            name,
            cases,
            check,
            judges=_pairs(judge, "judge"),
            gates=gates,
            source=source,
        )
        for c in spec.checks:
            judge_text = f", judge {c.judge}" if c.judge else ""
            threshold = "no threshold" if c.threshold is None else f"threshold {c.threshold:g}"
            Console().print(plain(f"{spec.name}: {c.name} ({threshold}{judge_text})"))


@test_app.command("run")
def run(
    name: str,
    traces: Annotated[list[str] | None, typer.Option(help="answers from these trace files")] = None,
    agent: Annotated[str | None, typer.Option(help="ask this module:function")] = None,
    json_: JsonOpt = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Run a test; exit 1 when a declared gate is not met, 4 when it is not evaluable."""
    with _session(store, config) as (opened, settings):
        result = api.run_test(opened, settings, name, traces=traces, agent=agent)
    _finish(result, json_)


@test_app.command("show")
def show(
    run_id: Annotated[int, typer.Argument(help="run id")],
    evaluation: Annotated[int, typer.Option(help="0: the run's own; N: extra evaluation N")] = 0,
    json_: JsonOpt = False,
    store: StoreOpt = None,
) -> None:
    """A run: pass rate per check, mean, judge errors, and every case's verdicts."""
    with _session(store) as (opened, _):
        result = api.load_run(opened, run_id, evaluation)
    _finish(result, json_)


@test_app.command("list")
def list_(json_: JsonOpt = False, store: StoreOpt = None) -> None:
    """Tests with their case and run counts, and each test's runs."""
    with _session(store) as (opened, _):
        rows = [
            {"test": n, "cases": c, "runs": [r[0] for r in api.list_runs(opened, n)]}
            for n, c, _count in api.list_tests(opened)
        ]
    if json_:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    for row in rows:
        Console().print(plain(f"{row['test']}: {row['cases']} cases, runs {row['runs'] or 'none'}"))


@test_app.command("copy")
def copy(
    name: str,
    new: str,
    judge: Annotated[list[str] | None, typer.Option(help="CHECK=JUDGE, or JUDGE for all")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """A new test with the same cases, checks and thresholds, and other judges."""
    with _session(store, config) as (opened, settings):
        spec = api.copy_test(opened, settings.config, name, new, _pairs(judge, "judge"))
    judges = ", ".join(f"{c.name}={c.judge}" for c in spec.checks if c.judge)
    Console().print(plain(f"{spec.name}: copy of {name}; judges {judges}"))


@test_app.command("set-judge")
def set_judge(
    name: str, check: str, judge: str, store: StoreOpt = None, config: ConfigOpt = None
) -> None:
    """Change an LLM check's judge (only before the test's first run)."""
    with _session(store, config) as (opened, settings):
        api.set_judge(opened, settings.config, name, check, judge)
    Console().print(plain(f"{name}: {check} is judged by {judge}"))


@test_app.command("rescore")
def rescore(
    run_id: Annotated[int, typer.Argument(help="run id")],
    judge: Annotated[str, typer.Option(help="the other judge")],
    check: Annotated[list[str] | None, typer.Option(help="LLM checks (default: all)")] = None,
    json_: JsonOpt = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """An extra evaluation of a run's answers by another judge, stored beside the original."""
    with _session(store, config) as (opened, settings):
        result = api.rescore(opened, settings.config, run_id, judge, check)
    _finish(result, json_)


@test_app.command("compare")
def compare(
    before: Annotated[int, typer.Argument(help="earlier run id")],
    after: Annotated[int, typer.Argument(help="later run id")],
    json_: JsonOpt = False,
    store: StoreOpt = None,
) -> None:
    """Two runs of one test side by side; exit 1 when the later one is below a gate."""
    with _session(store) as (opened, _):
        first, second = api.load_run(opened, before), api.load_run(opened, after)
        if first.test != second.test:
            raise ValueError(
                f"runs {before} and {after} belong to different tests ({first.test}, {second.test})"
            )
    if json_:
        payload = {"before": first.as_json(), "after": second.as_json()}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        from aem.datatests.render import render_compare

        render_compare(first, second, Console())
    raise typer.Exit(_EXIT_BY_STATUS[second.status])


def _value(check: str, value: str) -> float:
    try:
        return float(value.strip().rstrip("%"))
    except ValueError as exc:
        raise ValueError(f"{check}: {value!r} is not a number") from exc


@threshold_app.command("set")
def threshold_set(check: str, value: str, store: StoreOpt = None) -> None:
    """Set a check's project threshold (LLM checks 1-10, tool calls 1-100 %); new tests copy it."""
    with _session(store) as (opened, _):
        api.set_threshold(opened, check, _value(check, value))
    Console().print(plain(f"{check}: threshold {value} (overridden); existing tests keep theirs"))


@threshold_app.command("reset")
def threshold_reset(check: str, store: StoreOpt = None) -> None:
    """Back to the configured (or default) threshold."""
    with _session(store) as (opened, _):
        api.reset_threshold(opened, check)
    Console().print(plain(f"{check}: threshold reset"))


def checks_command(
    json_: JsonOpt = False, store: StoreOpt = None, config: ConfigOpt = None
) -> None:
    """The check cards: what each evaluates, the fields it needs, threshold, judges."""
    from aem.datatests.cards import check_cards

    # The cards only read the store (thresholds overridden there): with no store yet, a
    # scratch one, so that listing the checks never leaves an aem.sqlite behind.
    existing = store or default_store_path()
    with tempfile.TemporaryDirectory() as scratch:
        where = existing if existing.exists() else Path(scratch) / "aem.sqlite"
        with _session(where, config) as (opened, settings):
            cards = check_cards(settings.config, opened)
    if json_:
        sys.stdout.write(json.dumps(cards, indent=2) + "\n")
        return
    console = Console()
    for card in cards:
        threshold = (
            "none (pass or fail)"
            if card["threshold"] is None
            else (
                f"{card['threshold']:g}{card['unit']}"
                + (" (overridden)" if card["overridden"] else "")
            )
        )
        console.print(f"[bold]{card['check']}[/] — {card['evaluates']}")
        console.print(f"  needs: {card['needs']}; threshold: {threshold}")
        if "recommended_judges" in card:
            judges = ", ".join(
                j["judge"] + ("" if j["configured"] else " (not configured)")
                for j in card["recommended_judges"]
            )
            console.print(f"  recommended judges: {judges}")
