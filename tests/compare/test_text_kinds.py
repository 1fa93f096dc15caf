"""Text kinds: values are claims only where the text states facts (one test per kind)."""

from __future__ import annotations

import pytest

from aem.compare.extract import extract_claims, extract_values
from aem.compare.textkinds import is_code_text, non_factual_regions


def _claimed(text: str) -> list[str]:
    return [v.raw for v in extract_claims(text)]


def test_unified_diff_hunks_are_not_claims() -> None:
    text = (
        "I patched the parser:\n"
        "--- a/parser.py\n+++ b/parser.py\n"
        "@@ -462,6 +462,7 @@ def parse(rows):\n"
        "-    limit = 1500\n+    limit = 2500\n"
        "The refund of $120 is now computed."
    )
    assert _claimed(text) == ["$120"]
    assert {"1500", "2500"} <= {v.raw for v in extract_values(text)}  # evidence keeps them


def test_fenced_code_and_a_newly_defined_variable_are_not_claims() -> None:
    text = (
        "Let me count them.\n```python\nnum_clients = 4096\nprint(2024)\n```\n"
        "total_cost = 1250\nThere are 4,096 rows."
    )
    assert _claimed(text) == ["4,096"]


def test_a_code_writing_turn_states_nothing() -> None:
    text = "import pandas as pd\nrows = pd.read_csv('x.csv')\ntotal = 1500\nprint(len(rows))"
    assert is_code_text(text)
    assert _claimed(text) == []


def test_inline_code_is_code_but_a_lone_value_in_backticks_is_a_claim() -> None:
    assert _claimed("Use `df['amount'].sum() * 1200` to get `$1,450`.") == ["$1,450"]


def test_stack_traces_are_not_claims() -> None:
    text = (
        "The call failed:\nTraceback (most recent call last):\n"
        '  File "/srv/app/run.py", line 1042, in main\n    fetch(4431)\n'
        "ValueError: bad id 9981\nSo the balance of $310 stays."
    )
    assert _claimed(text) == ["$310"]


def test_log_lines_and_a_library_warning_printed_into_a_message_are_not_claims() -> None:
    text = (
        "Here is the plan.\n"
        "/usr/local/lib/python3.11/site-packages/autogen_magentic_one/agents/orchestrator.py:216:"
        " UserWarning: Resolved model mismatch: gpt-4o-2024-08-06 != gpt-4o-2024-05-13.\n"
        "  ledger_response = await self._model_client.create(\n"
        "2024-05-02 10:14:03,221 INFO fetched 3150 rows\n"
        "[WARNING] retrying after 4500 ms\n"
        "The school is 1.46 miles away."
    )
    assert _claimed(text) == ["1.46 miles"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("see https://shop.example/o/ORD-77?aw=KW01od0_11662965 for it", "url"),
        ("saved to C:\\exports\\Q3-2041\\report.csv now", "path"),
        ("read data/clients_2041.xlsx first", "path"),
        ("needs version 3.11.2 or v2.4.1", "version"),
        ("sent by Mozilla/5.0 today", "version"),
        ("answered by gpt-4o-2024-08-06 today", "model"),
        ("uses claude-3-5-sonnet-20241022 here", "model"),
        ("it\\u2019s fine", "escape"),
    ],
)
def test_urls_paths_versions_model_names_and_escapes_are_not_claims(text: str, kind: str) -> None:
    assert kind in {r.kind for r in non_factual_regions(text)}
    assert extract_values(text) and extract_claims(text) == []


def test_facts_around_the_kinds_are_still_claims() -> None:
    text = "Refund $1,200.50 for ORD-0042 on 01.03.2026 (see https://x.example/a1), 12 % off."
    assert _claimed(text) == ["$1,200.50", "ORD-0042", "01.03.2026", "12 %"]
