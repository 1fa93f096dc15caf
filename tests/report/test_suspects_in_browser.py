"""The answer that told the user an unsupported value reads `suspect` in a real browser.

The page of ``aem audit --html`` opened in Debian's headless Chromium: the session's
first look lands on the answer turn, whose graph node and table row carry the suspect
label; the reasoning turn whose guess never reached the user stays `ok` (a doubt).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from aem.cli import app
from aem.report.browser import headless_chromium
from tests.agent_kit import record

# How a page is opened is the browser tests' own; their module skips when no Chromium is
# installed off CI, and importing it skips this one alike.
from tests.report.test_html_report_browser import open_report
from tests.report.test_suspects_reach_the_user import _agent

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with headless_chromium() as started:
        yield started


def test_the_answer_turn_reads_suspect_and_the_reasoning_doubt_ok(
    chromium: Any, tmp_path: Path
) -> None:
    traces = record(
        tmp_path / "told.jsonl",
        "told-1",
        _agent("told-1", guess=True, extra=" Your return label number is 88123."),
    )
    html = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["audit", str(traces), "--no-progress", "--html", str(html)])
    assert result.exit_code == 0, result.output
    opened = open_report(chromium, html)
    page = opened.page
    page.locator("#session-list tr.srow", has_text="told-1").click()
    detail = page.locator("#detail")
    detail.locator("h2", has_text="told-1").wait_for()
    answer = detail.locator("tr.trow", has_text="answer")
    assert answer.count() == 1
    assert "lab-row-suspect" in (answer.get_attribute("class") or "")
    assert detail.locator("svg.graph .node.lab-suspect").count() == 1
    assert detail.locator("svg.graph .node.lab-root_cause").count() == 0
    reasoning = detail.locator("tr.trow", has_text="reasoning")
    assert "lab-row-ok" in (reasoning.get_attribute("class") or "")
    # The first look opens the flagged turn: the answer's doubt is what the page shows.
    assert "88123" in page.inner_text("#turn-detail")
    assert opened.problems == []
