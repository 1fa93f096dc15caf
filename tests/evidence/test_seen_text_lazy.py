"""The lazily indexed evidence of a turn answers ``text`` with everything the turn saw,
gathered on first need — not the empty default of the full evidence's field."""

from __future__ import annotations

from aem.config import AemConfig
from aem.graph import session_graph
from aem.metrics.context import MetricContext
from aem.services import services_from
from aem.testing import make_session, make_tool_call, make_turn


def test_the_indexed_evidence_gives_the_whole_seen_text() -> None:
    lookup = make_tool_call(
        "get_policy", {"id": "P-1"}, result={"bags": "2 free bags per passenger"}
    )
    session = make_session(lookup, make_turn("answer", text="You get 4 free bags."))
    context = MetricContext(
        session=session,
        case=None,
        services=services_from(AemConfig()),
        graph=session_graph(session),
    )
    values = context.seen(session.turns[-1]).values
    assert "2 free bags per passenger" in values.text
