"""groundedness: claims split, values and passages of the context the answer saw,
citations parsed and checked, skip without context, the sample sessions' verdicts, and
the embedded default's accuracy on the labelled bench."""

from __future__ import annotations

import json

import pytest

from aem.evidence import Source, find_citations, resolve, split_claims, strip_citations
from aem.foundation.model import Outcome
from aem.metrics.groundedness import Groundedness, GroundednessSettings
from tests.groundedness_kit import evaluate, rag_session, results, session_results

RETURNS = [
    "Refunds are accepted within 30 days of purchase.",
    "Shipping costs are not refunded.",
    "Gift cards cannot be returned.",
]


def test_claims_leave_out_greetings_questions_and_offers() -> None:
    answer = (
        "Hello! Refunds are accepted within 30 days [1].\n"
        "- Shipping costs are not refunded [2]\n"
        "- Gift cards cannot be returned.\n"
        "Would you like me to start a return? Let me know if I can help with anything else."
    )
    claims = split_claims(answer)
    assert [c.text for c in claims] == [
        "Refunds are accepted within 30 days.",
        "Shipping costs are not refunded",
        "Gift cards cannot be returned.",
    ]
    assert [c.key for c in claims[0].citations] == ["1"]


def test_citation_forms_and_what_is_not_a_citation() -> None:
    text = "A [1]. B [2, 3]. C [1][3]. D [kb-17]. E [optional] and [a link](https://x.y) [Note 1]."
    assert [c.key for c in find_citations(text)] == ["1", "2", "3", "1", "3", "kb-17"]
    assert strip_citations("Refunds take 5 days [2].") == "Refunds take 5 days."
    sources = [Source(1, "kb-1", "document [1]", "x"), Source(2, "kb-17", "document [2]", "y")]
    found = [resolve(c, sources) for c in find_citations("[2] [kb-17] [4]")]
    assert [s.position if s else None for s in found] == [2, 2, None]


@pytest.mark.parametrize(
    ("session_id", "outcome", "says"),
    [
        ("rag-cited", "pass", "2 claim(s) supported"),
        ("rag-invented", "fail", "unsupported claim 'You will also get a $10 store credit"),
        ("rag-no-citation", "fail", "no [N] citation"),
        ("rag-dangling", "fail", "dangling citation [4]"),
        ("rag-russian", "pass", "2 claim(s) supported"),
    ],
)
def test_sample_sessions_get_the_stated_verdict(session_id: str, outcome: str, says: str) -> None:
    (found,) = session_results(session_id, "groundedness")
    assert found.outcome == outcome and says in found.explanation
    assert session_results(session_id, "refusal") == []


def test_unsupported_claim_quotes_the_closest_passage_with_its_score() -> None:
    (found,) = session_results("rag-invented", "groundedness")
    assert "states '$10', which the context does not hold" in found.explanation
    assert "closest passage (document [" in found.explanation and "score 0." in found.explanation
    # The proof: the stated value, the closest value the context holds, and the claim.
    proof = found.evidence[0]
    assert (proof.field, proof.actual, proof.expected) == ("unsupported_value", "$10", "5")
    assert "You will also get a $10 store credit" in proof.detail
    (dangling,) = session_results("rag-dangling", "groundedness")
    assert "3 document(s) were retrieved" in dangling.explanation


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ("You can get your money back within 30 days after buying [1].", Outcome.PASS),
        ("Refunds are accepted within 60 days of purchase [1].", Outcome.FAIL),
        ("Shipping costs are refunded [2].", Outcome.FAIL),
        # A restriction the passage does not state is no contradiction of it: a doubt.
        ("Refunds are accepted within 30 days for premium members only [1].", Outcome.UNVERIFIED),
        ("Refunds are accepted within 30 days of purchase via UPS [1].", Outcome.FAIL),
        # "excluded" says "cannot" in one word: no dropped negation.
        ("Returns are accepted for 30 days; gift cards are excluded [1, 3].", Outcome.PASS),
        ("Gift cards are accepted for returns [3].", Outcome.FAIL),
    ],
)
def test_claims_against_documents(answer: str, outcome: Outcome) -> None:
    report = evaluate(rag_session(answer, RETURNS), [Groundedness()], {"type": "happy"})
    (found,) = results(report, "groundedness")
    assert found.outcome is outcome, found.explanation


def test_tool_results_need_no_citation_and_values_are_compared_by_meaning() -> None:
    session = rag_session(
        "Your order ORD-4471 shipped on March 12, 2026 and cost $129.90.",
        tool_result='{"order_id": "ORD-4471", "shipped": "2026-03-12", "total": 129.9}',
        question="Where is my order ORD-4471?",
    )
    (found,) = results(evaluate(session, [Groundedness()], {"type": "edge"}), "groundedness")
    assert found.outcome is Outcome.PASS, found.explanation
    always = Groundedness(GroundednessSettings(require_citation="always"))
    (strict,) = results(evaluate(session, [always], {"type": "edge"}), "groundedness")
    assert strict.outcome is Outcome.FAIL and "no [N] citation" in strict.explanation


