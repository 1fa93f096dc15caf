"""Person names as values: read by shape in four languages, compared as names
(transliterated, case-folded, titles aside), and a different person than the one the named
record holds is a proof — never by embedding, never on a name a source holds."""

from __future__ import annotations

import pytest

from aem.evidence.names import person_name, person_names
from aem.metrics.truthfulness import Truthfulness
from aem.testing import make_session, make_tool_call, make_turn, run_metric

RECORD = {"reference": "APT-20417", "date": "2026-05-12", "doctor": "Dr. Jürgen Müller"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Your visit APT-1 is with Dr. Anna Weber. The fee is €40.", ["Dr. Anna Weber"]),
        ("Ihr Termin ist am 12. Mai um 9:30 Uhr. Zuständig ist Petra Wölfel.", ["Petra Wölfel"]),
        ("Die Gebühr beträgt 40 €; Ihr Termin bleibt.", []),
        ("Le atenderá Dra. María Gómez el martes.", ["Dra. María Gómez"]),
        ("Вас примет Игорь Петров; к оплате 40 €.", ["Игорь Петров"]),
        ("Sarah O'Neil will call you on Monday.", ["Sarah O'Neil"]),
        ("Status: CONFIRMED by the API.", []),
    ],
)
def test_names_are_read_by_shape_in_four_languages(text: str, names: list[str]) -> None:
    assert [n.raw for n in person_names(text)] == names


def test_a_name_is_the_same_person_transliterated_without_diacritics_or_title() -> None:
    record = person_name("Анна Смирнова")
    latin = person_name("Anna Smirnova")
    assert record is not None and latin is not None and latin.same_person(record)
    muller = person_name("Dr. Jürgen Müller")
    plain = person_name("Jurgen Muller")
    assert muller is not None and plain is not None and muller.same_person(plain)
    assert not muller.shares_a_word(person_name("Anna Schäfer") or muller)


def _truthfulness(answer: str, user: str = "When is APT-20417?") -> tuple[str, str]:
    lookup = make_tool_call("get_appointment", {"reference": "APT-20417"}, result=RECORD)
    session = make_session(lookup, make_turn("answer", text=answer), user_inputs=[user])
    verdict = run_metric(Truthfulness(), session)[-1]
    return str(verdict.outcome), verdict.explanation


def test_another_person_than_the_record_names_fails_quoting_the_record() -> None:
    outcome, why = _truthfulness("Your appointment APT-20417 is on 12 May with Dr. Anna Schäfer.")
    assert outcome == "fail"
    assert "Dr. Anna Schäfer" in why and "Dr. Jürgen Müller" in why and "doctor" in why


def test_the_same_person_in_another_form_passes() -> None:
    for said in ("Jurgen Muller", "Dr. Müller", "JÜRGEN MÜLLER's colleague Dr. Müller"):
        outcome, _ = _truthfulness(f"Your appointment APT-20417 is on 12 May with {said}.")
        assert outcome != "fail", said


def test_a_name_a_source_holds_or_a_record_nobody_names_proves_nothing() -> None:
    # the user's own name is in what the turn saw: a greeting, not the person in charge
    outcome, _ = _truthfulness(
        "Hello Maria Lopez, your appointment APT-20417 is on 12 May.",
        user="I am Maria Lopez. When is APT-20417?",
    )
    assert outcome != "fail"
    # the answer names no record by its id: nothing binds the person it names
    outcome, _ = _truthfulness("Your next appointment is on 12 May with Dr. Anna Schäfer.")
    assert outcome != "fail"
