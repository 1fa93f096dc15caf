"""The turn graph's edge labels, measured in a real browser: none overprints another.

Was: at a fan-out (one decision making six calls at once, then a model call reading all
six results) the labels of the edges sat at their edges' midpoints, which a fan-out puts
on one another, and read as a smear. The page of ``aem audit --html`` is opened in
Debian's headless Chromium and every label's box is measured as the browser drew it.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from aem.cli import app
from aem.report.browser import headless_chromium
from tests.agent_kit import (
    GenAIAgent,
    ToolCall,
    ToolSpec,
    message,
    record,
    text_part,
    tool_messages,
)

# How a page is opened is the browser tests' own; their module skips when no Chromium is
# installed off CI, and importing it skips this one alike.
from tests.report.test_html_report_browser import open_report

pytestmark = pytest.mark.slow

CITIES = ("Lisbon", "Porto", "Faro", "Braga", "Coimbra", "Evora")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with headless_chromium() as started:
        yield started


def _fan_out(recording: Any) -> None:
    """One decision asks the weather in six cities at once; the next reads the six results
    and asks six forecasts at once; the last reads those and answers. Every turn of a model
    call feeds every turn of the next (history), so the edges cross at shared midpoints."""
    agent = GenAIAgent(recording, "fan-out-6", "gpt-4o", [ToolSpec("weather", "weather", {})])
    history = [message("user", text_part("Weather in six Portuguese cities, and tomorrow?"))]
    with agent.invoke_agent("weather_agent", root=True):
        for day, text in enumerate(("Six at once.", "Now the forecasts.")):
            calls = [
                ToolCall(f"c{day}{i}", "weather", {"city": c, "day": day}, f'{{"celsius": {i}}}')
                for i, c in enumerate(CITIES)
            ]
            asked = agent.chat(history, text=text, calls=calls)
            for call in calls:
                with agent.execute_tool(call):
                    pass
            history = [*history, asked, *tool_messages(calls)]
        agent.chat(history, text="Warm everywhere, today and tomorrow.")


def _overlap(a: dict[str, float], b: dict[str, float]) -> float:
    """The area two boxes share (0: apart or only touching)."""
    width = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    height = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return max(0.0, width) * max(0.0, height)


def test_the_labels_of_a_fan_out_of_six_edges_do_not_overlap(chromium: Any, tmp_path: Path) -> None:
    traces = record(tmp_path / "fan.jsonl", "fan-6", _fan_out)
    html = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["audit", str(traces), "--no-progress", "--html", str(html)])
    assert result.exit_code in (0, 1), result.output
    opened = open_report(chromium, html)
    page = opened.page
    page.locator("#session-list tr.srow", has_text="fan-out-6").click()
    graph = page.locator("#detail svg.graph")
    graph.wait_for()
    decisions = graph.locator(".edge-decision")
    assert decisions.count() == 2 * len(CITIES)  # two fan-outs: a decision, six calls
    labels = graph.locator("text.elabel")
    # What each label reads (its first text node: a grouped one also holds a tooltip).
    words = [label.evaluate("node => node.firstChild.textContent") for label in labels.all()]
    # Each edge is labelled once: alone, or in one label for a fan-out ("decision ×6").
    labelled = sum(int(w.split(" ×")[1]) if " ×" in w else 1 for w in words)
    assert labelled == graph.locator(".edge").count() > 6 * len(CITIES)
    assert words.count(f"decision ×{len(CITIES)}") == 2
    boxes = [label.bounding_box() for label in labels.all()]
    assert all(box is not None and box["width"] > 0 for box in boxes)
    overprinted = [
        (words[i], words[j], round(area, 1))
        for (i, a), (j, b) in combinations(enumerate(boxes), 2)
        if (area := _overlap(a, b)) > 0.5
    ]
    assert overprinted == []
    svg = graph.bounding_box()
    assert svg is not None
    for box in boxes:  # every label drawn inside the graph, none pushed off it
        assert box is not None
        assert svg["x"] <= box["x"] and box["x"] + box["width"] <= svg["x"] + svg["width"]
        assert svg["y"] <= box["y"] and box["y"] + box["height"] <= svg["y"] + svg["height"]
    graph.screenshot(path=str(tmp_path / "fan-out.png"))
    assert opened.problems == []
