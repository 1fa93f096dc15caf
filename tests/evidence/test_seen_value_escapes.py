"""JSON string escapes are decoded before values are read from what a turn saw.

Python's ``json.dumps`` writes Cyrillic as ``\\uXXXX`` escapes; "435" read out of
``\\u0435`` (the letter "е") made an invented "435 рублей" supported.
"""

from __future__ import annotations

import json

from aem.compare.extract import extract_claims
from aem.compare.settings import CompareSettings
from aem.evidence import SeenValues, judge_value
from aem.evidence.values import plain_text

SETTINGS = CompareSettings()
ANSWER = "Цена билета — 435 рублей."


def _status(*seen: str | tuple[str, str]) -> str:
    values = extract_claims(ANSWER, SETTINGS)
    (value,) = [v for v in values if v.raw.startswith("435")]
    evidence = SeenValues.gather(seen, SETTINGS)
    return judge_value(value, evidence, SETTINGS, text=ANSWER, own=values).status


def test_an_escaped_letter_is_no_number() -> None:
    escaped = json.dumps({"note": "цена не указана"})
    assert "\\u0435" in escaped
    assert _status(("t1 get_price result", escaped)) == "unverified"
    assert 435.0 not in SeenValues.gather([escaped], SETTINGS).numbers
    assert _status(("t1 get_price result", '{"price": 435}')) == "supported"


def test_escapes_inside_a_json_string_holding_json_are_decoded_too() -> None:
    """A tool result inside a message history escapes its escapes once more."""
    inner = json.dumps({"note": "цена не указана"})
    history = json.dumps([{"role": "tool", "content": inner}])
    assert "\\\\u0435" in history
    assert _status(("its input", history)) == "unverified"
    assert "цена не указана" in SeenValues.gather([history], SETTINGS).text


def test_decoded_text_keeps_what_json_structure_says() -> None:
    """Key paths and list lengths still come from the JSON as written."""
    result = json.dumps({"flights": [{"city": "Москва", "price": 105}, {"price": 190}]})
    seen = SeenValues.gather([("t1 search result", result)], SETTINGS)
    assert "москва" in seen.text
    assert [q.key for q in seen.quantities if q.key] == ["flights.#1.price", "flights.#0.price"]
    assert [c.value for c in seen.counts] == [2.0]


def test_a_newline_escape_no_longer_glues_a_date_to_a_letter() -> None:
    seen = SeenValues.gather([json.dumps({"note": "Departure:\n2024-05-25"})], SETTINGS)
    assert any(first.isoformat() == "2024-05-25" for first, _, _ in seen.dates)


def test_texts_that_are_not_json_keep_their_other_backslashes() -> None:
    assert plain_text("no escapes at all") == "no escapes at all"
    assert plain_text(r"\frac{1}{2} costs \u20ac5") == r"\frac{1}{2} costs €5"
    assert plain_text(r"a half surrogate \ud83d stays") == r"a half surrogate \ud83d stays"
    assert plain_text(r"\ud83d\ude00 is one character") == "😀 is one character"
    assert plain_text('{"broken": "json \\u0435') == '{"broken": "json е'
