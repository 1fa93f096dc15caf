"""``aem audit``: trace files in, the terminal view (or JSON, HTML) out, an exit code.

Exit codes (:mod:`aem.cli.exit_codes`): OK no root causes; FOUND root causes found (with
``--gate``: a gate failed); BAD_INPUT bad usage or unreadable input (missing path,
invalid cases/config, nothing readable), or no root cause found but a session could not
be evaluated (a clean verdict on sessions nobody evaluated is a lie).
Input skipped on the way (an unreadable file, a bad record, a refused span) is said on
stderr with where it was; it leaves the exit code alone unless ``--strict`` makes it 2.
A session whose evaluation raised is said on stderr with what raised, listed in the
report's issues, makes ``--strict`` exit 2, and is not recorded as evaluated in the
``--since last`` ledger (which reads it again next run). A metric result that is an error
(the metric or its judge raised) is counted on stderr the same way, and makes ``--strict``
exit 2 too. A ``--sink`` that refuses the verdicts makes the exit code 2, after
``--json``/``--out``/``--html`` have written the report.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer  # noqa: TID251
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from aem.audit import (
    DEFAULT_MAX_RECORD_BYTES,
    AuditProgress,
    audit_paths,
    skipped_input,
    unevaluated,
)
from aem.cases import Case, CasesError, load_cases
from aem.checks.case_use import unused_case_fields
from aem.cli.engines import EngineOption, SessionsDirOption, WorkersOption
from aem.cli.errors import err_console, fail
from aem.cli.exit_codes import ExitCode
from aem.cli.pull import (
    DEFAULT_SETTLE_SECONDS,
    BackendError,
    FromOption,
    Pull,
    SettleOption,
    SinceOption,
    SinkOption,
    UntilOption,
    configured_sinks,
    max_wait,
    open_pull,
)
from aem.cli.scorecards import ScorecardOption, StoreOption
from aem.config import load_resolved
from aem.engines import EngineError
from aem.engines.choice import Engine, audit_on_ray
from aem.evaluate import build_report
from aem.foundation.model import AuditReport, ClosedSession, Outcome
from aem.foundation.provenance import provenance_by_metric
from aem.foundation.terminaltext import escape_controls
from aem.metrics.registry import ResolvedMetrics
from aem.ranking import load_taxonomy
from aem.report.gate_view import render_gates
from aem.report.session_view import SHOWN_SESSIONS
from aem.report.terminal import output_console, render
from aem.runs.gates import apply_gates, parse_gates
from aem.scorecards.operations import ScoredAuditReport, audit_scorer, scored_report
from aem.scorecards.render import render_scored
from aem.sinks.base import DeliveryError, Sink
from aem.sinks.delivery import close_all, deliver_reports
from aem.store import StoreError

MaxRecordBytesOption = Annotated[
    int, typer.Option(min=1024, help="a longer record (line, document) is reported and skipped")
]
PathsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        help="trace files, directories, or - for stdin (none with --from)", metavar="PATH"
    ),
]
CasesOption = Annotated[Path | None, typer.Option(help="cases file (JSONL or YAML)")]
ConfigOption = Annotated[Path | None, typer.Option(help="configuration file (TOML)")]
SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", metavar="KEY=VALUE", help="override a setting: key.path=value"),
]
JsonOption = Annotated[bool, typer.Option("--json", help="print the JSON report to stdout")]
HtmlOption = Annotated[
    Path | None, typer.Option(help="also write the HTML report here (one self-contained file)")
]
TaxonomyOption = Annotated[
    Path | None,
    typer.Option(
        help="[[taxonomy]] rules file (TOML) naming failure categories; replaces the "
        "config's rules (docs/taxonomy.md)"
    ),
]
StrictOption = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="exit 2 when any input was skipped (an unreadable file, a bad record or span); "
        "without it skipped input is reported and the exit code is the verdicts'",
    ),
]
ProgressOption = Annotated[
    bool | None,
    typer.Option("--progress/--no-progress", help="progress bar (default: on a terminal)"),
]

AllOption = Annotated[
    bool,
    typer.Option(
        "--all",
        help=f"a table for every session; by default a run of more than {SHOWN_SESSIONS} "
        f"sessions tables only the first {SHOWN_SESSIONS} with a root cause and says how "
        "many it left out (the ranking and the summary always count every session)",
    ),
]
GateOption = Annotated[
    list[str] | None,
    typer.Option(
        "--gate",
        metavar="METRIC=THRESHOLD",
        help="run gate, e.g. groundedness=0.85: the share of cases that passed; below it "
        "the exit code is 1, at or above it 0 (root causes then do not set the exit code)",
    ),
]
GateUnmeasuredOption = Annotated[
    float | None,
    typer.Option(
        "--gate-unmeasured",
        metavar="SHARE",
        min=0.0,
        max=1.0,
        help="with --gate: also fail a gate when more than this share of sessions could not "
        "be scored (judge errors, unverified, skipped, no result), e.g. 0.1",
    ),
]


def audit(
    paths: PathsArgument = None,
    cases: CasesOption = None,
    config: ConfigOption = None,
    set_: SetOption = None,
    taxonomy: TaxonomyOption = None,
    json_: JsonOption = False,
    out: Annotated[Path | None, typer.Option(help="also write the JSON report here")] = None,
    html: HtmlOption = None,
    summary: Annotated[bool, typer.Option(help="only the ranking, no per-session tables")] = False,
    all_: AllOption = False,
    progress: ProgressOption = None,
    scorecard: ScorecardOption = None,
    store: StoreOption = None,
    max_record_bytes: MaxRecordBytesOption = DEFAULT_MAX_RECORD_BYTES,
    gate: GateOption = None,
    gate_unmeasured: GateUnmeasuredOption = None,
    workers: WorkersOption = None,
    engine: EngineOption = Engine.LOCAL,
    sessions_dir: SessionsDirOption = None,
    strict: StrictOption = False,
    from_: FromOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    settle: SettleOption = DEFAULT_SETTLE_SECONDS,
    sink: SinkOption = None,
) -> None:
    """Evaluate every session in trace files or a backend (--from): turns, labels, causes.

    A table per session (beyond 10 sessions, the first 10 with a root cause: --all for
    all), a line per failed turn, a legend, the ranking, a summary; piped: 120+ columns.
    Skipped input is always reported on stderr; with --strict it makes the exit code 2.
    """
    paths = _inputs(paths or [], from_ or [], engine)
    resolved, case_map = _settings(config, set_, taxonomy, cases)
    try:
        scorer = audit_scorer(scorecard, store) if scorecard else None
        gates = parse_gates(gate or [], resolved)
    except (CasesError, ValueError, OSError, StoreError) as exc:
        fail(exc)
    pull, sinks = _pull_and_sinks(from_ or [], (since, until, settle), store, sink, resolved, json_)
    report = _run_audit(
        engine,
        workers,
        sessions_dir,
        paths,
        progress if progress is not None else sys.stderr.isatty() and not json_,
        cases=case_map,
        config=resolved,
        on_closed=scorer,
        max_record_bytes=max_record_bytes,
        **pull.audit_options(),
    )
    if scorer is not None:
        report = scored_report(report, scorer)
    refused = _deliver(report, sinks, pull, resolved)
    apply_gates(report, gates, case_map, gate_unmeasured)
    _write_files(report, out, html)  # a sink that refused loses nothing else
    _show(report, json_=json_, tables=not summary, every_session=all_)
    raise typer.Exit(_exit_code(report, pull, gated=bool(gates), strict=strict, refused=refused))


def _exit_code(
    report: AuditReport,
    pull: Pull,
    *,
    gated: bool,
    strict: bool,
    refused: DeliveryError | None = None,
) -> ExitCode:
    """The exit code (module docstring), once stderr said which sessions were not
    evaluated, what input was skipped and which pulled sessions look unfinished; 2
    naming the sink that ``refused``."""
    if refused is not None:
        fail(refused)
    say_unevaluated(report)
    code = gated_exit_code(report) if gated else exit_code(report)
    code = metric_errors_exit_code(report, strict, skipped_exit_code(report, strict, code))
    return unfinished_exit_code(report, pull, strict, code)


def unfinished_exit_code(report: AuditReport, pull: Pull, strict: bool, code: ExitCode) -> ExitCode:
    """Say on stderr how many sessions of a ``--from`` read look unfinished (orphan spans,
    spans that ended within ``--settle`` of the read) and how to wait; with ``strict``
    that makes the exit code 2: a pull that may have under-read is not a clean verdict."""
    err = err_console()
    for note in pull.settle_notes():
        err.print(f"note: {escape(escape_controls(note))}")
    for found in pull.unfinished(report):
        said = escape(escape_controls(found.summary()))
        if strict:
            err.print(f"[red]error:[/] {said} (--strict)")
            code = ExitCode.BAD_INPUT
        else:
            err.print(f"[yellow]warning:[/] {said} (--strict makes this exit 2)")
    return code


def _say_waiting(source: str, age: float, pause: float, settle: float) -> None:
    """One line each time a pull waits for its backend to settle (stderr)."""
    err_console().print(
        f"{escape(escape_controls(source))}: the backend is in use (the newest span ended "
        f"{age:.1f} s ago); reading again in {pause:.1f} s, until a read finds nothing new "
        f"(--settle {settle:g}, at most {max_wait(settle):g} s)"
    )


def metric_errors_exit_code(report: AuditReport, strict: bool, code: ExitCode) -> ExitCode:
    """Say on stderr how many metric results are errors (a metric or its judge raised, so
    the turn was not checked by it); with ``strict`` that makes the exit code 2, as
    skipped input does: a clean verdict must not stand on checks that did not run."""
    errors = [
        m
        for session in report.sessions
        for turn in session.turns
        for m in turn.metrics
        if m.outcome is Outcome.ERROR
    ]
    if not errors:
        return code
    by_metric = Counter(m.name for m in errors)
    named = ", ".join(f"{name} {count}" for name, count in sorted(by_metric.items()))
    said = escape(
        escape_controls(
            f"{len(errors)} metric result(s) are errors ({named}); the first: "
            f"{errors[0].explanation[:200]}"
        )
    )
    if strict:
        err_console().print(f"[red]error:[/] {said} (--strict)")
        return ExitCode.BAD_INPUT
    err_console().print(f"[yellow]warning:[/] {said} (--strict makes this exit 2)")
    return code


def gated_exit_code(report: AuditReport) -> ExitCode:
    """With ``--gate`` the run's verdict is the gates': OK when every gate passed, FOUND
    when one did not; BAD_INPUT when nothing could be read (no verdict at all)."""
    if report.spans_read == 0:
        return ExitCode.BAD_INPUT
    return ExitCode.OK if all(g.passed for g in report.gates) else ExitCode.FOUND


def _show(report: AuditReport, *, json_: bool, tables: bool, every_session: bool) -> None:
    """The report on stdout: JSON (the same text ``--out`` writes), or the terminal view
    with totals and gates."""
    if json_:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        _print_view(report, tables=tables, every_session=every_session)


def _pull_and_sinks(
    urls: list[str],
    window: tuple[str | None, str | None, float],
    store: Path | None,
    sinks: list[str] | None,
    resolved: ResolvedMetrics,
    json_: bool,
) -> tuple[Pull, list[Sink]]:
    """The ``--from`` sources (settled, then planned with ``--since last``; ``window``:
    since, until, settle) and the ``--sink`` sinks; exit 2 naming what cannot be opened,
    exit 0 when ``--since last`` finds nothing new."""
    since, until, settle = window
    try:
        built = configured_sinks(sinks, resolved.config.sinks, urls) if sinks else []
        pull = open_pull(
            urls,
            since,
            until,
            store,
            resolved.config.sources,
            settle=settle,
            on_wait=lambda source, age, pause: _say_waiting(source, age, pause, settle),
        )
    except (ValueError, OSError, BackendError, StoreError) as exc:
        fail(exc)
    for note in filter(None, (plan.window_note() for plan in pull.plans)):
        err_console().print(f"note: {escape(escape_controls(note))}")
    if pull.nothing_new():
        close_all(built)
        _say_nothing_new(pull, json_)
    return pull, built


def _say_nothing_new(pull: Pull, json_: bool) -> NoReturn:
    """``--since last`` with no span since the previous run: say so, exit 0 (an empty
    report with ``--json``, so a script reads the same shape every time)."""
    err_console().print(
        f"{pull.sources[0].name}: no new spans since the last run; nothing to evaluate"
    )
    if json_:
        sys.stdout.write(build_report([]).model_dump_json(indent=2) + "\n")
    raise typer.Exit(ExitCode.OK)


def _inputs(paths: list[str], urls: list[str], engine: Engine) -> list[str]:
    """The files to read, checked: they exist, or there are none and --from names a backend."""
    if paths and urls:
        fail("give trace files or --from URL, not both")
    if not paths and not urls:
        fail("no input: give trace files (PATH …) or --from URL")
    if urls and engine is not Engine.LOCAL:
        fail("--from reads with --engine local")
    missing = [p for p in paths if p != "-" and not Path(p).exists()]
    if missing:
        fail(f"no such file or directory: {', '.join(missing)}")
    return paths


def _deliver(
    report: AuditReport,
    sinks: list[Sink],
    pull: Pull,
    resolved: ResolvedMetrics,
) -> DeliveryError | None:
    """The verdicts through every ``--sink``, each with its evaluator's provenance,
    then the ``--since last`` ledger: it moves only once every sink took the verdicts.
    A sink that refuses is returned (the command fails with it once ``--json``/``--out``
    have the report: the verdicts are not lost because a downstream was)."""
    _leave_unevaluated_out(pull, report)
    if not sinks:
        pull.record(report)
        return None
    provenance = provenance_by_metric(resolved.metrics, resolved.config.judges)
    try:
        delivered = deliver_reports(report.sessions, sinks, provenance=provenance)
    except DeliveryError as exc:
        return exc
    finally:
        close_all(sinks)
    for name, count in delivered.items():
        err_console().print(f"sink {name}: {count} verdict item(s) delivered")
    pull.record(report)
    return None


def _leave_unevaluated_out(pull: Pull, report: AuditReport) -> None:
    """Sessions whose evaluation raised are not recorded as evaluated by ``--since last``:
    a ledger row would skip them for good while their spans stay the same. The ledger
    keeps a session it selected but was not given back as *pending* and reads it again
    next run (:mod:`aem.pulls`); a session evaluated before and failing now keeps its
    old row, whose fingerprint no longer matches."""
    failed = {i.session_id for i in unevaluated(report)}
    for plan in pull.plans if failed else []:
        plan.seen = [s for s in plan.seen if s.session_id not in failed]


def say_unevaluated(report: AuditReport, shown: int = 5) -> None:
    """Each session whose evaluation raised, on stderr with what raised and where: it has
    no verdict in the report, and a clean-looking run must not hide that."""
    failed = unevaluated(report)
    err = err_console()
    for issue in failed[:shown]:
        where = f" ({issue.where()})" if issue.where() else ""
        err.print(f"[red]error:[/] {escape(escape_controls(issue.message + where))}")
    if len(failed) > shown:
        err.print(
            f"[red]error:[/] {len(failed) - shown} more session(s) not evaluated "
            "(the report's issues list every one)"
        )


def _settings(
    config: Path | None, set_: list[str] | None, taxonomy: Path | None, cases: Path | None
) -> tuple[ResolvedMetrics, dict[str, Case]]:
    """The resolved configuration (with ``--taxonomy``) and the cases: exit 2 naming
    what is wrong in either."""
    try:
        resolved = load_resolved(config, set_ or [])
        if taxonomy is not None:
            resolved.config.taxonomy = load_taxonomy(taxonomy)
        case_map = load_cases(cases) if cases else {}
    except (CasesError, ValueError, OSError) as exc:
        fail(exc)
    for line in unused_case_fields(case_map, resolved.metrics):
        err_console().print(f"note: {line}", markup=False, highlight=False)
    return resolved, case_map


def _print_view(report: AuditReport, *, tables: bool, every_session: bool) -> None:
    """The terminal view, the scorecard totals (with ``--scorecard``) and the gates, on
    one console."""
    console = output_console()
    render(report, console, sessions=tables, every_session=every_session)
    if isinstance(report, ScoredAuditReport):
        render_scored(report.scorecards, console)
    render_gates(report.gates, console)


def _write_files(report: AuditReport, out: Path | None, html: Path | None) -> None:
    """The JSON report and the HTML report, each when asked for."""
    if out is not None:
        out.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    if html is not None:
        from aem.report.html import render_report, write_html

        write_html(render_report(report), html)


def exit_code(report: AuditReport) -> ExitCode:
    """The exit code of ``aem audit`` (module docstring), saying on stderr why it is 2."""
    err = err_console()
    if report.spans_read == 0:
        err.print("[red]error:[/] no spans could be read from the input")
        return ExitCode.BAD_INPUT
    if report.sessions_with_root_cause:
        return ExitCode.FOUND
    failed = len(unevaluated(report))
    if failed:  # "no root causes" would be a verdict on sessions that were not evaluated
        err.print(
            f"[red]error:[/] {failed} session(s) could not be evaluated and no other has a "
            "root cause"
        )
        return ExitCode.BAD_INPUT
    return ExitCode.OK


def skipped_exit_code(report: AuditReport, strict: bool, code: ExitCode) -> ExitCode:
    """Say on stderr what input was skipped; with ``strict``, that makes the exit code 2."""
    skipped = skipped_input(report)
    if not skipped:
        return code
    said = escape(escape_controls(skipped.summary()))
    if strict:
        err_console().print(f"[red]error:[/] {said} (--strict)")
        return ExitCode.BAD_INPUT
    err_console().print(
        f"[yellow]warning:[/] {said}; the verdicts cover the rest (--strict makes this exit 2)"
    )
    return code


def _run_audit(
    engine: Engine,
    workers: int | None,
    sessions_dir: Path | None,
    paths: list[str],
    show_progress: bool,
    **options: Any,
) -> AuditReport:
    """The audit on the engine ``--engine`` names, with ``--workers`` of it."""
    if engine is Engine.LOCAL and sessions_dir is not None:
        fail("--sessions-dir needs --engine ray (the JSON report, --out, holds every session)")
    if engine is Engine.LOCAL:
        try:
            return _read_with_progress(paths, show_progress, workers=workers, **options)
        except BackendError as exc:  # a backend that failed mid-way: nothing was delivered
            fail(exc)
    if isinstance(options.get("config"), ResolvedMetrics):
        options["config"] = options["config"].config  # Ray's actors resolve their own
    try:
        return audit_on_ray(paths, workers, show_progress, output=sessions_dir, **options)
    except EngineError as exc:
        fail(exc)


def _read_with_progress(
    paths: list[str],
    show_progress: bool,
    *,
    on_closed: Callable[[ClosedSession], None] | None,
    **options: Any,
) -> AuditReport:
    """Run the audit behind a progress bar on stderr (disabled unless ``show_progress``)."""
    err = Console(stderr=True, force_terminal=True if show_progress else None)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not show_progress,
        transient=False,
    ) as bar:
        task = bar.add_task("reading", total=None)

        def on_file(path: str, number: int, total: int) -> None:
            bar.update(
                task, total=total, completed=number - 1, description=f"reading {Path(path).name}"
            )

        report = audit_paths(
            paths, progress=AuditProgress(on_file_start=on_file), on_closed=on_closed, **options
        )
        bar.update(task, completed=bar.tasks[0].total or 0, description="read")
    return report
