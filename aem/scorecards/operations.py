"""What the scorecard commands do, without the command line: open the store, recompute
the stored totals, and put an audit's totals into its report.

Why apart from :mod:`aem.cli.scorecards`: the command line parses options and picks exit
codes; what a command changes in the store, and what an audit report holds, is decided
here, where the scorecards are, so a caller other than the shell gets the same result.

Why :class:`ScoredAuditReport`: ``aem audit --scorecard`` prints its report with
``--json`` and writes it with ``--out``; the totals are a field of that one report, so the
two cannot disagree. An audit without ``--scorecard`` stays a plain
:class:`~aem.foundation.model.AuditReport`, with no ``scorecards`` key at all.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import Field

from aem.foundation.model import AuditReport
from aem.scorecards.post_hoc import ScoredConversation, SessionScorer
from aem.scorecards.scorecard import Scorecard, load_scorecard
from aem.scorecards.versions import ScorecardStore
from aem.store import Store, default_store_path


class ScoredAuditReport(AuditReport):
    """An audit report with the totals ``--scorecard`` computed, one per conversation."""

    scorecards: list[ScoredConversation] = Field(default_factory=list)


def strict_json(data: object) -> str:
    """Indented JSON that refuses ``NaN`` and ``Infinity`` (ValueError) instead of writing
    them: they are not JSON, and a reader that accepts them would show a total nobody can
    have earned. Validation keeps every number finite; should one still slip through,
    writing fails loudly instead."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


def open_scorecard_store(path: Path | None) -> ScorecardStore:
    """The scorecard tables of the store at ``path`` (or the default); :class:`StoreError`
    when it cannot be opened."""
    return ScorecardStore(Store(path or default_store_path()))


def recompute(card: Scorecard, scorecards: ScorecardStore) -> list[ScoredConversation]:
    """Every stored conversation of the card's pipeline totalled again from its stored step
    results: a total that changed (the config changed) becomes a new version, old ones kept."""
    from aem.scorecards.totals import compute_total

    scored = []
    for state in scorecards.conversations(card.pipeline):
        results = scorecards.results(card.pipeline, state.conversation)
        total = compute_total(card, state.conversation, results)
        created = scorecards.record(total, results)
        latest = created or state.latest
        scored.append(
            ScoredConversation(
                total=total,
                version=latest.version if latest and total.state != "pending" else None,
                new_version=created is not None,
            )
        )
    return scored


def audit_scorer(config: Path, store: Path | None) -> SessionScorer:
    """The ``aem audit --scorecard`` hook: a validated scorecard over the store.

    Raises :class:`ScorecardError` when the config is refused, :class:`StoreError` when
    the store cannot be opened.
    """
    return SessionScorer(load_scorecard(config, None), open_scorecard_store(store))


def scored_report(report: AuditReport, scorer: SessionScorer) -> ScoredAuditReport:
    """The audit report with the scorer's totals as its ``scorecards`` field, and the
    scorecard's input issues (bad step spans, unknown steps) in it: each with its session
    when the report has it, counted in ``skipped.by_kind``."""
    sessions = {s.session_id: s for s in report.sessions}
    for issue in scorer.issues:
        held = sessions.get(issue.session_id or "")
        (held.issues if held is not None else report.issues).append(issue)
        by_kind = report.skipped.by_kind
        by_kind[issue.kind] = by_kind.get(issue.kind, 0) + 1
    return ScoredAuditReport(**dict(report), scorecards=list(scorer.scored))


__all__ = [
    "ScoredAuditReport",
    "audit_scorer",
    "open_scorecard_store",
    "recompute",
    "scored_report",
    "strict_json",
]
