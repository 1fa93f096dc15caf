"""Commands over finished runs: ``aem diff``, ``aem report`` and ``aem calibrate``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer  # noqa: TID251
from rich.console import Console

from aem.cli.audit import ConfigOption, SetOption
from aem.cli.errors import fail
from aem.cli.exit_codes import ExitCode
from aem.config import load_config


def calibrate(
    pairs: Annotated[Path, typer.Argument(help="labelled pairs: JSONL {a, b, same} or CSV")],
    config: ConfigOption = None,
    set_: SetOption = None,
    setting: Annotated[
        str,
        typer.Option(
            help="the threshold the pairs calibrate, named in the advice printed: e.g. "
            "metrics.groundedness.similarity_threshold for claim/passage pairs"
        ),
    ] = "compare.text_similarity_threshold",
) -> None:
    """Per threshold: false-match and false-mismatch rates, and the threshold that balances them."""
    from aem.compare import SemanticComparator
    from aem.compare.calibrate import calibrate as run_calibration
    from aem.compare.calibrate import read_pairs, render_calibration

    try:
        settings = load_config(config, set_ or [])
        load_config(config, [*(set_ or []), f"{setting}=0.5"])  # a setting that exists
        labelled = read_pairs(pairs)
    except (ValueError, OSError) as exc:
        fail(exc)
    result = run_calibration(labelled, SemanticComparator(settings.compare))
    render_calibration(result, Console(), setting=setting)


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
    from aem.report.terminal import output_console, render_diff
    from aem.runs.diff import diff_runs, load_report

    try:
        earlier, later = load_report(before), load_report(after)
        result = diff_runs(earlier, later)
    except (OSError, ValueError) as exc:
        fail(exc)
    if html is not None:
        from aem.report.html import render_compare, write_html

        write_html(render_compare(earlier, later), html)
    if json_:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        render_diff(result, output_console())
    raise typer.Exit(ExitCode.FOUND if result.appeared or result.sessions_broken else ExitCode.OK)


def report(
    report_json: Annotated[Path, typer.Argument(help="JSON report (aem audit --out)")],
    output: Annotated[Path, typer.Option("-o", "--output", help="HTML file to write")],
) -> None:
    """Turn a JSON report into the HTML report: one self-contained file, no server."""
    from aem.report.html import render_report, write_html
    from aem.runs.diff import load_report

    try:
        loaded = load_report(report_json)
    except (OSError, ValueError) as exc:
        fail(exc)
    write_html(render_report(loaded, title=f"AEM report: {report_json.name}"), output)
    Console(stderr=True).print(f"wrote {output}")
