"""Text that is not a claim, and who an answer is for.

A source named in words ("(Passage 1)", "в источнике 2") is a citation, and its number is
no stated value; an honest gap statement ("the passages do not say …") states nothing to
support, though a fact said after it still is checked; in a group chat, a member's message
to another member is no answer to the user — only the closing output is judged.
"""

from __future__ import annotations

import pytest

from aem.evidence import answers_to_user, find_citations, split_claims, strip_citations
from aem.foundation.model import MetricResult, Outcome, Session, Turn, TurnKind
from aem.metrics.groundedness import Groundedness
from aem.metrics.refusal import Refusal
from aem.testing import make_case, make_session, make_tool_call, make_turn
from aem.testing import run_metric as run
from tests.groundedness_kit import evaluate, rag_session, results

RETURNS = [
    "Returns are accepted within 30 days of delivery.",
    "Refunds are paid to the original card within 5 business days.",
    "Gift cards cannot be returned.",
]
RETURNS_RU = [
    "Возврат принимается в течение 30 дней после доставки.",
    "Деньги возвращаются на карту в течение 5 рабочих дней.",
    "Подарочные карты возврату не подлежат.",
]
HAPPY = {"type": "happy"}


def _grounded(answer: str, documents: list[str]) -> MetricResult:
    (found,) = results(
        evaluate(rag_session(answer, documents), [Groundedness()], HAPPY), "groundedness"
    )
    return found


# --- sources named in words ------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "key", "documents"),
    [
        ("Returns are accepted within 30 days of delivery (Passage 1).", "1", RETURNS),
        ("According to document 2, refunds are paid within 5 business days.", "2", RETURNS),
        ("Gift cards cannot be returned, see source [3].", "3", RETURNS),
        ("Gift cards cannot be returned (Document 3).", "3", RETURNS),
        ("В источнике 2 сказано: деньги возвращаются в течение 5 рабочих дней.", "2", RETURNS_RU),
    ],
)
def test_a_source_named_in_words_is_a_citation_not_a_value(
    answer: str, key: str, documents: list[str]
) -> None:
    assert [c.key for c in find_citations(answer)] == [key]
    (claim,) = split_claims(answer)
    assert claim.citations and claim.citations[0].key == key
    # The reference's number is the source's: it is gone from what is checked.
    assert key not in claim.text.replace("30", "").replace("5", "")
    found = _grounded(answer, documents)
    assert found.outcome is Outcome.PASS, found.explanation
    assert "cites its sources" in found.explanation


def test_a_source_named_in_words_must_exist() -> None:
    found = _grounded("Returns are accepted within 30 days of delivery (Passage 7).", RETURNS)
    assert found.outcome is Outcome.FAIL and "dangling citation (Passage 7)" in found.explanation


def test_words_that_name_no_source_stay_as_they_are() -> None:
    for text in ("We have 3 sources of income.", "Document 12345 was signed.", "[Note 1] applies."):
        assert find_citations(text) == [] and strip_citations(text) == text


# --- gap statements ----------------------------------------------------------------------

GAPS = [
    "I couldn't find anything about gift wrapping.",
    "The passages do not say whether gift wrapping is offered.",
    "I am unable to answer based on the given passages.",
    "The context does not mention gift wrapping.",
    "Gift wrapping is not mentioned in the provided documents.",
    "В документах нет сведений о подарочной упаковке.",
    "Не удалось найти информацию о подарочной упаковке.",
    "В предоставленных текстах не указано, есть ли подарочная упаковка.",
]


@pytest.mark.parametrize("gap", GAPS)
def test_a_gap_statement_is_no_claim(gap: str) -> None:
    assert split_claims(gap) == []
    found = _grounded(gap, RETURNS)
    assert found.outcome is not Outcome.FAIL, found.explanation


def test_a_gap_statement_beside_a_claim_leaves_the_claim_checked() -> None:
    answer = "The passages do not say whether gift wrapping is offered. Gift cards cost $10."
    assert [c.text for c in split_claims(answer)] == ["Gift cards cost $10."]
    assert _grounded(answer, RETURNS).outcome is Outcome.FAIL


@pytest.mark.parametrize(("departs", "outcome"), [("9:00", Outcome.PASS), ("11:30", Outcome.FAIL)])
def test_the_factual_tail_of_a_gap_statement_is_checked(departs: str, outcome: Outcome) -> None:
    answer = "I couldn't find a flight on May 5, but there is one on May 6 at 9:00."
    (claim,) = split_claims(answer)
    assert claim.text == "there is one on May 6 at 9:00."
    session = rag_session(
        answer,
        question="Is there a flight to Oslo on May 5?",
        tool_result=f'{{"flights": [{{"date": "May 6", "departs": "{departs}"}}]}}',
        tool_name="search_flights",
    )
    (found,) = results(evaluate(session, [Groundedness()], HAPPY), "groundedness")
    assert found.outcome is outcome, found.explanation
    if outcome is Outcome.FAIL:
        assert "9:00" in found.explanation


def test_a_russian_gap_statement_with_a_tail_keeps_the_tail() -> None:
    answer = "В документах нет сведений о рейсе 5 мая, но есть рейс 6 мая в 9:00."
    assert [c.text for c in split_claims(answer)] == ["есть рейс 6 мая в 9:00."]


# --- who an answer is for ----------------------------------------------------------------


def _said(agent: str, text: str, kind: TurnKind = TurnKind.ANSWER, **kw: object) -> Turn:
    return make_turn(kind, agent, text=text, context="chat", **kw).model_copy(
        update={"agent": agent}
    )


