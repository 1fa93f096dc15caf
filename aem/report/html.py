"""The HTML report: one self-contained file a person opens in a browser, no server.

Why one file with everything inlined: a report is mailed, attached to a CI run or opened
from disk, where a page that fetches its styles or scripts would break (and the page's
Content-Security-Policy forbids any fetch anyway).

Why it is safe with hostile traces: every string in a report may come from a trace
(span names, tool arguments and results quoted in explanations, session ids), so

* the summary parts are rendered by Jinja2 with autoescape on, and nothing from the
  report is marked safe;
* the sessions travel as JSON inside ``<script type="application/json">`` with ``<``,
  ``>``, ``&`` and U+2028/U+2029 escaped (:func:`script_json`), so no string can close the
  element or start markup; the page's script reads it with ``JSON.parse`` and builds
  the DOM with ``textContent`` only;
* the Content-Security-Policy allows only the page's own inline script and style, by
  their SHA-256 hashes: an injected ``<script>`` or event handler would not run even if
  escaping failed somewhere (the browser tests check both layers separately).

Why suspects have their own ranking and colour: a ``suspect`` turn (a value the trace
neither supports nor contradicts, nothing failed upstream) is where to look when nothing
is proven; among the root causes, or in their red, it would read as a failure.

Why the browser renders sessions and Python renders the summary: a report of 10,000
sessions would be tens of megabytes of HTML if every turn table were pre-rendered; as
JSON it is parsed once, filtered in memory and drawn a page (or one session) at a time.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from aem.foundation.model import AuditReport, Outcome, RootCause, SessionReport, TurnVerdict
from aem.ranking import report_categories, signature
from aem.runs.divergence import RunDivergence

# Bytes that could end the <script> element, open a comment or CDATA, or (U+2028/9) end a
# line in older JavaScript parsers: each is replaced by its JSON \u escape, same value.
_SCRIPT_UNSAFE = {
    b"<": b"\\u003c",
    b">": b"\\u003e",
    b"&": b"\\u0026",
    "\u2028".encode(): b"\\u2028",
    "\u2029".encode(): b"\\u2029",
}
# The bar's order: verdicts first, then what decided nothing (unverified beside fail: both
# are what a reviewer reads).
_OUTCOMES = ("pass", "fail", "unverified", "skip", "error")
# Bars shown before "show all": the top of a long ranking is what a reader acts on.
RANKING_SHOWN = 25


def script_json(data: Any) -> Markup:
    """JSON that is inert inside a ``<script>`` element: no markup, same value when parsed.

    >>> str(script_json({"a": "</script><b>&\u2028"}))
    '{"a":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026\\\\u2028"}'
    """
    try:
        raw = orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # an integer beyond 64 bits: the standard library has no limit
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    for unsafe, escaped in _SCRIPT_UNSAFE.items():
        raw = raw.replace(unsafe, escaped)
    # Markup because it is already safe: autoescape would turn its quotes into &#34;,
    # which a <script> element does not decode.
    return Markup(raw.decode("utf-8"))


def is_unchecked(turn: TurnVerdict) -> bool:
    """A turn no metric judged: every metric skipped (or none ran).

    Shown as "not checked" so a quiet turn is not mistaken for a good one.
    """
    return all(m.outcome is Outcome.SKIP for m in turn.metrics)


@dataclass
class MetricRow:
    """One metric's outcomes over every turn of the report, and the bar segments."""

    name: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def segments(self) -> list[tuple[str, float, float]]:
        """(outcome, x %, width %) for a stacked bar; empty outcomes are left out."""
        total, x, out = max(self.total, 1), 0.0, []
        for outcome in _OUTCOMES:
            width = 100.0 * self.counts.get(outcome, 0) / total
            if width:
                out.append((outcome, round(x, 3), round(width, 3)))
            x += width
        return out