def test_no_context_skips_unless_the_case_requires_it() -> None:
    session = rag_session("Refunds are accepted within 30 days of purchase.")
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    assert found.outcome is Outcome.SKIP and "nothing to rest on" in found.explanation
    required = {"type": "happy", "requires_context": True}
    (failed,) = results(evaluate(session, [Groundedness()], required), "groundedness")
    assert failed.outcome is Outcome.FAIL and "requires context" in failed.explanation
    assert failed.evidence[0].field == "requires_context"


def test_type_aware_application() -> None:
    metric = Groundedness()
    answer = "Refunds are accepted within 30 days of purchase [1]."
    with_docs = rag_session(answer, RETURNS)
    assert results(evaluate(with_docs, [metric], {"type": "oos"}), "groundedness") == []
    assert len(results(evaluate(with_docs, [metric], {}), "groundedness")) == 1  # no type
    assert len(results(evaluate(with_docs, [metric]), "groundedness")) == 1  # no case
    bare = rag_session(answer)
    assert results(evaluate(bare, [metric], {}), "groundedness") == []  # nothing gathered


def test_bench_accuracy_reaches_the_target() -> None:
    from aem.evidence import Thresholds
    from bench.groundedness.run import judge_all, load, summary

    defaults = GroundednessSettings()
    contexts, claims = load()
    checks = judge_all(
        contexts, claims, Thresholds(defaults.similarity_threshold, defaults.overlap_threshold)
    )
    result = summary(claims, checks)
    assert len(claims) >= 60
    assert result["accuracy"] >= 0.9, result["errors"]


def test_only_the_answers_ancestors_are_its_context() -> None:
    session = rag_session("Refunds are accepted within 30 days of purchase [1].", RETURNS)
    session.stated_edges = []  # no edge: the retrieval did not feed the answer
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    assert found.outcome is Outcome.SKIP and "nothing to rest on" in found.explanation


def test_layout_and_pleasantries_are_no_claims_or_names() -> None:
    """Seen on tau-bench answers: a lead-in label ("**First Leg:**"), a clock suffix
    ("07:00 AM"), a month, a lone list number ("4.") and a well-wish were failed as
    unsupported names or claims. A name the records lack is still reported (a doubt)."""
    flights = (
        '{"flight_number": "HAT069", "origin": "JFK", "destination": "SEA",'
        ' "scheduled_departure_time_est": "07:00:00", "date": "2024-05-20", "price": 255}'
    )
    answer = (
        "**Outbound Leg:** HAT069 from JFK to SEA\n"
        "Departure: 07:00 AM EST on May 20, 2024\n"
        "4.\n"
        "**Total Price:** $255\n"
        "Have a great trip to Seattle!"
    )
    session = rag_session(answer, tool_result=flights, question="Book me a flight to SEA.")
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    assert found.outcome is Outcome.PASS, found.explanation
    assert [c.text for c in split_claims(answer)][-1] == "**Total Price:** $255"

    named = rag_session(
        "Your flight HAT069 connects in Atlanta.", tool_result=flights, question="Book it."
    )
    (failed,) = results(evaluate(named, [Groundedness()], {"type": "happy"}), "groundedness")
    assert failed.outcome is Outcome.UNVERIFIED and "'Atlanta'" in failed.explanation


FLIGHT = (
    '{"flights": [{"flight_number": "HAT290", "origin": "DEN", "destination": "ORD",'
    ' "date": "2024-05-26", "scheduled_arrival_time_est": "20:30:00", "price": 150},'
    ' {"flight_number": "HAT291", "origin": "ORD", "destination": "DEN", "price": 155}]}'
)


@pytest.mark.parametrize(
    ("answer", "outcome", "says"),
    [
        ("HAT290 lands at 08:30 PM on May 26.", Outcome.PASS, ""),
        ("HAT290 lands at 09:30 PM on May 26.", Outcome.FAIL, "'09:30 PM'"),
        ("HAT290 lands at 08:30 PM on May 27.", Outcome.FAIL, "'May 27'"),
        ("HAT290 flies from Denver (DEN) to Chicago (ORD).", Outcome.PASS, ""),
        # A name tool records lack may be world knowledge ("Denver" for DEN): a doubt.
        ("HAT290 flies from Denver to Chicago.", Outcome.UNVERIFIED, "'Denver'"),
        ("The total for both flights is $305.", Outcome.PASS, ""),
        ("The fare of HAT290 is $305.", Outcome.FAIL, "'$305'"),
        ("**Option 1:**\n- **Return Flights:**\nHAT290 costs $150.", Outcome.PASS, ""),
    ],
)
def test_records_checked_by_time_day_gloss_and_aggregate(
    answer: str, outcome: Outcome, says: str
) -> None:
    """Seen on tau-bench: clock times and yearless days were read as bare numbers, a
    city spelled out beside its airport code was an unknown name, a stated total of
    fares was unsupported, and a bold lead-in ("**Option 1:**") was a claim."""
    session = rag_session(answer, tool_result=FLIGHT, question="When does my flight land?")
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    assert found.outcome is outcome, found.explanation
    assert says in found.explanation


