"""groundedness and refusal with a configured judge: a real local HTTP server speaking
chat completions, scripted. The judge's verdict is used and named; a judge error is an
``error`` outcome, which the gate leaves out of its denominator."""

from __future__ import annotations

from aem.foundation.model import AuditReport, Outcome
from aem.metrics.groundedness import Groundedness, GroundednessSettings
from aem.metrics.refusal import Refusal, RefusalSettings
from aem.runs.gates import evaluate_gate
from tests.groundedness_kit import evaluate, rag_session, results
from tests.judge_server import Reply, judge_server, scripted_judge_config

DOCS = ["Refunds are accepted within 30 days of purchase.", "Shipping costs are not refunded."]


def test_judge_verdict_is_used_and_recorded() -> None:
    replies = [
        Reply(content='{"mistake": false, "explanation": "every claim is in [1]"}'),
        Reply(content='{"mistake": true, "explanation": "60 days is not in the sources"}'),
    ]
    metric = Groundedness(GroundednessSettings(judge="scripted"))
    with judge_server(lambda body, n: replies[n]) as server:
        config = scripted_judge_config(server.url)
        good = evaluate(
            rag_session("Refunds take 30 days [1].", DOCS), [metric], {"type": "happy"}, config
        )
        bad = evaluate(
            rag_session("Refunds take 60 days [1].", DOCS), [metric], {"type": "happy"}, config
        )
    (passed,) = results(good, "groundedness")
    (failed,) = results(bad, "groundedness")
    assert (
        passed.outcome is Outcome.PASS
        and "judge scripted: every claim is in [1]" in passed.explanation
    )
    assert failed.outcome is Outcome.FAIL and passed.evidence[0].actual == "scripted"
    system = server.requests[0]["messages"][0]["content"]
    user = server.requests[0]["messages"][1]["content"]
    assert "GROUNDED" in system
    assert "[1] document [1] (kb-1): Refunds are accepted within 30 days" in user


def test_citations_are_checked_before_the_judge_is_asked() -> None:
    metric = Groundedness(GroundednessSettings(judge="scripted"))
    with judge_server(lambda body, n: Reply(content='{"mistake": false}')) as server:
        config = scripted_judge_config(server.url)
        report = evaluate(
            rag_session("Refunds take 30 days [7].", DOCS), [metric], {"type": "happy"}, config
        )
    (found,) = results(report, "groundedness")
    assert found.outcome is Outcome.FAIL and "dangling citation [7]" in found.explanation
    assert server.requests == []


def test_judge_error_is_an_error_outcome_left_out_of_the_gate() -> None:
    metric = Groundedness(GroundednessSettings(judge="scripted"))
    refusal = Refusal(RefusalSettings(judge="scripted"))
    with judge_server(lambda body, n: Reply(status=500, raw='{"error": "down"}')) as server:
        config = scripted_judge_config(server.url)
        broken = evaluate(
            rag_session("Refunds take 30 days [1].", DOCS), [metric], {"type": "happy"}, config
        )
        oos = evaluate(
            rag_session("I don't know.", DOCS, session_id="s2"), [refusal], {"type": "oos"}, config
        )
    (error,) = results(broken, "groundedness")
    assert error.outcome is Outcome.ERROR and "judge error" in error.explanation
    (refused,) = results(oos, "refusal")
    assert refused.outcome is Outcome.ERROR
    gate = evaluate_gate(AuditReport(sessions=[broken, oos]), "groundedness", 0.85)
    assert (gate.total, gate.errors, gate.score, gate.passed) == (0, 2, None, False)


def test_refusal_judge_prompt() -> None:
    refusal = Refusal(RefusalSettings(judge="scripted"))
    with judge_server(
        lambda body, n: Reply(content='{"mistake": false, "explanation": "declines"}')
    ) as server:
        report = evaluate(
            rag_session("I don't know.", DOCS),
            [refusal],
            {"type": "oos"},
            scripted_judge_config(server.url),
        )
    (found,) = results(report, "refusal")
    assert (
        found.outcome is Outcome.PASS
        and "OUT OF SCOPE" in server.requests[0]["messages"][0]["content"]
    )
