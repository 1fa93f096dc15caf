"""Root causes across sessions: a stable signature, a team-defined category, a ranking.

The signature is built only from what stays the same between runs — the failed metric,
the turn kind, the tool or step name, and the category — so "40 of 100 sessions" means
the same failure forty times, and two runs can be diffed signature by signature.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from aem.config import TaxonomyRule
from aem.model import RankedRootCause, SessionReport


def categorize(metric: str, kind: str, name: str, rules: Sequence[TaxonomyRule]) -> str | None:
    """The first taxonomy rule that matches decides the category (deterministic).

    >>> rules = [TaxonomyRule(category="x", metric="tool_choice")]
    >>> categorize("tool_choice", "tool_call", "book", rules)
    'x'
    """
    for rule in rules:
        if (
            (rule.metric is None or rule.metric == metric)
            and (rule.kind is None or rule.kind == kind)
            and (rule.name is None or rule.name == name)
        ):
            return rule.category
    return None


def signature(metric: str, kind: str, name: str, category: str | None) -> str:
    """The grouping key of a root cause across sessions and runs.

    >>> signature("tool_execution", "tool_call", "get_hotels", None)
    'tool_execution|tool_call|get_hotels|-'
    """
    return f"{metric}|{kind}|{name}|{category or '-'}"


def rank_root_causes(
    sessions: Iterable[SessionReport], *, examples: int = 3
) -> list[RankedRootCause]:
    """Group root causes by signature; rank by the number of sessions they hit."""
    reports = list(sessions)
    hits: dict[str, set[str]] = defaultdict(set)
    parts: dict[str, tuple[str, str, str, str | None]] = {}
    samples: dict[str, list[dict[str, str]]] = defaultdict(list)
    for report in reports:
        for cause in report.root_causes:
            for metric in cause.metrics:
                sig = signature(metric, cause.kind.value, cause.name, cause.category)
                parts[sig] = (metric, cause.kind.value, cause.name, cause.category)
                if report.session_id not in hits[sig] and len(samples[sig]) < examples:
                    samples[sig].append(
                        {
                            "session_id": report.session_id,
                            "turn_id": cause.turn_id,
                            "span_id": cause.span_ids[0] if cause.span_ids else "",
                        }
                    )
                hits[sig].add(report.session_id)
    total = max(len(reports), 1)
    ranked = [
        RankedRootCause(
            signature=sig,
            metric=parts[sig][0],
            kind=parts[sig][1],
            name=parts[sig][2],
            category=parts[sig][3],
            sessions=len(ids),
            share=round(len(ids) / total, 4),
            examples=samples[sig],
        )
        for sig, ids in hits.items()
    ]
    ranked.sort(key=lambda r: (-r.sessions, r.signature))
    return ranked
