"""refusal: an honest "I don't know" on an oos question passes (with or without an offer
of a human), a plausible invented fact fails, in English and Russian; truthfulness does
not count the same answer's values a second time."""

from __future__ import annotations

import pytest

from aem.evidence import has_cue, offers_help
from aem.foundation.model import Outcome
from aem.metrics.groundedness import Groundedness
from aem.metrics.refusal import Refusal
from aem.metrics.truthfulness import Truthfulness
from tests.groundedness_kit import evaluate, rag_session, results, session_results

DELIVERY = ["Standard delivery takes 3 to 5 business days and costs $4.99."]
OOS = {"type": "oos"}


def test_sample_sessions() -> None:
    (honest,) = session_results("oos-honest", "refusal")
    assert honest.outcome == "pass" and "offers a human" in honest.explanation
    (invented,) = session_results("oos-invented", "refusal")
    assert invented.outcome == "fail" and "'6-month'" in invented.explanation
    assert session_results("oos-honest", "groundedness") == []


def test_cues_in_english_and_russian() -> None:
    assert has_cue("I'm sorry, I don't have information about that.")
    assert has_cue("К сожалению, у меня нет информации об этом.")
    assert has_cue("Не знаю, уточню у коллег.")
    assert not has_cue("Refurbished phones come with a 6-month warranty.")
    assert offers_help("Оставьте, пожалуйста, ваш телефон — менеджер перезвонит.")


@pytest.mark.parametrize(
    ("question", "answer", "outcome"),
    [
        (
            "Do you sell gift wrapping?",
            "I don't know whether we offer gift wrapping. I can connect you with a manager.",
            Outcome.PASS,
        ),
        (
            "Можно ли оплатить заказ криптовалютой?",
            "К сожалению, у меня нет информации об этом. Оставьте телефон, менеджер перезвонит.",
            Outcome.PASS,
        ),
        (
            "Do you sell gift wrapping?",
            "Yes, gift wrapping costs $5 per item.",
            Outcome.FAIL,
        ),
        (
            "Do you sell gift wrapping?",
            # Declines, then states what no passage confirms nor contradicts: a doubt.
            "I'm not sure, but gift wrapping is usually added at checkout for every order.",
            Outcome.UNVERIFIED,
        ),
        (
            "Можно ли оплатить заказ криптовалютой?",
            "Да, мы принимаем биткоин через приложение банка.",
            Outcome.FAIL,
        ),
        ("Do you sell gift wrapping?", "I don't know.", Outcome.PASS),  # no offer: fine
        # No cue phrase: the exemplar similarity decides.
        ("Do you sell gift wrapping?", "My knowledge base has no entry for that.", Outcome.PASS),
        ("Do you sell gift wrapping?", "Unfortunately, I have no way to check that.", Outcome.PASS),
        # A polite negative answer is a statement, not a refusal.
        (
            "Can I pay in bitcoin?",
            "Sorry, cryptocurrency payments are not supported.",
            Outcome.FAIL,
        ),
        # An offer of a human after "но" is no claim; "не могу это подсказать" is a cue.
        (
            "Можно ли оплатить заказ криптовалютой?",
            "Точной информации у меня нет, но могу передать вопрос менеджеру.",
            Outcome.PASS,
        ),
        (
            "Можно ли оплатить заказ криптовалютой?",
            "К сожалению, я не могу это подсказать. Оставьте номер телефона, и мы перезвоним.",
            Outcome.PASS,
        ),
        # The English model cannot read Russian: a Russian statement is no refusal.
        (
            "Можно ли оплатить заказ криптовалютой?",
            "Нет, оплата криптовалютой невозможна.",
            Outcome.FAIL,
        ),
    ],
)
def test_refusals(question: str, answer: str, outcome: Outcome) -> None:
    session = rag_session(answer, DELIVERY, question=question)
    (found,) = results(evaluate(session, [Refusal()], OOS), "refusal")
    assert found.outcome is outcome, found.explanation


def test_only_oos_cases_get_refusal() -> None:
    session = rag_session("I don't know.", DELIVERY)
    assert results(evaluate(session, [Refusal()], {"type": "happy"}), "refusal") == []
    assert results(evaluate(session, [Refusal()], {}), "refusal") == []
    assert results(evaluate(session, [Refusal()]), "refusal") == []


def test_honest_refusal_repeating_the_questions_date_is_no_truthfulness_failure() -> None:
    session = rag_session(
        "I'm sorry, I don't have information about opening hours on 12 June 2026.",
        DELIVERY,
        question="Will the pick-up point be open on 12 June? It is a public holiday.",
    )
    report = evaluate(session, [Truthfulness(), Refusal(), Groundedness()], OOS)
    (refusal,) = results(report, "refusal")
    assert refusal.outcome is Outcome.PASS
    truth = results(report, "correctness.truthfulness")
    assert all(r.outcome is not Outcome.FAIL for r in truth)
    assert report.root_causes == []
    invented = rag_session("Yes, gift wrapping costs $5 per item.", DELIVERY)
    both = evaluate(invented, [Truthfulness(), Refusal()], OOS)
    assert [rc.metrics for rc in both.root_causes] == [["refusal"]]  # one finding, one metric


def test_refusal_bench_accuracy() -> None:
    from bench.groundedness.refusals import judge_all, load, summary

    records = load()
    result = summary(records, judge_all(records, Refusal().settings.similarity_threshold))
    assert result["sentences"] >= 60 and {"en", "ru"} <= set(result["by_language"])
    assert result["accuracy"] >= 0.9 and result["false_pass"] == 0, result["errors"]


POLICY = [
    "Basic economy flights cannot be modified once booked.",
    "Passengers may still change the cabin class of any reservation.",
]


@pytest.mark.parametrize(
    ("answer", "context", "outcome"),
    [
        # The request declined for a reason the context gives: an honest refusal.
        (
            "Your ticket is basic economy, so the flight cannot be modified. You can "
            "change the cabin class instead.",
            POLICY,
            Outcome.PASS,
        ),
        ("Перенести рейс нельзя: билеты базового эконома изменению не подлежат.", POLICY, None),
        # A rule the context proves wrong: it holds no such place (a name it lacks).
        ("Orders to Canada cannot be delivered.", DELIVERY, Outcome.FAIL),
        # A rule no passage states and nothing contradicts: a judge's call, not a failure.
        ("Cryptocurrency payments cannot be accepted for orders.", DELIVERY, Outcome.UNVERIFIED),
        ("Sorry, paying in bitcoin is not allowed.", DELIVERY, Outcome.UNVERIFIED),
    ],
)
def test_a_request_declined_as_impossible_needs_its_reason_in_the_context(
    answer: str, context: list[str], outcome: Outcome | None
) -> None:
    session = rag_session(answer, context, question="Can I move my flight to tomorrow?")
    (found,) = results(evaluate(session, [Refusal()], OOS), "refusal")
    if outcome is None:  # Russian under the English model: the cue is read, the claim checked
        assert "answers instead of declining" not in found.explanation, found.explanation
    else:
        assert found.outcome is outcome, found.explanation
    if outcome is Outcome.FAIL:
        assert "'Canada'" in found.explanation and found.evidence
        assert found.evidence[0].actual == "Canada"
    if outcome is Outcome.UNVERIFIED:
        assert found.unverified and found.unverified[0].claim in answer
