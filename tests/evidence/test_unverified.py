"""``unverified``: a claim nothing proves wrong and nothing confirms is counted and shown,
never a root cause and never a failed gate; a fail of groundedness is a proof.

Sessions are generated (aem.testing builders, the test agent recorder for the CLI), so
each rule is pinned on a class of text, not on one data set's strings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aem.evaluate import build_report
from aem.foundation.model import Label, Outcome, SessionReport
from aem.metrics.groundedness import Groundedness
from aem.report.html import render_report
from aem.runs.gates import evaluate_gate
from tests.agent_kit import GenAIAgent, ToolCall, ToolSpec, message, record, text_part
from tests.conftest import run_audit
from tests.groundedness_kit import evaluate, rag_session, results

POLICY = [
    "Shipping costs are not refunded.",
    "Opened software cannot be returned.",
]
# A claim with no value, no name and nothing like any passage: nothing to prove either way.
UNRELATED = "The warehouse packs every parcel in recycled boxes."


def _groundedness(session: Any, case: dict[str, Any] | None = None) -> Any:
    report = evaluate(session, [Groundedness()], case or {"type": "happy"})
    (found,) = results(report, "groundedness")
    return report, found


def test_a_claim_no_passage_says_is_unverified_never_a_root_cause() -> None:
    report, found = _groundedness(rag_session(f"{UNRELATED} [1]", POLICY))
    assert found.outcome is Outcome.UNVERIFIED, found.explanation
    assert "a judge (metrics.groundedness.judge) would decide" in found.explanation
    [claim] = found.unverified
    assert claim.claim.startswith("The warehouse packs") and claim.closest in POLICY
    assert found.evidence == []
    answer = next(t for t in report.turns if t.turn_id == found.turn_id)
    # Where to look when nothing is proven: a suspect, never a root cause.
    assert answer.label is Label.SUSPECT and report.root_causes == []
    assert [s.turn_id for s in report.suspects] == [answer.turn_id]


def test_an_unverified_case_does_not_fail_a_gate_and_is_counted_apart() -> None:
    unsure = evaluate(rag_session(f"{UNRELATED} [1]", POLICY, session_id="a"), [Groundedness()])
    sure = evaluate(
        rag_session("Shipping costs are not refunded [1].", POLICY, session_id="b"),
        [Groundedness()],
    )
    audit = build_report([unsure, sure])
    gate = evaluate_gate(audit, "groundedness", 1.0)
    assert gate.passed and (gate.cases_passed, gate.cases_failed, gate.unverified) == (1, 0, 1)
    assert audit.unverified_claims == 1
    assert audit.outcomes["groundedness"] == {"pass": 1, "unverified": 1}


def test_a_negation_that_contradicts_the_paraphrased_sentence_fails_quoting_both() -> None:
    _, found = _groundedness(rag_session("Shipping costs are refunded [1].", POLICY))
    assert found.outcome is Outcome.FAIL and "negation" in found.explanation
    [proof] = found.evidence
    assert proof.field == "contradicted"
    assert proof.actual == "Shipping costs are refunded."
    assert proof.expected == "Shipping costs are not refunded."


def test_a_negation_beside_an_unrelated_sentence_proves_nothing() -> None:
    """A "not" in the claim, none in the nearest passage — but that passage says something
    else: no contradiction can be read off it."""
    _, found = _groundedness(rag_session("We do not open on public holidays [1].", POLICY))
    assert found.outcome is not Outcome.FAIL, found.explanation
    assert found.outcome is Outcome.UNVERIFIED


def test_a_restricting_word_added_to_the_paraphrased_sentence_is_a_doubt() -> None:
    docs = ["Premium members get free shipping on orders over $50."]
    answer = "Only premium members get free shipping on orders over $50 [1]."
    _, found = _groundedness(rag_session(answer, docs))
    assert found.outcome is Outcome.UNVERIFIED and "'only'" in found.explanation
    assert found.evidence == [] and found.unverified[0].closest == docs[0]


def test_a_missing_value_fails_with_the_value_and_its_closest_candidate() -> None:
    docs = ["Items can be returned within 30 days of purchase."]
    _, found = _groundedness(rag_session("Items can be returned within 45 days [1].", docs))
    assert found.outcome is Outcome.FAIL
    [proof] = found.evidence
    assert (proof.field, proof.actual, proof.expected) == ("unsupported_value", "45 days", "30")
    assert "Items can be returned within 45 days" in (proof.detail or "")


def test_citation_fails_carry_evidence() -> None:
    docs = ["Items can be returned within 30 days of purchase."]
    _, uncited = _groundedness(
        rag_session("Items can be returned within 30 days of purchase.", docs)
    )
    assert uncited.outcome is Outcome.FAIL and uncited.evidence[0].field == "citation"
    _, dangling = _groundedness(rag_session("Items can be returned within 30 days [4].", docs))
    assert dangling.outcome is Outcome.FAIL and dangling.evidence[0].actual == "[4]"


def _unverified_agent(recording: Any) -> None:
    """A help-desk agent whose policy lookup returns prose and whose answer says
    something the policy neither says nor contradicts."""
    spec = ToolSpec("lookup_policy", "Look up the returns policy.", {"type": "object"})
    agent = GenAIAgent(recording, "unsure-1", "gpt-4o", [spec])
    call = ToolCall("c1", "lookup_policy", {"topic": "returns"}, " ".join(POLICY))
    question = [message("user", text_part("Can I return my order?"))]
    with agent.invoke_agent("helpdesk", root=True):
        said = agent.chat(question, calls=[call])
        with agent.execute_tool(call):
            pass
        agent.chat([*question, said], text=UNRELATED)


def test_the_cli_counts_unverified_claims_in_json_and_terminal(tmp_path: Path) -> None:
    trace = record(tmp_path / "unsure.jsonl", "unsure-1", _unverified_agent)
    code, report, _ = run_audit(str(trace))
    assert report["unverified_claims"] == 1, json.dumps(report["outcomes"])
    assert report["outcomes"]["groundedness"] == {"unverified": 1}
    assert report["sessions_with_root_cause"] == 0 and code == 0
    from typer.testing import CliRunner

    from aem.cli import app

    shown = CliRunner().invoke(app, ["audit", str(trace), "--no-progress"], env={"COLUMNS": "200"})
    assert "1 claim unverified by groundedness" in shown.stdout
    assert "set metrics.groundedness.judge" in shown.stdout


def test_the_html_page_shows_unverified_outcomes_and_claims() -> None:
    session: SessionReport = evaluate(rag_session(f"{UNRELATED} [1]", POLICY), [Groundedness()])
    page = render_report(build_report([session]))
    assert '<th class="num">unverified</th>' in page
    assert 'class="num o-unverified">1<' in page
    assert 'id="unverified-claims"' in page and "1</b> claims unverified" in page
    assert "seg-unverified" in page and "unverifiedList" in page
