"""The ranking grouped by category and the turn graph's edges, in every view of a run.

One ``aem audit`` of the samples with their taxonomy (as ``make demo`` runs it) writes the
terminal view, the JSON report and the HTML page; all three must tell the same story:
which categories the failures fall in, with what share, and along which edges of the turn
graph each inherited failure travelled.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from typer.testing import CliRunner

from aem.cli import app
from aem.foundation.model import AuditReport
from aem.report.html import render_report
from tests.conftest import SAMPLES

pytestmark = pytest.mark.slow

GRAPH_KINDS = {
    "decision",
    "tool_result",
    "history",
    "argument_reuse",
    "delegation",
    "subagent_result",
    "retrieval",
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any], str]:
    """(terminal output, JSON report, HTML page) of one audit of the samples."""
    folder = tmp_path_factory.mktemp("demo")
    out, page = folder / "report.json", folder / "report.html"
    result = CliRunner().invoke(
        app,
        [
            "audit",
            str(SAMPLES),
            *("--cases", str(SAMPLES / "cases.jsonl")),
            *("--taxonomy", str(SAMPLES / "taxonomy.toml")),
            *("--out", str(out), "--html", str(page), "--no-progress"),
        ],
    )
    assert result.exit_code == 1, result.output  # the samples have root causes
    return result.stdout, json.loads(out.read_text()), page.read_text()


def _page_data(page: str) -> dict[str, Any]:
    raw = re.search(r'<script type="application/json" id="aem-data">(.*?)</script>', page, re.S)
    assert raw
    data: dict[str, Any] = json.loads(raw.group(1))
    return data


def _page_sessions(page: str) -> dict[str, dict[str, Any]]:
    raw = re.search(r'id="aem-sessions">(.*?)</script>', page, re.S)
    assert raw
    lines = gzip.decompress(base64.b64decode(raw.group(1))).decode().splitlines()
    return {s["session"]["session_id"]: s["session"] for s in map(json.loads, lines)}


def test_categories_group_the_ranking_with_shares_of_all_failures(
    run: tuple[str, dict[str, Any], str],
) -> None:
    _, report, _ = run
    categories = report["categories"]
    causes = [(s["session_id"], c) for s in report["sessions"] for c in s["root_causes"]]
    assert sum(c["root_causes"] for c in categories) == len(causes)
    assert sum(c["share"] for c in categories) == pytest.approx(1.0, abs=1e-3)
    for category in categories:
        mine = [(sid, c) for sid, c in causes if c["category"] == category["category"]]
        assert category["root_causes"] == len(mine)
        assert category["share"] == round(len(mine) / len(causes), 4)
        assert category["sessions"] == len({sid for sid, _ in mine})
        in_ranking = [
            r["signature"] for r in report["ranking"] if r["category"] == category["category"]
        ]
        assert category["signatures"] == in_ranking
    # Largest first; every ranked signature is in exactly one category.
    assert [c["root_causes"] for c in categories] == sorted(
        (c["root_causes"] for c in categories), reverse=True
    )
    grouped = [sig for c in categories for sig in c["signatures"]]
    assert sorted(grouped) == sorted(r["signature"] for r in report["ranking"])
    assert categories[0]["category"] == "unsupported facts"  # the samples' own taxonomy


def test_the_terminal_and_the_page_show_the_same_categories(
    run: tuple[str, dict[str, Any], str],
) -> None:
    terminal, report, page = run
    top = report["categories"][0]
    assert f"{top['share']:.0%} of failures fall in one category: {top['category']}" in terminal
    for category in report["categories"]:
        row = f"{category['root_causes']} │ {category['sessions']:>8} │"
        assert any(category["category"] in line and row in line for line in terminal.splitlines())
    headline = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page.split('id="category-headline">')[1]))
    assert headline.strip().startswith(
        f"{top['share'] * 100:.0f} % of failures fall in one category: {top['category']}"
    )
    rows = re.findall(r'<tr class="catrow" data-category="=([^"]*)"', page)
    assert rows == [c["category"] or "" for c in report["categories"]]


def test_a_report_written_without_categories_still_shows_them() -> None:
    """``aem report old.json``: a report from before the key existed gets them computed."""
    report = json.loads(
        (Path(__file__).parents[1] / "golden" / "sample_traces.report.json").read_text()
    )
    expected = report.pop("categories")
    page = render_report(AuditReport.model_validate(report))
    assert page.count('<tr class="catrow"') == len(expected) == 1  # uncategorised, no taxonomy
    assert "No category: add" in page


def test_edges_are_the_turn_graph_inherited_failures_travel_along(
    run: tuple[str, dict[str, Any], str],
) -> None:
    _, report, page = run
    on_page = _page_sessions(page)
    inherited = 0
    for session in report["sessions"]:
        order = {t["turn_id"]: i for i, t in enumerate(session["turns"])}
        graph = nx.DiGraph()
        graph.add_nodes_from(order)
        for edge in session["edges"]:
            assert edge["kind"] in GRAPH_KINDS
            assert order[edge["source"]] < order[edge["target"]]  # earlier to later
            graph.add_edge(edge["source"], edge["target"])
        assert session["edges"] == sorted(
            session["edges"], key=lambda e: (order[e["source"]], order[e["target"]])
        )
        for turn in session["turns"]:
            for origin in turn["inherited_from"]:
                assert nx.has_path(graph, origin, turn["turn_id"]), (session["session_id"], turn)
                inherited += 1
        # The page draws exactly these edges (none when a session has none).
        assert on_page[session["session_id"]].get("edges", []) == session["edges"]
    assert inherited >= 4 and any(s["edges"] for s in report["sessions"])
    assert "inferred" not in page and "turn order (next)" not in page
    assert _page_data(page)["mode"] == "report"