def metric_rows(report: AuditReport) -> list[MetricRow]:
    """Per metric: pass / fail / unverified / skip / error counts over every turn, metrics
    by name."""
    counts: Counter[tuple[str, str]] = Counter(
        (result.name, str(result.outcome))
        for session in report.sessions
        for turn in session.turns
        for result in turn.metrics
    )
    rows: dict[str, MetricRow] = {}
    for (name, outcome), count in counts.items():
        rows.setdefault(name, MetricRow(name)).counts[outcome] = count
    return [rows[name] for name in sorted(rows)]


def unchecked_turns(report: AuditReport) -> tuple[int, int]:
    """(turns no metric judged, all turns): the share of the run nobody looked at."""
    turns = [t for s in report.sessions for t in s.turns]
    return sum(1 for t in turns if is_unchecked(t)), len(turns)


def _signatures(session: SessionReport, *, suspects: bool = False) -> set[str]:
    """The ranking signatures a session's root causes (or, with ``suspects``, its
    suspects) count towards (as aem.ranking)."""
    return {
        signature(metric, cause.kind.value, cause.name, cause.category)
        for cause in (session.suspects if suspects else session.root_causes)
        for metric in cause.metrics
    }


def _notes(session: SessionReport) -> str:
    notes = [] if session.case_found else ["no case"]
    if session.cut:
        notes.append("cut at max lifetime")
    if session.session_key_fallback:
        notes.append("grouped by trace id")
    if session.issues:
        notes.append(f"{len(session.issues)} input problems")
    return "; ".join(notes)


def _session_index(
    session: SessionReport, ranking: list[int], suspect_ranking: list[int] | None = None
) -> dict[str, Any]:
    """What the session list shows and filters on, without the turns' metrics.

    The page parses this for every session at load; the full sessions are parsed one at
    a time when opened (see :func:`_details_blob`), which is what keeps 10,000 fast.
    ``suspects`` (its suspect turns) and ``suspect_ranking`` (the rows of the suspects'
    ranking it counts towards) sit beside ``labels``, whose four counts keep their places.
    """
    labels: Counter[str] = Counter()
    failed: set[str] = set()
    for turn in session.turns:
        labels["not_checked" if is_unchecked(turn) else str(turn.label)] += 1
        failed.update(m.name for m in turn.metrics if m.outcome is Outcome.FAIL)
    return {
        "id": session.session_id,
        "turns": len(session.turns),
        "labels": [labels[k] for k in ("root_cause", "prior_action_failed", "ok", "not_checked")],
        "failed": sorted(failed),
        "categories": sorted({c.category or "" for c in session.root_causes}),
        "ranking": ranking,
        "causes": _causes(session.root_causes),
        "suspects": _causes(session.suspects),
        "suspect_ranking": suspect_ranking or [],
        "notes": _notes(session),
        "traces": " ".join(session.trace_ids),
    }


def _causes(causes: Iterable[RootCause]) -> list[list[str]]:
    """Root causes (or suspects) as the session list prints them: turn, metrics, where."""
    return [
        [c.turn_id, ", ".join(c.metrics), str(c.kind), c.name, c.category or ""] for c in causes
    ]


def _ranking_ids(
    sessions: Iterable[SessionReport], ids: dict[str, int], *, suspects: bool = False
) -> list[int]:
    found = set().union(*(_signatures(s, suspects=suspects) for s in sessions))
    return sorted(ids[sig] for sig in found if sig in ids)


def _details_blob(lines: Iterable[str]) -> str:
    """Every session's full JSON, one per line, gzip then base64.

    Why: the JSON of 10,000 sessions is ~90 MB, and Chromium takes seconds only to read
    and parse that much; compressed (repetitive keys and explanations shrink 10-25x) it
    loads in a fraction of that, and the browser's own DecompressionStream unpacks it.
    Base64 is also inert inside a ``<script>`` element whatever the traces held.
    """
    packed = gzip.compress("\n".join(lines).encode("utf-8"), compresslevel=6, mtime=0)
    return base64.b64encode(packed).decode("ascii")