@pytest.mark.parametrize(
    ("result", "prose"),
    [("897.0", False), ("Transfer successful", False), ("OK", False), ("Sunny, 22C", True)],
)
def test_numbers_and_acknowledgements_are_records_not_prose(result: str, prose: bool) -> None:
    """A calculator's number or "Transfer successful" has no sentence to paraphrase, so
    after one the answer's wording is not held to an embedding match; a short result
    that says something ("Sunny, 22C") still is."""
    answer = "A human agent will now review the refund with you."
    session = rag_session(answer, tool_result=result, question="Please transfer me.")
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    if prose:
        assert found.outcome is Outcome.UNVERIFIED and "no passage says" in found.explanation
    else:
        assert found.outcome is Outcome.PASS, found.explanation
        assert "records only" in found.explanation


def test_what_the_user_said_later_in_the_chat_is_context() -> None:
    """Seen on tau-bench: "your budget of $1,000" failed because the user gave the
    budget in a later message, which only the answer's own model input holds."""
    answer = "The upgrade costs $1,023, which is above your budget of $1,000."
    session = rag_session(answer, tool_result='{"upgrade_price": 1023}', question="Upgrade me.")
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    assert found.outcome is Outcome.UNVERIFIED and "'$1,000'" in found.explanation
    chat = [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "Upgrade me."},
        {"role": "user", "content": "I can spend up to 1000 dollars."},
    ]
    session.turns[-1].seen_inputs = [json.dumps(chat)]
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    assert found.outcome is Outcome.PASS, found.explanation


@pytest.mark.parametrize(
    ("tool", "outcome"), [("send_certificate", Outcome.PASS), ("send_email", Outcome.UNVERIFIED)]
)
def test_a_done_action_is_reported_on_a_successful_call(tool: str, outcome: Outcome) -> None:
    """Seen on tau-bench: "The certificate for $150 has been successfully issued" after
    ``send_certificate`` answered "Certificate certificate_3221322 added to user … with
    amount 150." shares too few words with it for an embedding match. A successful
    call of that action supports the report; a successful call of another action does
    not."""
    result = "Certificate certificate_3221322 added to user ethan_martin_2396 with amount 150."
    session = rag_session(
        "The certificate for $150 has been successfully issued to your account.",
        tool_result=result,
        tool_name=tool,
        question="Please compensate me for the delay.",
    )
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    assert found.outcome is outcome, found.explanation


def test_an_aggregate_may_draw_on_the_answers_other_sentences() -> None:
    """Seen on tau-bench: "$50 per passenger. Number of passengers: 3. Total
    compensation: $150" — the total is 3 × $50, both stated a line above it."""
    answer = (
        "The compensation is $50 per passenger.\n"
        "- Number of passengers: 3\n"
        "- Total compensation: $150"
    )
    policy = '{"compensation_per_passenger": 50, "passengers": 3}'
    session = rag_session(answer, tool_result=policy, question="What do I get?")
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    assert found.outcome is Outcome.PASS, found.explanation
    wrong = rag_session(answer.replace("$150", "$170"), tool_result=policy, question="What?")
    (failed,) = results(evaluate(wrong, [Groundedness()], {"type": "happy"}), "groundedness")
    # No record binds a total: a wrong one is a doubt, never proof.
    assert failed.outcome is Outcome.UNVERIFIED and "'$170'" in failed.explanation


def test_a_glossed_name_may_come_again_without_its_code() -> None:
    """Seen on tau-bench: "from Seattle (SEA) to Dallas/Fort Worth (DFW) … before
    returning to Seattle" — the second Seattle is the glossed one."""
    record = '{"origin": "SEA", "destination": "DFW", "flight_number": "HAT290"}'
    answer = "HAT290 flies from Seattle (SEA) to Dallas/Fort Worth (DFW), then back to Seattle."
    session = rag_session(answer, tool_result=record, question="Where does it go?")
    (found,) = results(evaluate(session, [Groundedness()], {"type": "happy"}), "groundedness")
    assert found.outcome is Outcome.PASS, found.explanation
    other = rag_session(answer.replace("back to Seattle", "on to Boston"), tool_result=record)
    (failed,) = results(evaluate(other, [Groundedness()], {"type": "happy"}), "groundedness")
    assert failed.outcome is Outcome.UNVERIFIED and "'Boston'" in failed.explanation
