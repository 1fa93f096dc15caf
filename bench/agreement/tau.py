"""tau-bench airline: does AEM's verdict agree with the run's reward and first deviation.

The figures are ``bench.tau_agreement``'s (its scoring is reused): a session agrees when
it has a root cause exactly when its reward is 0; on failed runs with a first-deviation
span, the earliest root cause's first span must be that span. Baselines: every session
fails; a session fails when a tool call errored; the first deviation is the first
state-changing call (a tool of the case's ``match_tools``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.agreement import otlp
from bench.agreement.baselines import first_call_of, tool_errored
from bench.agreement.figures import Figure, figure, share
from bench.agreement.split import half
from bench.tau_agreement import TauScore, audit, references, score

SET = "tau-bench"
DIRECTORY = "tau-bench-airline-dev"
SESSIONS, DEVIATION = "session agreement", "first-deviation agreement"


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
    ]


def measure(root: Path, workers: int) -> list[Figure]:
    data = root / DIRECTORY
    by_id = audit(data, [], workers)
    spans = dict(otlp.sessions(data / "traces.otlp.jsonl"))
    rows = []
    for ref in references(data):
        sid = ref["session_id"]
        rows.append((half(SET, sid), row(ref, score(ref, by_id[sid]), spans.get(sid, []))))
    return figures(rows)
