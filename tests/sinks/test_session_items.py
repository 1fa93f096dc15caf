"""Session items: one verdict per session and per trace, for the lists backends show.

The roll-up (a proven failure before an inherited one, before a doubt, before ``ok``), a
sink written before session items existed never meeting one, and the Phoenix sink on a
server without ``/v1/session_annotations`` (trace annotations only, said once) or one
that does not know a session (an error naming it, retried by the caller).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from aem.foundation.model import Label, MetricResult, Outcome, SessionReport, TurnKind, TurnVerdict
from aem.sinks.base import DeliveryError, deliver_to
from aem.sinks.phoenix import PhoenixSink
from aem.sinks.records import OutboxItem, verdict_items

TRACE_A, TRACE_B = "a" * 32, "b" * 32


def _turn(turn_id: str, trace: str, label: Label, outcome: Outcome | None = None, **kw: Any):
    why = f"{turn_id} why"
    metrics = [] if outcome is None else [
        MetricResult(name="tool_choice", turn_id=turn_id, outcome=outcome, explanation=why)
    ]  # fmt: skip
    return TurnVerdict(turn_id=turn_id, span_ids=[turn_id.ljust(16, "0")], trace_id=trace,
                       kind=TurnKind.TOOL_CALL, name=f"call-{turn_id}", label=label,
                       metrics=metrics, **kw)  # fmt: skip


def _report(*turns: TurnVerdict, key: str = "session.id") -> SessionReport:
    return SessionReport(session_id="conv-1", session_key=key, turns=list(turns))


def _session(report: SessionReport) -> dict[str, Any]:
    [item] = [i for i in verdict_items(report, completed_at=0.0) if i.kind == "session"]
    return item.payload


def test_a_root_cause_names_its_turn_metric_and_what_inherited_it() -> None:
    report = _report(
        _turn("t1", TRACE_A, Label.OK, Outcome.PASS),
        _turn("t2", TRACE_A, Label.SUSPECT, Outcome.UNVERIFIED),
        _turn("t3", TRACE_B, Label.ROOT_CAUSE, Outcome.FAIL),
        _turn("t4", TRACE_B, Label.PRIOR_ACTION_FAILED, inherited_from=["t3"]),
    )
    session = _session(report)
    assert session["label"] == "root_cause"  # a suspect earlier is not a proof
    assert session["root_cause"]["turn_id"] == "t3"
    assert session["root_cause"]["metrics"] == ["tool_choice"]
    assert session["explanation"] == (
        "root cause: turn t3 (call-t3) — tool_choice: t3 why; 1 later turn inherited it"
    )
    assert [(t["trace_id"], t["label"]) for t in session["traces"]] == [
        (TRACE_A, "suspect"),
        (TRACE_B, "root_cause"),
    ]
    # A trace shown alone says where the session's root cause is when it is elsewhere.
    first, second = (t["explanation"] for t in session["traces"])
    assert first.endswith(f"; session: {session['explanation']} (trace {TRACE_B})")
    assert first.startswith("nothing proven; 1 suspect turn, first turn t2")
    assert "; session:" not in second


def test_without_a_failure_the_session_is_suspect_or_ok_and_says_why() -> None:
    doubt = _session(_report(_turn("t1", TRACE_A, Label.SUSPECT, Outcome.UNVERIFIED)))
    assert doubt["label"] == "suspect" and doubt["root_cause"] is None
    assert doubt["explanation"].startswith("nothing proven; 1 suspect turn, first turn t1")
    fine = _session(
        _report(_turn("t1", TRACE_A, Label.OK, Outcome.PASS), _turn("t2", TRACE_A, Label.OK))
    )
    assert (fine["label"], fine["explanation"]) == ("ok", "no failure in 2 turns (1 not checked)")


def test_a_turn_with_no_trace_gives_no_session_item() -> None:
    lone = TurnVerdict(turn_id="t1", span_ids=[], kind=TurnKind.ANSWER, name="a", label=Label.OK)
    assert [i.kind for i in verdict_items(_report(lone), completed_at=0.0)] == []


class _OldSink:
    """A team's sink written before session items: reads a span id from every item."""

    name = "old"

    def __init__(self) -> None:
        self.seen: list[OutboxItem] = []

    def deliver(self, items: list[OutboxItem]) -> list[str]:
        self.seen += items
        return [i.key for i in items if i.payload["span_id"]]

    def close(self) -> None:
        pass


