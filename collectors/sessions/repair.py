"""Make the spans of a session a forest: duplicates, orphans and parent cycles.

Agent contexts are found by walking parents, so the tree must be sound first; every
repair is an :class:`InputIssue`, so nothing changes silently.
"""

from __future__ import annotations

from aem.model import InputIssue, SpanRecord


def issue(kind: str, message: str, span: SpanRecord, session_id: str) -> InputIssue:
    """An input problem located at one span (file and line when it came from a file)."""
    return InputIssue(
        kind=kind,
        message=message,
        source=span.origin.source if span.origin else None,
        line=span.origin.line if span.origin else None,
        session_id=session_id,
        span_id=span.span_id,
        trace_id=span.trace_id,
    )


def repair_span_tree(
    spans: list[SpanRecord], session_id: str
) -> tuple[list[SpanRecord], list[InputIssue]]:
    """Drop duplicate span ids, detach orphans and break parent cycles — reporting each."""
    issues: list[InputIssue] = []
    unique = _drop_duplicates(spans, session_id, issues)
    _detach_orphans(unique, session_id, issues)
    _break_cycles(unique, session_id, issues)
    return list(unique.values()), issues


def _drop_duplicates(
    spans: list[SpanRecord], session_id: str, issues: list[InputIssue]
) -> dict[str, SpanRecord]:
    """Spans by id, the first copy kept (exporters retry; a retried batch repeats ids)."""
    unique: dict[str, SpanRecord] = {}
    for span in spans:
        if span.span_id in unique:
            found = issue(
                "duplicate_span",
                f"span id {span.span_id} seen again; the first copy was kept",
                span,
                session_id,
            )
            found.spans_skipped = 1
            issues.append(found)
            continue
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
