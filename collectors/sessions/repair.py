"""Make the spans of a session a forest: duplicates, orphans and parent cycles.

Agent contexts are found by walking parents, so the tree must be sound first; every
repair is an :class:`InputIssue`, so nothing changes silently.
"""

from __future__ import annotations

from aem.foundation.model import InputIssue, SpanRecord


def public_span_id(span_id: str) -> str:
    """The span's own id, without the trace suffix a shared id gets inside a session.

    >>> public_span_id("b7b47bb1c1138be7@a0bc578d53223230ac033a344fcc2d64")
    'b7b47bb1c1138be7'
    """
    return span_id.partition("@")[0]


def issue(kind: str, message: str, span: SpanRecord, session_id: str) -> InputIssue:
    """An input problem located at one span (file and line when it came from a file)."""
    return InputIssue.at_span(kind, message, span, session_id=session_id)


def repair_span_tree(
    spans: list[SpanRecord], session_id: str
) -> tuple[list[SpanRecord], list[InputIssue]]:
    """Drop duplicate spans, detach orphans and break parent cycles — reporting each.

    A span is identified by (trace id, span id): OTLP promises span ids unique only
    within a trace, and a replayed or re-ided trace repeats every span id of the
    original. Two traces of one session sharing an id are both kept (see
    :func:`_separate_shared_ids`); only a repeat inside one trace is a duplicate.
    """
    issues: list[InputIssue] = []
    unique = _drop_duplicates(spans, session_id, issues)
    _detach_orphans(unique, session_id, issues)
    _break_cycles(unique, session_id, issues)
    return list(unique.values()), issues


def _drop_duplicates(
    spans: list[SpanRecord], session_id: str, issues: list[InputIssue]
) -> dict[str, SpanRecord]:
    """Spans by session-unique id, the first copy of a (trace, span) pair kept (exporters
    retry; a retried batch repeats ids)."""
    kept: dict[tuple[str, str], SpanRecord] = {}
    for span in spans:
        if (span.trace_id, span.span_id) in kept:
            found = issue(
                "duplicate_span",
                f"span id {span.span_id} seen again in trace {span.trace_id}; "
                "the first copy was kept",
                span,
                session_id,
            )
            found.spans_skipped = 1
            issues.append(found)
            continue
        kept[span.trace_id, span.span_id] = span
    return _separate_shared_ids(list(kept.values()), session_id, issues)


def _separate_shared_ids(
    spans: list[SpanRecord], session_id: str, issues: list[InputIssue]
) -> dict[str, SpanRecord]:
    """Spans by id; a span whose id a span of an earlier trace already holds is renamed
    ``<span id>@<trace id>`` inside the session (and its children's parent links with it).

    Why rename rather than key every later stage by the pair: session building and the
    turn graph link spans by id. The report strips the suffix again
    (:func:`public_span_id`): each turn names its trace, which tells the two apart.
    """
    owner: dict[str, str] = {}
    for span in spans:
        owner.setdefault(span.span_id, span.trace_id)
    renamed: dict[tuple[str, str], str] = {
        (s.trace_id, s.span_id): f"{s.span_id}@{s.trace_id}"
        for s in spans
        if owner[s.span_id] != s.trace_id
    }
    noted: set[str] = set()
    unique: dict[str, SpanRecord] = {}
    for span in spans:
        parent = (span.trace_id, span.parent_span_id or "")
        if parent in renamed:
            span.parent_span_id = renamed[parent]
        new_id = renamed.get((span.trace_id, span.span_id))
        if new_id is not None:
            if span.trace_id not in noted:
                noted.add(span.trace_id)
                issues.append(
                    issue(
                        "shared_span_id",
                        f"trace {span.trace_id} reuses span ids of trace "
                        f"{owner[span.span_id]} (e.g. {span.span_id}); both traces are kept, "
                        "told apart by their trace ids",
                        span,
                        session_id,
                    )
                )
            span.span_id = new_id
        unique[span.span_id] = span
    return unique


def _detach_orphans(
    unique: dict[str, SpanRecord], session_id: str, issues: list[InputIssue]
) -> None:
    """A span whose parent never arrived is evaluated as a root."""
    for span in unique.values():
        if span.parent_span_id is not None and span.parent_span_id not in unique:
            issues.append(
                issue(
                    "orphan_span",
                    f"parent {span.parent_span_id} of span {span.span_id} never arrived; "
                    "the span was evaluated as a root",
                    span,
                    session_id,
                )
            )
            span.parent_span_id = None


def _break_cycles(unique: dict[str, SpanRecord], session_id: str, issues: list[InputIssue]) -> None:
    """Each parent cycle loses its earliest span's parent link (deterministic choice)."""
    state: dict[str, int] = {}  # 1 = on the current walk, 2 = known acyclic
    for start in unique.values():
        path: list[SpanRecord] = []
        node: SpanRecord | None = start
        while node is not None and state.get(node.span_id) is None:
            state[node.span_id] = 1
            path.append(node)
            node = unique.get(node.parent_span_id) if node.parent_span_id else None
        if node is not None and state.get(node.span_id) == 1:
            cycle = path[path.index(node) :]
            breaker = min(cycle, key=lambda s: (s.start_unix_nano, s.span_id))
            issues.append(
                issue(
                    "parent_cycle",
                    "parent cycle "
                    + " -> ".join(s.span_id for s in cycle)
                    + f"; span {breaker.span_id} was evaluated as a root",
                    breaker,
                    session_id,
                )
            )
            breaker.parent_span_id = None
        for visited in path:
            state[visited.span_id] = 2