def test_a_sink_that_names_no_kinds_never_meets_a_session_item() -> None:
    items = verdict_items(
        _report(_turn("t1", TRACE_A, Label.ROOT_CAUSE, Outcome.FAIL)), completed_at=0.0
    )
    sink = _OldSink()
    accepted = deliver_to(sink, items)
    assert {i.kind for i in sink.seen} == {"metric", "turn"}
    assert sorted(accepted) == sorted(i.key for i in items)  # the session item is not pending


class _Phoenix(ThreadingHTTPServer):
    """Answers span and trace annotations; session annotations as ``session_route`` says."""

    daemon_threads = True

    def __init__(self, session_route: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.session_route = session_route
        self.paths: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    server: _Phoenix

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        size = int(self.headers["Content-Length"])
        body = json.loads(self.rfile.read(size))
        self.server.paths.append(self.path)
        status, answer = 200, {"data": [{"id": "1"}] * len(body["data"])}
        if self.path.startswith("/v1/session_annotations"):
            if self.server.session_route == "absent":
                status, answer = 404, {"detail": "Not Found"}
            elif self.server.session_route == "unknown session":
                status, answer = 404, {"detail": "Sessions with IDs conv-1 do not exist."}
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def phoenix(request: pytest.FixtureRequest) -> Iterator[_Phoenix]:
    server = _Phoenix(request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _items() -> list[OutboxItem]:
    turn = _turn("t1", TRACE_A, Label.ROOT_CAUSE, Outcome.FAIL)
    return verdict_items(_report(turn), completed_at=0.0)


@pytest.mark.parametrize("phoenix", ["absent"], indirect=True)
def test_a_phoenix_without_session_annotations_gets_trace_annotations_only(
    phoenix: _Phoenix, caplog: pytest.LogCaptureFixture
) -> None:
    sink = PhoenixSink(f"http://127.0.0.1:{phoenix.server_address[1]}")
    try:
        items = _items()
        assert sink.deliver(items) == [i.key for i in items]
        assert sink.deliver(items) == [i.key for i in items]
    finally:
        sink.close()
    routes = [p.split("?")[0] for p in phoenix.paths]
    assert routes.count("/v1/trace_annotations") == 2
    assert routes.count("/v1/session_annotations") == 1  # asked once, then not again
    assert sum("no /v1/session_annotations" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize("phoenix", ["unknown session"], indirect=True)
def test_a_session_phoenix_does_not_know_is_an_error_after_the_spans_went(
    phoenix: _Phoenix,
) -> None:
    sink = PhoenixSink(f"http://127.0.0.1:{phoenix.server_address[1]}")
    try:
        items = _items()
        delivered = sink.deliver(items)
        assert delivered == [i.key for i in items if i.kind != "session"]  # retried alone
        with pytest.raises(DeliveryError, match=r"session_annotations answered 404.*conv-1"):
            sink.deliver([i for i in items if i.kind == "session"])
    finally:
        sink.close()


@pytest.mark.parametrize("phoenix", ["present"], indirect=True)
def test_a_session_keyed_on_its_trace_id_gets_no_session_annotation(phoenix: _Phoenix) -> None:
    turn = _turn("t1", TRACE_A, Label.OK)
    items = verdict_items(_report(turn, key="trace_id"), completed_at=0.0)
    sink = PhoenixSink(f"http://127.0.0.1:{phoenix.server_address[1]}")
    try:
        assert sink.deliver(items) == [i.key for i in items]
    finally:
        sink.close()
    assert [p.split("?")[0] for p in phoenix.paths] == [
        "/v1/span_annotations",
        "/v1/trace_annotations",
    ]


def test_an_evaluation_span_of_a_revision_says_which() -> None:
    """A returning conversation's verdict (``aem serve``) is told apart downstream."""
    from aem.sinks.otlp import span_attributes
    from aem.sinks.records import revised

    [turn] = [i for i in _items() if i.kind == "turn"]
    assert "aem.session.revision" not in span_attributes(turn.payload, turn.key)
    [again] = revised([turn], 2)
    assert span_attributes(again.payload, again.key)["aem.session.revision"] == 2


def test_the_session_item_names_the_answer_turns_suspect_not_the_first() -> None:
    """A writing call left unverified comes first in the turns; the session's item names
    what the user was told: the last answer that is a suspect."""
    call = _turn("t1", TRACE_A, Label.SUSPECT, Outcome.UNVERIFIED)
    answer = _turn("t3", TRACE_A, Label.SUSPECT, Outcome.UNVERIFIED).model_copy(
        update={"kind": TurnKind.ANSWER, "name": "answer"}
    )
    session = _session(_report(call, _turn("t2", TRACE_A, Label.OK, Outcome.PASS), answer))
    assert session["label"] == "suspect"
    assert session["explanation"].startswith("nothing proven; 2 suspect turns, the answer turn t3")
