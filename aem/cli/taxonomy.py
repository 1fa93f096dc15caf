"""``aem taxonomy suggest``: a starting failure taxonomy from a run's explanations.

Why clustering: a team's categories are its own, but writing the first rules means
reading every explanation. Failures whose explanations say the same thing in other
words (embedded with the model the comparator ships, cosine distance) are grouped, and
each group becomes one ``[[taxonomy]]`` rule — its metric, turn kind and tool when the
group shares them, and a pattern of the words every explanation in it contains — to
rename, merge and edit. The output is the same for the same report (inputs are sorted,
the clustering has no randomness).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from aem.cli.audit import ConfigOption
from aem.cli.errors import fail
from aem.config import load_config
from aem.model import AuditReport, Label, Outcome
from aem.vocabulary import EXPLANATION_STOP_WORDS

taxonomy_app = typer.Typer(no_args_is_help=True, help="Failure categories (docs/taxonomy.md).")

_WORD = re.compile(r"[A-Za-z][A-Za-z_]{3,}")


@dataclass(frozen=True)
class Failure:
    """One failed metric on a root-cause turn, as the taxonomy sees it."""

    metric: str
    kind: str
    name: str
    explanation: str


def failures(report: AuditReport) -> list[Failure]:
    """Every failed metric on a root-cause turn, sorted (the input order cannot matter)."""
    found = {
        Failure(m.name, t.kind.value, t.name, " ".join(m.explanation.split()))
        for s in report.sessions
        for t in s.turns
        if t.label is Label.ROOT_CAUSE
        for m in t.metrics
        if m.outcome is Outcome.FAIL
    }
    return sorted(found, key=lambda f: (f.metric, f.explanation, f.kind, f.name))


def cluster(texts: list[str], vectors: Any, distance: float) -> list[int]:
    """Cluster label per text: average linkage on cosine distance, cut at ``distance``."""
    if len(texts) < 2:
        return [1] * len(texts)
    from scipy.cluster.hierarchy import fcluster, linkage

    tree = linkage(vectors, method="average", metric="cosine")
    return [int(x) for x in fcluster(tree, t=distance, criterion="distance")]


def shared_words(texts: list[str], limit: int = 3) -> list[str]:
    """Words (lower case) every text contains, most specific first: the pattern's words.

    >>> shared_words(["HTTP 429: rate limit exceeded", "rate limit exceeded for get_quote"])
    ['exceeded', 'limit', 'rate']
    """
    sets = [{w.lower() for w in _WORD.findall(t)} - EXPLANATION_STOP_WORDS for t in texts]
    common = set.intersection(*sets) if sets else set()
    return sorted(common, key=lambda w: (-len(w), w))[:limit]


def rule_for(group: list[Failure]) -> dict[str, Any]:
    """One ``[[taxonomy]]`` rule describing every failure of ``group``."""
    rule: dict[str, Any] = {}
    for field in ("metric", "kind", "name"):
        values = {getattr(f, field) for f in group}
        if len(values) == 1:
            rule[field] = values.pop()
    words = shared_words([f.explanation for f in group])
    label = " ".join(sorted(words, key=group[0].explanation.lower().find)) or "various"
    rule = {"category": f"{rule.get('metric', 'mixed')}: {label}", **rule}
    if words:
        rule["explanation"] = "(?is)" + "".join(rf"(?=.*\b{re.escape(w)}\b)" for w in words)
    return rule


def suggest(
    report: AuditReport, embed: Any, distance: float
) -> list[tuple[dict[str, Any], list[Failure]]]:
    """Rules and the failures behind each, largest group first."""
    items = failures(report)
    texts = [f"{f.metric}: {f.explanation}" for f in items]
    labels = cluster(texts, embed(texts) if texts else None, distance)
    groups: dict[int, list[Failure]] = {}
    for label, item in zip(labels, items, strict=True):
        groups.setdefault(label, []).append(item)
    ordered = sorted(groups.values(), key=lambda g: (-len(g), g[0].metric, g[0].explanation))
    return [(rule_for(group), group) for group in ordered]


def toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, except that TOML has no surrogate
    escapes (so non-ASCII stays as it is) and refuses a raw DEL."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def to_toml(suggestions: list[tuple[dict[str, Any], list[Failure]]]) -> str:
    """The rules file: one commented ``[[taxonomy]]`` table per group, in rank order."""
    lines = [
        "# A starting failure taxonomy suggested by `aem taxonomy suggest`: rename the",
        "# categories, merge or split rules, then use it with `aem audit --taxonomy FILE`.",
        "# Rules are tried top to bottom; the first whose conditions all hold decides.",
    ]
    counts = Counter[str]()
    for rule, group in suggestions:
        counts[rule["category"]] += 1
        if counts[rule["category"]] > 1:
            rule["category"] += f" ({counts[rule['category']]})"
        example = "".join(c if c.isprintable() else "?" for c in group[0].explanation[:150])
        lines += ["", f"# {len(group)} distinct failure(s), e.g.: {example}", "[[taxonomy]]"]
        lines += [f"{key} = {toml_string(value)}" for key, value in rule.items()]
    return "\n".join(lines) + "\n"


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
    config: ConfigOption = None,
) -> None:
    """Propose [[taxonomy]] rules by clustering the failed results' explanations."""
    from aem.compare.embedder import TextEmbedder
    from aem.diff import load_report

    try:
        report = load_report(report_json)
        settings = load_config(config)
    except (OSError, ValueError) as exc:
        fail(exc)
    embedder = TextEmbedder.from_settings(settings.compare)
    suggestions = suggest(report, embedder.encode, distance)
    text = to_toml(suggestions)
    if output is None:
        typer.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    Console(stderr=True).print(f"wrote {len(suggestions)} rule(s) to {output}")
