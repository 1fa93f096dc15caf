"""Extra keys inside nested argument objects follow ``allow_extra_arguments``."""

from __future__ import annotations

from aem.matching import ActualCall, match_tool_calls
from aem.matching.settings import MatchSettings

EXPECTED = [
    {
        "name": "update_flights",
        "arguments": {
            "flights": [
                {"flight_number": "HAT056", "date": "2024-05-25"},
                {"flight_number": "HAT138", "date": "2024-05-25"},
            ]
        },
    }
]


def _actual(second_number: str) -> list[ActualCall]:
    return [
        ActualCall(
            "update_flights",
            {
                "flights": [
                    {"origin": "IAH", "flight_number": second_number, "date": "May 25, 2024"},
                    {"origin": "EWR", "flight_number": "hat056", "date": "2024-05-25"},
                ]
            },
        )
    ]


def test_nested_extra_keys_are_allowed_with_extra_arguments() -> None:
    assert match_tool_calls(EXPECTED, _actual("HAT138")).passed


def test_nested_values_are_still_compared() -> None:
    match = match_tool_calls(EXPECTED, _actual("HAT139"))
    assert not match.passed
    [pair] = match.pairs
    assert pair.argument_mismatches[0].argument == "flights"


def test_strict_settings_reject_nested_extra_keys() -> None:
    strict = MatchSettings(allow_extra_arguments=False)
    assert not match_tool_calls(EXPECTED, _actual("HAT138"), settings=strict).passed
