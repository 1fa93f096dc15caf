"""``aem taxonomy suggest``: a starting failure taxonomy from a run's root causes, with
the share of root causes each rule decides (how the rules are found:
:mod:`aem.cli.taxonomy_suggest`).

Why the coverage is printed as well as written: a user deciding which rules to keep
needs to see that a rule takes 3 of 7 root causes and the set categorises all of them,
without opening the file; the rules file carries the same numbers as comments, and
``--json`` gives them to a script.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer  # noqa: TID251
from rich.table import Table

from aem.cli.audit import ConfigOption
from aem.cli.errors import fail
from aem.cli.taxonomy_suggest import Suggestion, suggest
from aem.config import load_config
from aem.report.terminal import output_console

taxonomy_app = typer.Typer(no_args_is_help=True, help="Failure categories (docs/taxonomy.md).")


def share(count: int, total: int) -> str:
    """``3 of 7 root causes (43%)``.

    >>> share(3, 7), share(0, 0)
    ('3 of 7 root causes (43%)', '0 of 0 root causes (0%)')
    """
    return f"{count} of {total} root causes ({count / total if total else 0:.0%})"


def toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, except that TOML has no surrogate
    escapes (so non-ASCII stays as it is) and refuses a raw DEL."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def to_toml(suggestion: Suggestion) -> str:
    """The rules file: one commented ``[[taxonomy]]`` table per rule, in file order."""
    lines = [
        "# A starting failure taxonomy suggested by `aem taxonomy suggest`: rename the",
        "# categories, merge or split rules, then use it with `aem audit --taxonomy FILE`.",
        "# Rules are tried top to bottom; the first whose conditions all hold decides.",
        f"# On the report it came from, these {len(suggestion.rules)} rule(s) categorise "
        f"{share(suggestion.categorised, suggestion.root_causes)}.",
    ]
    for item in suggestion.rules:
        example = "".join(c if c.isprintable() else "?" for c in item.example[:150])
        lines += ["", f"# decides {share(item.decides, suggestion.root_causes)}, e.g.: {example}"]
        lines += ["[[taxonomy]]"] + [f"{k} = {toml_string(v)}" for k, v in item.rule.items()]
    return "\n".join(lines) + "\n"


def to_json(suggestion: Suggestion) -> dict[str, Any]:
    """The rules with their coverage, and the coverage of the whole set."""
    total = suggestion.root_causes
    return {
        "root_causes": total,
        "categorised": suggestion.categorised,
        "coverage": round(suggestion.categorised / total, 4) if total else 0.0,
        "rules_left_out": suggestion.left_out,
        "rules": [
            {
                "rule": item.rule,
                "decides": item.decides,
                "coverage": round(item.decides / total, 4),
                "example": item.example,
            }
            for item in suggestion.rules
        ],
    }


def coverage_table(suggestion: Suggestion) -> Table:
    """Each rule's category and the root causes it decides; the whole set in the caption."""
    total = suggestion.root_causes
    caption = f"{len(suggestion.rules)} rule(s) categorise {share(suggestion.categorised, total)}"
    if suggestion.left_out:
        caption += f"; {suggestion.left_out} rule(s) left out: an earlier rule took all theirs"
    table = Table(title="suggested rules", caption=caption, title_justify="left")
    table.add_column("#", no_wrap=True, justify="right")
    table.add_column("category", no_wrap=True)
    table.add_column("decides", no_wrap=True, justify="right")
    table.add_column("share", no_wrap=True, justify="right")
    for position, item in enumerate(suggestion.rules, start=1):
        table.add_row(
            str(position), item.category, str(item.decides), f"{item.decides / total:.0%}"
        )
    return table


@taxonomy_app.command("suggest")
def suggest_command(
    report_json: Annotated[Path, typer.Argument(help="JSON report (aem audit --out)")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="rules file to write (default: stdout)")
    ] = None,
    distance: Annotated[
        float,
        typer.Option(min=0.0, max=2.0, help="cosine distance below which explanations group"),
    ] = 0.35,
    json_: Annotated[
        bool, typer.Option("--json", help="print the rules and their coverage as JSON")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Propose [[taxonomy]] rules by clustering the root causes' explanations.

    Every rule decides at least one root cause of the report; none is a catch-all. The
    coverage of each rule and of the set is printed (stderr), written as comments in the
    rules file, and given by --json.
    """
    from aem.compare.embedder import TextEmbedder
    from aem.runs.diff import load_report

    try:
        report = load_report(report_json)
        settings = load_config(config)
    except (OSError, ValueError) as exc:
        fail(exc)
    embedder = TextEmbedder.from_settings(settings.compare)
    suggestion = suggest(report, embedder.encode, distance)
    text = to_toml(suggestion)
    err = output_console(stderr=True)
    if output is not None:
        output.write_text(text, encoding="utf-8")
    if json_:
        typer.echo(json.dumps(to_json(suggestion), indent=2, ensure_ascii=False))
    elif output is None:
        typer.echo(text, nl=False)
    if suggestion.root_causes:
        err.print(coverage_table(suggestion))
    else:
        err.print("no root cause in the report: no rule to suggest")
    if output is not None:
        err.print(f"wrote {len(suggestion.rules)} rule(s) to {output}")