@dataclass
class RankRow:
    """One bar of the ranking chart (in compare mode: before and after, with a status)."""

    index: int
    signature: str
    metric: str
    kind: str
    name: str
    category: str
    sessions: int
    share: float
    examples: list[dict[str, str]]
    before: int = 0
    before_share: float = 0.0
    status: str = ""


def _rank_rows(report: AuditReport, *, suspects: bool = False) -> list[RankRow]:
    """The bars of the root-cause ranking, or with ``suspects`` of the suspects'."""
    return [
        RankRow(
            index=i,
            signature=r.signature,
            metric=r.metric,
            kind=r.kind,
            name=r.name,
            category=r.category or "",
            sessions=r.sessions,
            share=r.share,
            examples=r.examples,
        )
        for i, r in enumerate(report.suspects if suspects else report.ranking)
    ]


@cache
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("aem.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@cache
def _asset(name: str) -> str:
    return (resources.files("aem.report") / "static" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def content_security_policy(script: str, style: str) -> str:
    """Nothing may load or run but this page's own script and style (by hash).

    ``img-src data:`` is what a screenshot or an icon embedded later would need; no
    connection, frame, form, base or plug-in is allowed.
    """
    return (
        f"default-src 'none'; script-src '{_sha256(script)}'; style-src '{_sha256(style)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def _render(context: dict[str, Any], data: dict[str, Any], details: list[str]) -> str:
    script, style = _asset("report.js"), _asset("report.css")
    # The hashes cover the exact text between the tags, so the assets go in verbatim.
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            csp=content_security_policy(script, style),
            script=Markup(script),
            style=Markup(style),
            data=script_json(data),
            details=_details_blob(details),
            generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            ranking_shown=RANKING_SHOWN,
            **context,
        )
    )


def _summary_context(report: AuditReport) -> dict[str, Any]:
    """What the page's summary shows of one run (the later one, when comparing)."""
    unchecked, turns = unchecked_turns(report)
    return {
        "suspects": _rank_rows(report, suspects=True),
        "report": report,
        "metrics": metric_rows(report),
        "unchecked": unchecked,
        "turns": turns,
        "categories": report_categories(report),
        "labels": _label_counts(report.sessions),
    }


def _label_counts(sessions: Iterable[SessionReport]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for session in sessions:
        for turn in session.turns:
            counts["not_checked" if is_unchecked(turn) else str(turn.label)] += 1
    return dict(counts)


def _dump(session: SessionReport) -> str:
    return session.model_dump_json(exclude_defaults=True)


def render_report(report: AuditReport, *, title: str = "AEM report") -> str:
    """The HTML page of one run."""
    rows = _rank_rows(report)
    ids = {row.signature: row.index for row in rows}
    suspect_ids = _suspect_ids(report)
    data = {
        "mode": "report",
        "ranking": [_row_data(row) for row in rows],
        "suspects": [_row_data(row) for row in _rank_rows(report, suspects=True)],
        "sessions": [
            _session_index(s, _ranking_ids([s], ids), _ranking_ids([s], suspect_ids, suspects=True))
            for s in report.sessions
        ],
    }
    details = ['{"session":' + _dump(s) + "}" for s in report.sessions]
    context = _summary_context(report) | {"title": title, "mode": "report", "ranking": rows}
    context["rank_of"] = ids
    return _render(context, data, details)


def _suspect_ids(report: AuditReport) -> dict[str, int]:
    """Signature → row of the suspects' ranking (its own numbering, not the root causes')."""
    return {r.signature: i for i, r in enumerate(report.suspects)}


def _row_data(row: RankRow) -> dict[str, Any]:
    return {
        "signature": row.signature,
        "metric": row.metric,
        "kind": row.kind,
        "name": row.name,
        "category": row.category,
        "status": row.status,
        "examples": row.examples,
    }


_STATUS_ORDER = {"new": 0, "still failing": 1, "gone": 2}


def _compare_rows(before: AuditReport, after: AuditReport) -> list[RankRow]:
    """Every signature of either run: gone (only before), new (only after), still failing."""
    old = {r.signature: r for r in before.ranking}
    new = {r.signature: r for r in after.ranking}
    rows = []
    for sig in old.keys() | new.keys():
        now, then = new.get(sig), old.get(sig)
        ref = now or then
        assert ref is not None
        rows.append(
            RankRow(
                index=0,
                signature=sig,
                metric=ref.metric,
                kind=ref.kind,
                name=ref.name,
                category=ref.category or "",
                sessions=now.sessions if now else 0,
                share=now.share if now else 0.0,
                examples=ref.examples,
                before=then.sessions if then else 0,
                before_share=then.share if then else 0.0,
                status="gone" if now is None else "new" if then is None else "still failing",
            )
        )
    rows.sort(key=lambda r: (_STATUS_ORDER[r.status], -r.sessions, -r.before, r.signature))
    for index, row in enumerate(rows):
        row.index = index
    return rows


def session_status(before: SessionReport | None, after: SessionReport | None) -> str:
    """How a session moved between two runs (as ``aem diff`` counts fixed and broken).

    >>> session_status(None, SessionReport(session_id="s"))
    'passing'
    """
    failed_before = bool(before and before.root_causes)
    failed_after = bool(after and after.root_causes)
    if after is None:
        return "gone"
    if failed_before and failed_after:
        return "still failing"
    if failed_after:
        return "new failing"
    return "fixed" if failed_before else "passing"


def _compare_sessions(
    before: AuditReport, after: AuditReport, ids: dict[str, int]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Index and details of the later run's sessions and of those only the earlier run
    had; a signature of either version counts for the root-cause filter (the suspects'
    ranking is the later run's, and so is the filter on it)."""
    old = {s.session_id: s for s in before.sessions}
    new = {s.session_id: s for s in after.sessions}
    suspect_ids = _suspect_ids(after)
    index, details = [], []
    for sid in sorted(old.keys() | new.keys()):
        then, now = old.get(sid), new.get(sid)
        versions = [v for v in (then, now) if v is not None]
        suspects = _ranking_ids([now], suspect_ids, suspects=True) if now else []
        entry = _session_index(versions[-1], _ranking_ids(versions, ids), suspects)
        entry["status"] = session_status(then, now)
        index.append(entry)
        earlier = ',"before":' + _dump(then) if then is not None and now is not None else ""
        details.append('{"session":' + _dump(versions[-1]) + earlier + "}")
    return index, details


def render_compare(
    before: AuditReport,
    after: AuditReport,
    *,
    title: str = "AEM report: compare",
    divergence: RunDivergence | None = None,
) -> str:
    """The same page in compare mode: root causes gone / new / still failing, and, from
    ``aem diverge``, where each session of the later run first went another way."""
    rows = _compare_rows(before, after)
    ids = {row.signature: row.index for row in rows}
    index, details = _compare_sessions(before, after, ids)
    data = {
        "mode": "compare",
        "ranking": [_row_data(row) for row in rows],
        "suspects": [_row_data(row) for row in _rank_rows(after, suspects=True)],
        "sessions": index,
    }
    context = _summary_context(after) | {
        "title": title,
        "mode": "compare",
        "ranking": rows,
        "before": before,
        "statuses": dict(Counter(s["status"] for s in index)),
        "row_statuses": dict(Counter(r.status for r in rows)),
        "rank_of": ids,
        "divergence": divergence,
    }
    return _render(context, data, details)


def write_html(text: str, path: Path) -> None:
    """Write a rendered page (UTF-8: the page declares it)."""
    Path(path).write_text(text, encoding="utf-8")
