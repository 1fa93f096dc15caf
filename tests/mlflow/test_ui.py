"""MLflow's own traces list, in a real browser: what a user sees of AEM's verdicts.

The conversation of :mod:`tests.mlflow.conversation` (an ``ok`` trace, then one whose t5
fails ``tool_execution`` while t4 and t6 pass it) is written by the sink, then MLflow's UI
is opened in Debian's Chromium, headless, at 1600 px, and its traces table read as a user
reads it: each plain-named column (``aem.label``, each metric) must show the trace's worst
value — ``root_cause`` and ``Fail`` on the failing trace, where a per-turn value under the
plain name once showed ``ok`` and ``Pass``; ``aem.score`` reads 0 on the failing trace and
1 on the other. A screenshot with the ``aem.label`` column in
view is kept beside the test's files.

Skipped, as the HTML report's browser test is, only off CI when no Chromium is installed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from aem.report.browser import chromium_path, headless_chromium
from tests.mlflow.conversation import FAILED_METRIC
from tests.mlflow.kit import MlflowServer

if chromium_path() is None and not os.environ.get("CI"):
    pytest.skip(
        "no Chromium at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True
    )

pytestmark = pytest.mark.slow

TURN_COLUMN = re.compile(r"^t\d+\.(.+)$")
LOAD_MS = 120_000


def _traces_table(base: str, experiment_id: str, shot: Path) -> tuple[list[str], list[list[str]]]:
    """The traces table's column headers and rows, as the page shows them."""
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(f"{base}/#/experiments/{experiment_id}/traces")
        page.wait_for_selector("[role=row] [role=cell]", timeout=LOAD_MS)
        for closing in ("Got it", "Close"):  # a first visit's tip and assistant panel
            button = page.get_by_role("button", name=closing, exact=True)
            if button.count():
                button.first.click()
        header = page.locator("[role=columnheader]", has_text=re.compile(r"^\s*aem\.label\s*$"))
        header.scroll_into_view_if_needed()
        box = header.bounding_box()
        assert box is not None and 0 <= box["x"] < 1600  # in view at 1600 px
        page.screenshot(path=str(shot))
        headers = page.eval_on_selector_all(
            "[role=columnheader]", "els => els.map(e => e.innerText.trim())"
        )
        rows = page.eval_on_selector_all(
            "[role=row]",
            "els => els.map(e => Array.from(e.querySelectorAll('[role=cell]'))"
            ".map(c => c.innerText.trim()))",
        )
    return headers, [r for r in rows if r]


def test_the_traces_list_shows_each_traces_worst(
    written: Any, mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    experiment_id, _, _, _ = written
    shot = tmp_path / "mlflow-traces.png"
    headers, rows = _traces_table(mlflow_server.base, experiment_id, shot)
    assert shot.stat().st_size > 0
    assert len(rows) == 2 and all(len(r) == len(headers) for r in rows)
    cells = [dict(zip(headers, row, strict=True)) for row in rows]
    assert sorted(c["aem.label"] for c in cells) == ["ok", "root_cause"]
    [failing] = [c for c in cells if c["aem.label"] == "root_cause"]
    assert failing[FAILED_METRIC].lower() == "fail"
    # the label's score beside it, a number the table sorts on: 0 on the failing trace
    assert {c["aem.label"]: c["aem.score"] for c in cells} == {"root_cause": "0", "ok": "1"}
    assert "pass" in {failing[h].lower() for h in headers if h.endswith(f".{FAILED_METRIC}")}
    # No plain-named column reads a pass where one of the trace's turns failed it.
    for row in cells:
        for column, value in row.items():
            turn = TURN_COLUMN.match(column)
            if turn and value.lower() == "fail":
                assert row[turn.group(1)].lower() == "fail", (column, row[turn.group(1)])