def _group_chat(member_says: str, final: str, question: str) -> Session:
    """A retrieval, then a group chat: the planner tells the searcher something, the
    searcher reports, the planner answers the user."""
    retrieval = make_turn(TurnKind.RETRIEVAL, "kb", documents=RETURNS, context="chat")
    return make_session(
        retrieval,
        _said("Planner", member_says),
        _said("Searcher", "I looked through the returns page and reported what it says."),
        _said("Planner", final),
        user_inputs=[question],
    )


def test_answers_to_the_user_in_a_group_chat_are_the_closing_output() -> None:
    chat = _group_chat("Searcher, check whether gift cards cost $99.", "Done.", "Q?")
    assert [t.turn_id for t in answers_to_user(chat)] == ["t4"]
    two = make_session(
        _said("Planner", "Searcher, find the fee."),
        _said("Searcher", "The fee is $5 [1]."),
        _said("Planner", "The fee is $5."),
        _said("Planner", "TERMINATE"),
    )
    assert [t.turn_id for t in answers_to_user(two)] == ["t3", "t4"]
    ends_in_a_call = make_session(
        _said("Planner", "Searcher, find the fee."),
        _said("Searcher", "Looking it up.", TurnKind.REASONING),
        make_tool_call("search", {"q": "fee"}, result="fee: $5", context="chat"),
    )
    assert answers_to_user(ends_in_a_call) == []


def test_one_agent_talking_to_the_user_answers_every_time() -> None:
    dialogue = make_session(
        make_turn(text="Could you give me your order number?"),
        make_turn(text="Your order ships tomorrow."),
    )
    assert [t.turn_id for t in answers_to_user(dialogue)] == ["t1", "t2"]


def test_groundedness_judges_the_answer_to_the_user_not_the_members_talk() -> None:
    chat = _group_chat(
        "Searcher, confirm that gift cards can be returned within 90 days for $99.",
        "Returns are accepted within 30 days of delivery [1].",
        "How long do I have to return an item?",
    )
    found = run(Groundedness(), chat, make_case(type="happy"))
    assert [(r.turn_id, r.outcome) for r in found] == [("t4", Outcome.PASS)], found


def test_refusal_judges_the_answer_to_the_user_not_the_members_talk() -> None:
    chat = _group_chat(
        "Searcher, gift wrapping costs $7 per item, confirm it.",
        "I don't know whether we offer gift wrapping. I can connect you with a manager.",
        "Do you sell gift wrapping?",
    )
    found = run(Refusal(), chat, make_case(type="oos"))
    assert [(r.turn_id, r.outcome) for r in found] == [("t4", Outcome.PASS)], found


# --- refusal: which answer, and escalation ------------------------------------------------


@pytest.mark.parametrize(
    ("said", "outcome"),
    [
        ("Here is what our documents say: returns are accepted within 30 days [1].", Outcome.PASS),
        # Stated beside an offer, confirmed by no passage, contradicted by none: a doubt.
        ("Gift wrapping is free for members.", Outcome.UNVERIFIED),
    ],
)
def test_refusal_passes_what_the_docs_say_and_an_offer_of_a_human(
    said: str, outcome: Outcome
) -> None:
    answer = f"{said} I can connect you with a human colleague for the rest."
    session = rag_session(answer, RETURNS, question="Do you sell gift wrapping?")
    (found,) = results(evaluate(session, [Refusal()], {"type": "oos"}), "refusal")
    assert found.outcome is outcome, found.explanation
    if outcome is Outcome.PASS:
        assert "escalates" in found.explanation


def _dialogue(first: str, second: str) -> Session:
    """An in-scope question answered, then the out-of-scope one, answered, then thanks."""
    earlier = "How long do I have to return an item?"
    oos = "Do you sell gift wrapping?"
    retrieval = make_turn(TurnKind.RETRIEVAL, "kb", documents=RETURNS)
    return make_session(
        retrieval,
        make_turn(text="You can return an item within 30 days [1].", seen_inputs=[earlier]),
        make_turn(text=first, seen_inputs=[f"{earlier}\n...\n{oos}"]),
        make_turn(text=second, seen_inputs=[f"{earlier}\n...\n{oos}\nThanks, and the price?"]),
        user_inputs=[earlier, oos],
    )


@pytest.mark.parametrize(
    ("first", "second", "outcome"),
    [
        ("Yes, gift wrapping costs $5 per item.", "I don't know.", Outcome.FAIL),
        ("I don't know whether we offer gift wrapping.", "It costs $5.", Outcome.PASS),
    ],
)
def test_refusal_judges_the_answer_right_after_the_oos_question(
    first: str, second: str, outcome: Outcome
) -> None:
    case = make_case(type="oos", question="Do you sell gift wrapping?")
    (found,) = run(Refusal(), _dialogue(first, second), case)
    assert (found.turn_id, found.outcome) == ("t3", outcome), found.explanation


def test_refusal_passes_over_a_greeting_and_a_question_back() -> None:
    session = make_session(
        make_turn(text="Hello! How can I help you today?"),
        make_turn(text="Could you tell me which product you mean?"),
        make_turn(text="I'm sorry, I don't have information about gift wrapping."),
        user_inputs=["Do you sell gift wrapping?"],
    )
    (found,) = run(Refusal(), session, make_case(type="oos"))
    assert (found.turn_id, found.outcome) == ("t3", Outcome.PASS), found.explanation
