"""A negation or a restriction is a proof only where it bears on what the claim states.

Generated help-desk and news-like sessions: a passage that negates *something else* (in
another sentence or another clause) never fails a faithful paraphrase; a claim that
turns around or restricts the very words the passage states still fails, quoting the cue.
"""

from __future__ import annotations

import pytest

from aem.foundation.model import Outcome
from aem.metrics.groundedness import Groundedness
from aem.settings import AemConfig
from tests.groundedness_kit import evaluate, rag_session, results

NO_CITATIONS = {"type": "happy"}


def _verdict(
    answer: str, documents: list[str], config: AemConfig | None = None
) -> tuple[Outcome, str]:
    metric = Groundedness(Groundedness.Settings(require_citation="never"))
    report = evaluate(rag_session(answer, documents), [metric], NO_CITATIONS, config)
    (found,) = results(report, "groundedness")
    return found.outcome, found.explanation


@pytest.mark.parametrize(
    ("answer", "documents"),
    [
        # The "not" bears on the journey, a sentence the summary never states.
        (
            "The turtles will be taken to the city aquarium.",
            [
                "For the rescued turtles the journey is not over. They will be taken to the city "
                "aquarium."
            ],
        ),
        # Same sentence, another clause: "not licensed" is not what the claim states.
        (
            "Inspectors in the region require up to 900 hours of training.",
            [
                "Inspectors in the region are not certified this way, requiring as much as 900 "
                "hours of training."
            ],
        ),
        # "only four" and "just four" restrict alike.
        (
            "The club signed 12 forwards, while the academy has signed only four.",
            ["Since June the club signed 12 forwards, and the academy just four."],
        ),
        # The claim's own "not" bears on words the passage never says.
        (
            "Dana is upset with Lee for not calling sooner.",
            ["Dana will be furious at Lee about keeping the news from her."],
        ),
        # "excluded" says "cannot" in one word.
        (
            "Returns are accepted for 30 days; gift cards are excluded.",
            ["Returns are accepted for 30 days.", "Gift cards cannot be returned."],
        ),
        # A "not" in one clause, the claim paraphrasing the clause beside it.
        (
            "The warranty covers manufacturing defects.",
            ["The warranty covers manufacturing defects but not accidental damage."],
        ),
    ],
)
def test_a_negation_elsewhere_is_no_contradiction(answer: str, documents: list[str]) -> None:
    outcome, explanation = _verdict(answer, documents)
    assert outcome is not Outcome.FAIL, explanation


@pytest.mark.parametrize(
    ("answer", "documents", "cue"),
    [
        ("Shipping costs are refunded.", ["Shipping costs are not refunded."], "'not'"),
        ("Pets are allowed in all rooms.", ["Pets are not allowed in any room."], "'not'"),
        ("Gift cards can be returned.", ["Gift cards cannot be returned."], "'cannot'"),
        (
            "Доставка заказа в пункт выдачи бесплатная.",
            ["Доставка заказа в пункт выдачи не бесплатная."],
            "'не'",
        ),
    ],
)
def test_a_turned_or_restricted_statement_fails_quoting_the_cue(
    answer: str, documents: list[str], cue: str
) -> None:
    outcome, explanation = _verdict(answer, documents)
    assert outcome is Outcome.FAIL, explanation
    assert cue in explanation


RESTRICTED = [
    (
        "Refunds are accepted within 30 days for premium members only.",
        ["Refunds are accepted within 30 days of purchase."],
        "'only'",
    ),
    (
        "Самовывоз бесплатный только для постоянных клиентов.",
        ["Самовывоз из пункта выдачи на Тверской улице бесплатный."],
        "'только'",
    ),
]


@pytest.mark.parametrize(("answer", "documents", "cue"), RESTRICTED)
def test_a_restriction_the_passage_lacks_is_a_doubt_quoting_the_cue(
    answer: str, documents: list[str], cue: str
) -> None:
    """Adding "only" states something the passage does not — but does not state its
    opposite, so it proves nothing: unverified, the cue quoted for the reviewer."""
    outcome, explanation = _verdict(answer, documents)
    assert outcome is Outcome.UNVERIFIED, explanation
    assert cue in explanation


@pytest.mark.parametrize(("answer", "documents", "cue"), RESTRICTED)
def test_strict_teams_fail_an_added_restriction(
    answer: str, documents: list[str], cue: str
) -> None:
    strict = AemConfig.model_validate({"verdicts": {"unsupported": "fail"}})
    outcome, explanation = _verdict(answer, documents, strict)
    assert outcome is Outcome.FAIL, explanation
    assert cue in explanation
