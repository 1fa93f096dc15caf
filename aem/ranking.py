"""Root causes across sessions: a stable signature, a team-defined category, a ranking.

The signature is built only from what stays the same between runs — the failed metric,
the turn kind, the tool or step name, and the category — so "40 of 100 sessions" means
the same failure forty times, and two runs can be diffed signature by signature.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from aem.foundation.model import (
    AuditReport,
    CategoryShare,
    RankedRootCause,
    SessionReport,
    Turn,
    TurnKind,
)
from aem.foundation.strict import ConfigError, config_error
from aem.matching.effects import Effect, effect_by_name
from aem.settings import TaxonomyRule, read_toml


def categorize(
    metric: str,
    kind: str,
    name: str,
    rules: Sequence[TaxonomyRule],
    *,
    explanation: str | None = None,
) -> str | None:
    """The first taxonomy rule that matches decides the category (deterministic: rules
    are tried in file order and read nothing but these arguments, so the same failure
    lands in the same category in every run, whatever order the sessions came in).

    A rule with an ``explanation`` pattern matches only when the failed metric's
    explanation is given and the pattern is found in it (``re.search``).

    >>> rules = [
    ...     TaxonomyRule(category="quota", explanation="(?i)rate.?limit"),
    ...     TaxonomyRule(category="x", metric="tool_choice"),
    ... ]
    >>> categorize("tool_choice", "tool_call", "book", rules)
    'x'
    >>> categorize("tool_execution", "tool_call", "book", rules, explanation="Rate limit hit")
    'quota'
    """
    for rule in rules:
        if (
            (rule.metric is None or rule.metric == metric)
            and (rule.kind is None or rule.kind == kind)
            and (rule.name is None or rule.name == name)
            and (rule.explanation is None or _found(rule.explanation, explanation))
        ):
            return rule.category
    return None


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _found(pattern: str, explanation: str | None) -> bool:
    return explanation is not None and _compiled(pattern).search(explanation) is not None


def load_taxonomy(path: Path) -> list[TaxonomyRule]:
    """The ``[[taxonomy]]`` rules of a TOML file (``aem audit --taxonomy``, the file
    ``aem taxonomy suggest`` writes); any other table in it is an error, so a rules file
    cannot silently carry settings."""
    data = read_toml(path)
    extra = sorted(set(data) - {"taxonomy"})
    if extra:
        raise ConfigError(f"{path}: {extra[0]}: a taxonomy file holds only [[taxonomy]] rules")
    return _rules(data.get("taxonomy", []), path)


def _rules(raw: object, path: Path) -> list[TaxonomyRule]:
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: taxonomy: expected [[taxonomy]] tables")
    rules = []
    for number, item in enumerate(raw):
        try:
            rules.append(TaxonomyRule.model_validate(item))
        except ValidationError as exc:
            where = ("taxonomy", number)
            raise ConfigError(f"{path}: {config_error(exc, where, TaxonomyRule)}") from exc
    return rules


def rank_categories(
    sessions: Iterable[SessionReport], ranking: Sequence[RankedRootCause] = ()
) -> list[CategoryShare]:
    """The ranking grouped by category, largest share first — what "60 % of failures
    fall in one category" is read from.

    Each root-cause turn counts once (the ranking lists a turn once per failed metric), so
    the shares add up to 1; ties go in category order, "no category" last. ``ranking``
    (as :func:`rank_root_causes` made it) gives each category its signatures, in rank order.
    """
    counts: dict[str | None, int] = defaultdict(int)
    hit: dict[str | None, set[str]] = defaultdict(set)
    for report in sessions:
        for cause in report.root_causes:
            counts[cause.category] += 1
            hit[cause.category].add(report.session_id)
    total = sum(counts.values()) or 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0] is None, kv[0] or ""))
    return [
        CategoryShare(
            category=category,
            root_causes=n,
            sessions=len(hit[category]),
            share=round(n / total, 4),
            signatures=[r.signature for r in ranking if r.category == category],
        )
        for category, n in ordered
    ]


def report_categories(report: AuditReport) -> list[CategoryShare]:
    """The report's categories; computed from its sessions for a report written before
    the JSON report carried them (``aem report old.json``)."""
    if report.categories or not report.sessions_with_root_cause:
        return report.categories
    return rank_categories(report.sessions, report.ranking)


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


def suspect_rank(turn: Turn) -> int | None:
    """Where an unverified turn ranks among a session's suspects, or None when it is no
    suspect but a doubt on its step: 0 — a call whose tool may change state (its name
    says it writes, or says neither), 1 — an answer (the user was told it). A reasoning
    step or a read's argument reached no user unless a later turn repeats it.

    >>> from aem.testing import make_tool_call, make_turn
    >>> suspect_rank(make_tool_call("book_room", {"room": "12"}))
    0
    >>> suspect_rank(make_tool_call("get_room", {"room": "12"})) is None
    True
    >>> suspect_rank(make_turn("answer", text="Room 12.")), suspect_rank(make_turn("reasoning"))
    (1, None)
    """
    if turn.kind is TurnKind.ANSWER:
        return 1
    call = turn.tool_call
    if turn.kind is TurnKind.TOOL_CALL and call is not None:
        # A tool whose name says neither (a terminal, a code runner) may write: judged as
        # one that does, as aem.matching.effects judges it — a doubt hidden costs more here.
        return None if effect_by_name(call.name).effect is Effect.READ else 0
    return None
