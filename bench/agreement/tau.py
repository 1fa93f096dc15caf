"""tau-bench airline: does AEM's verdict agree with the run's reward and first deviation.

The figures are ``bench.tau_agreement``'s (its scoring is reused): a session agrees when
it has a root cause exactly when its reward is 0; on failed runs with a first-deviation
span, the earliest root cause's first span must be that span. Baselines: every session
fails; a session fails when a tool call errored; the first deviation is the first
state-changing call (a tool of the case's ``match_tools``).

Proven and suspected side by side (``bench.tau_agreement`` says why): the share of
sessions with a suspect at all (beside a root cause or not); the share with suspects but
no root cause — over all runs, the failed ones and the passed ones (there a doubt about
a correct run); and *suspect hits deviation*: on the failed runs with a first-deviation
span and no root cause, the share whose first suspect's first span is that span, beside
the first state-changing call on the same sessions. Those are the runs the
first-deviation row cannot score, so the two rows never count a session twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.agreement import otlp
from bench.agreement.baselines import first_call_of, tool_errored
from bench.agreement.figures import Cell, Figure, figure, share
from bench.agreement.split import half
from bench.tau_agreement import TauScore, audit, references, score

SET = "tau-bench"
DIRECTORY = "tau-bench-airline-dev"
SESSIONS, DEVIATION = "session agreement", "first-deviation agreement"
ANY_SUSPECT, SUSPECT_ONLY = "sessions with a suspect", "sessions with suspects only"
SUSPECT_HIT = "suspect hits deviation (failed, no root cause)"
PASSED_RUNS = "AEM, passed runs"  # a suspect there is a doubt about a correct run: lower


@dataclass(frozen=True)
class TauRow:
    """AEM's score on one session and what the baselines read off its trace."""

    aem: TauScore
    failed_run: bool
    deviation_span: str | None
    tool_errored: bool
    first_write: str | None


def row(ref: dict[str, Any], aem: TauScore, spans: list[otlp.SpanView]) -> TauRow:
    deviation = ((ref.get("derived") or {}).get("first_deviation") or {}).get("span_id")
    return TauRow(
        aem=aem,
        failed_run=ref["outcome"]["reward"] == 0,
        deviation_span=deviation,
        tool_errored=tool_errored(spans),
        first_write=first_call_of(spans, ref.get("match_tools") or []),
    )


def figures(rows: list[tuple[str, TauRow]]) -> list[Figure]:
    """Session and first-deviation agreement, AEM beside the baselines."""
    spanned = [(h, r) for h, r in rows if r.aem.span_applies]
    return [
        figure(SET, SESSIONS, "AEM", rows, lambda rs: share([r.aem.session_agrees for r in rs])),
        figure(
            SET, SESSIONS, "every session fails", rows, lambda rs: share([r.failed_run for r in rs])
        ),
        figure(
            SET,
            SESSIONS,
            "fails when a tool errored",
            rows,
            lambda rs: share([r.tool_errored == r.failed_run for r in rs]),
        ),
        figure(SET, DEVIATION, "AEM", spanned, lambda rs: share([r.aem.span_hit for r in rs])),
        figure(
            SET,
            DEVIATION,
            "first state-changing call",
            spanned,
            lambda rs: share([r.first_write == r.deviation_span for r in rs]),
        ),
        *suspect_figures(rows),
    ]


def suspect_figures(rows: list[tuple[str, TauRow]]) -> list[Figure]:
    """Sessions with suspects only (all, failed, passed runs) and the first suspect's hits
    on the failed runs with no root cause, beside the first state-changing call."""
    failed = [(h, r) for h, r in rows if r.failed_run]
    passed = [(h, r) for h, r in rows if not r.failed_run]
    unproven = [(h, r) for h, r in rows if r.aem.suspect_applies]
    return [
        figure(SET, ANY_SUSPECT, "AEM", rows, lambda rs: share([r.aem.any_suspect for r in rs])),
        figure(SET, SUSPECT_ONLY, "AEM", rows, _suspect_only),
        figure(SET, SUSPECT_ONLY, "AEM, failed runs", failed, _suspect_only),
        figure(SET, SUSPECT_ONLY, PASSED_RUNS, passed, _suspect_only, "lower"),
        figure(SET, SUSPECT_HIT, "AEM first suspect", unproven, _suspect_hit),
        figure(
            SET,
            SUSPECT_HIT,
            "first state-changing call",
            unproven,
            lambda rs: share([r.first_write == r.deviation_span for r in rs]),
        ),
    ]


def _suspect_only(rows: Sequence[TauRow]) -> Cell:
    return share([r.aem.suspect_only for r in rows])


def _suspect_hit(rows: Sequence[TauRow]) -> Cell:
    return share([r.aem.suspect_hit for r in rows])


def measure(root: Path, workers: int) -> list[Figure]:
    data = root / DIRECTORY
    by_id = audit(data, [], workers)
    spans = dict(otlp.sessions(data / "traces.otlp.jsonl"))
    rows = []
    for ref in references(data):
        sid = ref["session_id"]
        rows.append((half(SET, sid), row(ref, score(ref, by_id[sid]), spans.get(sid, []))))
    return figures(rows)
