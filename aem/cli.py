"""The ``aem`` command line (typer).

Exit codes of ``aem audit``: 0 — no root causes; 1 — root causes found;
2 — bad usage or unreadable input (missing path, invalid cases/config, nothing readable),
or no root cause found but a session could not be evaluated.
The CLI is the composition root: it is the one module of ``aem`` allowed to reach into
``collectors`` (the readers here, the live receivers for ``serve``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from aem.audit import DEFAULT_MAX_RECORD_BYTES, AuditProgress, audit_paths
from aem.cases import CasesError, load_cases
from aem.config import load_config
from aem.datatests.commands import checks_command, test_app, threshold_app
from aem.model import AuditReport, ClosedSession
from aem.report.terminal import render
from aem.scorecards.commands import (
    ScorecardOption,
    StoreOption,
    audit_scorer,
    print_totals,
    report_with_totals,
)
from aem.scorecards.commands import app as scorecard_app

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Agent Evaluation Metric")
app.add_typer(scorecard_app, name="scorecard")
app.add_typer(test_app, name="test")
app.add_typer(threshold_app, name="threshold")
app.command("checks")(checks_command)
EXIT_OK, EXIT_ROOT_CAUSES, EXIT_BAD_INPUT = 0, 1, 2
MaxRecordBytesOption = Annotated[
    int, typer.Option(min=1024, help="a longer record (line, document) is reported and skipped")
]


@app.callback()
def _root() -> None:
    """Evaluate LLM agents from their OpenTelemetry traces."""


@app.command()
def audit(
    paths: Annotated[list[str], typer.Argument(help="trace files, directories, or - for stdin")],
    cases: Annotated[Path | None, typer.Option(help="cases file (JSONL or YAML)")] = None,
    config: Annotated[Path | None, typer.Option(help="configuration file (TOML)")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="override a setting: key.path=value")
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="print the JSON report to stdout")] = False,
    out: Annotated[Path | None, typer.Option(help="also write the JSON report here")] = None,
    html: Annotated[
        Path | None, typer.Option(help="also write the HTML report here (one self-contained file)")
    ] = None,
    summary: Annotated[bool, typer.Option(help="only the ranking, no per-session tables")] = False,
    progress: Annotated[
        bool | None,
        typer.Option("--progress/--no-progress", help="progress bar (default: on a terminal)"),
    ] = None,
    scorecard: ScorecardOption = None,
    store: StoreOption = None,
    max_record_bytes: MaxRecordBytesOption = DEFAULT_MAX_RECORD_BYTES,
) -> None:
    """Evaluate every session in OTLP trace files; print turns, labels and root causes."""
    err = Console(stderr=True)
    missing = [p for p in paths if p != "-" and not Path(p).exists()]
    if missing:
        err.print(f"[red]error:[/] no such file or directory: {', '.join(missing)}")
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        settings = load_config(config, set_ or [])
        case_map = load_cases(cases) if cases else {}
        scorer = audit_scorer(scorecard, store) if scorecard else None
    except (CasesError, ValueError, OSError) as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    report = _read_with_progress(
        paths,
        progress if progress is not None else sys.stderr.isatty() and not json_,
        cases=case_map,
        config=settings,
        on_closed=scorer,
        max_record_bytes=max_record_bytes,
    )
    if out is not None:
        out.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    if html is not None:
        from aem.report.html import render_report, write_html

        write_html(render_report(report), html)
    if json_:
        sys.stdout.write(report_with_totals(report.model_dump_json(indent=2), scorer) + "\n")
    else:
        render(report, Console(), sessions=not summary)
        print_totals(scorer, Console())
    raise typer.Exit(_exit_code(report))


def _exit_code(report: AuditReport) -> int:
    """The exit code of ``aem audit`` (module docstring), saying on stderr why it is 2."""
    err = Console(stderr=True)
    if report.spans_read == 0:
        err.print("[red]error:[/] no spans could be read from the input")
        return EXIT_BAD_INPUT
    if report.sessions_with_root_cause:
        return EXIT_ROOT_CAUSES
    failed = sum(1 for issue in report.issues if issue.kind == "evaluation_error")
    if failed:  # "no root causes" would be a verdict on sessions that were not evaluated
        err.print(f"[red]error:[/] {failed} session(s) could not be evaluated")
        return EXIT_BAD_INPUT
    return EXIT_OK


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


@app.command()
def serve(
    config: Annotated[Path | None, typer.Option(help="configuration file (TOML, [serve])")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="override: serve.key=value or key.path=value")
    ] = None,
    cases: Annotated[Path | None, typer.Option(help="cases file (JSONL or YAML)")] = None,
) -> None:
    """Receive OTLP (gRPC :4317, HTTP :4318 on 127.0.0.1), evaluate finished sessions live."""
    from aem.serve.command import serve_command

    raise typer.Exit(serve_command(config, set_ or [], cases))


@app.command()
def calibrate(
    pairs: Annotated[Path, typer.Argument(help="labelled pairs: JSONL {a, b, same} or CSV")],
    config: Annotated[Path | None, typer.Option(help="configuration file (TOML)")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="override a setting: key.path=value")
    ] = None,
) -> None:
    """Per threshold: false-match and false-mismatch rates, and the threshold that balances them."""
    from aem.compare import SemanticComparator
    from aem.compare.calibrate import calibrate as run_calibration
    from aem.compare.calibrate import read_pairs, render_calibration

    err = Console(stderr=True)
    try:
        settings = load_config(config, set_ or [])
        labelled = read_pairs(pairs)
    except (ValueError, OSError) as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    result = run_calibration(labelled, SemanticComparator(settings.compare))
    render_calibration(result, Console())


@app.command()
def diff(
    before: Annotated[Path, typer.Argument(help="JSON report of the earlier run")],
    after: Annotated[Path, typer.Argument(help="JSON report of the later run")],
    json_: Annotated[bool, typer.Option("--json", help="print the diff as JSON")] = False,
    html: Annotated[
        Path | None, typer.Option(help="also write the HTML report in compare mode here")
    ] = None,
) -> None:
    """Compare two runs: root causes that disappeared or appeared, flagged turns gone.

    Exit code 1 when a root cause appeared or a session started failing, else 0.
    """
    from aem.diff import diff_runs, load_report
    from aem.report.terminal import render_diff

    try:
        earlier, later = load_report(before), load_report(after)
        result = diff_runs(earlier, later)
    except (OSError, ValueError) as exc:
        Console(stderr=True).print(f"[red]error:[/] {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if html is not None:
        from aem.report.html import render_compare, write_html

        write_html(render_compare(earlier, later), html)
    if json_:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        render_diff(result, Console())
    raise typer.Exit(1 if result.appeared or result.sessions_broken else 0)


@app.command()
def report(
    report_json: Annotated[Path, typer.Argument(help="JSON report (aem audit --out)")],
    output: Annotated[Path, typer.Option("-o", "--output", help="HTML file to write")],
) -> None:
    """Turn a JSON report into the HTML report: one self-contained file, no server."""
    from aem.diff import load_report
    from aem.report.html import render_report, write_html

    try:
        loaded = load_report(report_json)
    except (OSError, ValueError) as exc:
        Console(stderr=True).print(f"[red]error:[/] {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    write_html(render_report(loaded, title=f"AEM report: {report_json.name}"), output)
    Console(stderr=True).print(f"wrote {output}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
