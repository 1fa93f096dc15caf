"""The HTML report in a real browser: Debian's Chromium, headless, driven by Playwright.

What only a browser shows: that the page's script runs under its own
Content-Security-Policy, that a click on a root cause opens its sessions, that filters
narrow the list, and that hostile trace text (script tags, ``javascript:`` URLs,
attribute breakouts, SVG onload, ``</script>`` inside JSON) never executes — checked
twice: with the policy, and with the policy stripped, so escaping alone is proven too.

Skipped only off CI when no Chromium is installed; on CI (``CI`` set) a missing browser
fails, so a green run always means the browser test ran.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from aem.cli import app
from aem.report.browser import chromium_path, headless_chromium
from aem.report.html import render_report, write_html
from bench.html.synth import synthesize
from tests.apps.test_diff import _fixed  # the same run with the hotel search succeeding
from tests.conftest import SAMPLES

if chromium_path() is None and not os.environ.get("CI"):
    pytest.skip(
        "no Chromium at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True
    )

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with headless_chromium() as started:
        yield started


@dataclass
class Opened:
    """A page and everything it said that a clean page never says."""

    page: Any
    problems: list[str] = field(default_factory=list)


def open_report(browser: Any, path: Path) -> Opened:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    opened = Opened(page)
    page.on("dialog", lambda d: (opened.problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("pageerror", lambda exc: opened.problems.append(f"page error: {exc}"))
    page.on(
        "console",
        lambda msg: (
            opened.problems.append(f"console {msg.type}: {msg.text}")
            if msg.type in ("error", "warning")
            else None
        ),
    )
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return opened


def _audit(*args: str) -> None:
    result = CliRunner().invoke(app, ["audit", *args, "--summary", "--no-progress"])
    assert result.exit_code in (0, 1), result.output


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The page of ``aem audit sample_traces/ --cases … --taxonomy … --html`` (as
    ``make demo`` runs it), and the JSON report of the same run (what the page must agree
    with, however many samples there are)."""
    folder = tmp_path_factory.mktemp("sample")
    html, report = folder / "report.html", folder / "report.json"
    cases, taxonomy = SAMPLES / "cases.jsonl", SAMPLES / "taxonomy.toml"
    _audit(
        str(SAMPLES),
        *("--cases", str(cases), "--taxonomy", str(taxonomy)),
        *("--html", str(html), "--out", str(report)),
    )
    return html, json.loads(report.read_text())


def _failing_sessions(report: dict[str, Any], metric: str) -> list[str]:
    return sorted(
        s["session_id"]
        for s in report["sessions"]
        if any(
            m["name"] == metric and m["outcome"] == "fail" for t in s["turns"] for m in t["metrics"]
        )
    )


def test_sample_report_click_a_root_cause_then_filter(
    browser: Any, sample: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    html, report = sample
    total = len(report["sessions"])
    opened = open_report(browser, html)
    page = opened.page
    assert page.locator("#ranking tr.bar").count() == len(report["ranking"])
    assert page.inner_text("#count") == f"{total} of {total} sessions match"
    page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)

    [ranked] = [r for r in report["ranking"] if r["name"] == "refunds_agent"]
    page.locator("#ranking tr.bar", has_text="refunds_agent").click()
    assert page.inner_text("#count") == f"{ranked['sessions']} of {total} sessions match"
    assert page.locator("#f-sig").is_visible()
    detail = page.locator("#detail")
    detail.locator("h2", has_text="refunds-march").wait_for()
    assert detail.locator("svg.graph .node").count() == 5
    assert detail.locator("svg.graph .node.lab-root_cause").count() == 1
    assert detail.locator("svg.graph .node.lab-prior_action_failed").count() == 4
    # The edges the evaluator built (the report's "edges"), each labelled by its kind; the
    # failure propagated along every one of them here (red, "carries").
    march = next(s for s in report["sessions"] if s["session_id"] == "refunds-march")
    edges = detail.locator("svg.graph .edge")
    assert edges.count() == len(march["edges"]) == 5
    drawn = sorted(
        (e.get_attribute("data-source"), e.get_attribute("data-target"), e.text_content())
        for e in edges.all()
    )
    assert drawn == sorted((e["source"], e["target"], e["kind"]) for e in march["edges"])
    assert detail.locator("svg.graph .edge.carries").count() == 5
    assert "labelled by kind" in detail.locator(".graphbox figcaption").inner_text()
    assert "March 2025" in page.inner_text("#turn-detail")
    detail.screenshot(path=str(tmp_path / "session.png"))

    page.click("#f-clear")
    page.select_option("#f-metric", "tool_execution")
    rows = page.locator("#session-list tr.srow td.sid")
    failing = _failing_sessions(report, "tool_execution")
    assert "trip-planner-7" in failing and len(failing) < total
    assert page.inner_text("#count") == f"{len(failing)} of {total} sessions match"
    assert sorted(rows.all_inner_texts()) == failing
    page.fill("#f-q", "trip")
    assert rows.all_inner_texts() == [f for f in failing if "trip" in f]
    page.screenshot(path=str(tmp_path / "filtered.png"), full_page=True)
    assert all((tmp_path / n).stat().st_size > 20_000 for n in ("overview.png", "session.png"))
    assert opened.problems == []


def test_the_ranking_grouped_by_category_is_visible_and_filters(
    browser: Any, sample: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    html, report = sample
    categories = report["categories"]
    top = categories[0]
    assert top["category"] and sum(c["share"] for c in categories) == pytest.approx(1, abs=1e-3)
    opened = open_report(browser, html)
    page = opened.page
    assert page.locator("#categories").is_visible()
    headline = page.inner_text("#category-headline")
    assert f"{top['share'] * 100:.0f} % of failures fall in one category: {top['category']}" in (
        headline
    )
    rows = page.locator("#categories tr.catrow")
    assert rows.count() == len(categories)
    for row, category in zip(rows.all(), categories, strict=True):
        cells = row.locator("td").all_inner_texts()
        assert cells[0].strip() == (category["category"] or "uncategorised")
        assert (cells[1], cells[2]) == (str(category["root_causes"]), str(category["sessions"]))
        assert row.locator(".sig").all_inner_texts() == category["signatures"]
    page.locator("#categories").screenshot(path=str(tmp_path / "categories.png"))

    rows.first.locator("td").first.click()  # the row, not one of its signatures
    hit = [
        s
        for s in report["sessions"]
        if any(c["category"] == top["category"] for c in s["root_causes"])
    ]
    total = len(report["sessions"])
    assert len(hit) == top["sessions"]
    assert page.inner_text("#count") == f"{len(hit)} of {total} sessions match"
    shown = page.locator("#session-list tr.srow td.sid").all_inner_texts()
    assert sorted(shown) == sorted(s["session_id"] for s in hit)
    assert page.input_value("#f-category") == "=" + top["category"]
    # A signature inside a category opens it as a ranking bar would.
    first_sig = rows.first.locator(".sig").first
    ranked = next(r for r in report["ranking"] if r["signature"] == first_sig.inner_text())
    first_sig.click()
    assert page.locator("#f-sig").is_visible()
    assert ranked["metric"] in page.inner_text("#f-sig-text")
    assert opened.problems == []


def test_a_turn_click_shows_its_metrics_evidence_and_span_ids(
    browser: Any, sample: tuple[Path, dict[str, Any]]
) -> None:
    html, report = sample
    opened = open_report(browser, html)
    page = opened.page
    page.fill("#f-q", "trip-planner")
    page.click("#session-list tr.srow")
    page.locator("#detail h2", has_text="trip-planner-7").wait_for()
    root = page.locator("#detail tr.trow", has_text="root cause")
    assert root.locator("td").nth(2).inner_text() == "get_hotels"
    page.locator("#detail tr.trow").first.click()
    first = page.inner_text("#turn-detail")
    assert first.startswith("turn t1") and "span ids:" in first
    root.click()
    detail = page.locator("#turn-detail")
    assert detail.locator(".metric.o-fail b").first.inner_text() == "tool_execution"
    spans = root.locator("td.mono").inner_text().split()
    assert spans and all(span in detail.inner_text() for span in spans)
    assert detail.locator("table.evidence td.mono").count() >= 1
    page.locator("#detail svg.graph .node").first.click()
    assert page.inner_text("#turn-detail").startswith("turn t1")
    page.fill("#f-q", "")
    page.select_option("#f-label", "root_cause")
    expected = sum(1 for s in report["sessions"] if s["root_causes"])
    assert page.inner_text("#count") == f"{expected} of {len(report['sessions'])} sessions match"
    assert opened.problems == []


def test_ten_thousand_rows_are_paged(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "many.html"
    write_html(render_report(synthesize(120)), path)
    opened = open_report(browser, path)
    page = opened.page
    ids = page.locator("#session-list td.sid")
    assert ids.count() == 50 and page.inner_text("#page") == "page 1 of 3"
    page.click("#next")
    assert ids.first.inner_text() == "session-00050" and page.is_enabled("#prev")
    page.click("#next")
    assert ids.count() == 20 and not page.is_enabled("#next")
    page.fill("#f-q", "session-0011")
    assert ids.all_inner_texts() == [f"session-0011{d}" for d in range(10)]
    assert page.inner_text("#page") == "page 1 of 1"
    ids.nth(3).click()
    page.locator("#detail h2", has_text="session-00113").wait_for()
    assert opened.problems == []


def test_compare_mode_shows_gone_root_causes_and_fixed_sessions(
    browser: Any, tmp_path: Path
) -> None:
    broken = (SAMPLES / "parallel_tools.otlp.jsonl").read_text()
    for name, text in (("before", broken), ("after", _fixed(broken))):
        (tmp_path / f"{name}.jsonl").write_text(text)
        _audit(str(tmp_path / f"{name}.jsonl"), "--out", str(tmp_path / f"{name}.json"))
    out = tmp_path / "compare.html"
    result = CliRunner().invoke(
        app,
        ["diff", str(tmp_path / "before.json"), str(tmp_path / "after.json"), "--html", str(out)],
    )
    assert result.exit_code == 0, result.output
    ranked = {
        name: {
            r["signature"] for r in json.loads((tmp_path / f"{name}.json").read_text())["ranking"]
        }
        for name in ("before", "after")
    }
    gone = ranked["before"] - ranked["after"]
    assert "tool_execution|tool_call|get_hotels|-" in gone
    opened = open_report(browser, out)
    page = opened.page
    assert f"{len(gone)} gone" in page.inner_text("#compare-summary")
    assert page.locator("#ranking tr.bar.st-gone").count() == len(gone)
    page.select_option("#f-status", "fixed")
    assert page.locator("#session-list td.sid").all_inner_texts() == ["trip-planner-7"]
    page.locator("#ranking tr.bar", has_text="get_hotels").first.click()
    detail = page.locator("#detail")
    detail.locator("button.tab.active", has_text="earlier run").wait_for()
    assert detail.locator("svg.graph .node.lab-root_cause").count() == 1
    detail.locator("button.tab", has_text="later run").click()
    detail.locator("button.tab.active", has_text="later run").wait_for()
    assert detail.locator("svg.graph .node.lab-root_cause").count() == 0
    assert opened.problems == []


# ---- the XSS corpus ---------------------------------------------------------------------

SID = 'weather"><svg onload=alert(1)></script><script>alert(2)</script>'
REPLACE = {
    "weather-genai": SID,  # session id
    "get_weather": "get_weather<img src=x onerror=alert(3)>",  # tool name, span name
    "weather_agent": "agent' onmouseover='alert(4)' x='",  # agent: turn names
    "rainy, 14C in Paris": '<iframe src="javascript:alert(5)"></iframe>rainy',  # tool result
    "chat gpt-4o": "chat <script>alert(6)</script>",  # span name
}
ARGUMENT = "</script><script>alert(7)</script>\u2028\u2029<!--"  # quoted by argument_validity
ERROR = 'javascript:alert(8)//<a href="javascript:alert(9)">x</a>'  # quoted by tool_execution
KEY_POINT = "{{7*7}} ${alert(10)} <svg/onload=alert(11)>"  # quoted by completeness


def _poison(value: Any) -> Any:
    """Put the corpus into every string of a span, JSON held in strings included."""
    if isinstance(value, str):
        if value[:1] in "[{":
            try:
                return json.dumps(_poison(json.loads(value)))
            except ValueError:
                pass
        for old, new in REPLACE.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        if value.get("a") == 2 and "b" in value:  # the add tool's arguments
            value = {**value, "a": ARGUMENT}
        return {key: _poison(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_poison(item) for item in value]
    return value


def _make_tool_fail(span: dict[str, Any]) -> None:
    span["status"] = {"code": 2, "message": ERROR}
    attributes = [
        {"key": "exception.type", "value": {"stringValue": "E<script>alert(12)</script>"}},
        {"key": "exception.message", "value": {"stringValue": ERROR}},
    ]
    span["events"] = [
        {"name": "exception", "timeUnixNano": span["endTimeUnixNano"], "attributes": attributes}
    ]


def xss_corpus(folder: Path) -> tuple[Path, Path]:
    """OTLP JSON traces and a cases file whose explanations will quote the corpus."""
    lines = []
    for line in (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines():
        document = json.loads(line)
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["name"] = _poison(span["name"])
            span["attributes"] = _poison(span["attributes"])
            if span["name"] == "execute_tool add":
                _make_tool_fail(span)
        lines.append(json.dumps(document))
    bad = json.loads(lines[0])  # an input problem whose message quotes a bad trace id
    bad["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "<script>alert(13)</script>"
    lines.append(json.dumps(bad))
    traces, cases = folder / "xss.otlp.jsonl", folder / "cases.jsonl"
    traces.write_text("\n".join(lines) + "\n")
    case = {
        "session_id": SID,
        "key_points": [KEY_POINT],
        "expected_tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "add", "arguments": {"a": 2, "b": 3}},
        ],
        "facts": {"city": "<img src=x onerror=alert(14)>"},
    }
    cases.write_text(json.dumps(case) + "\n")
    return traces, cases


def _exercise(page: Any) -> str:
    """Render everything the page can render: every bar, session, turn and filter."""
    for index in range(page.locator("#ranking tr.bar").count()):
        page.locator("#ranking tr.bar").nth(index).click()
        page.locator("#detail:not(.hidden)").wait_for()
    page.click("#f-clear")
    page.click("#session-list tr.srow")
    shown = []
    for index in range(page.locator("#detail tr.trow").count()):
        page.locator("#detail tr.trow").nth(index).click()
        page.locator("#detail svg.graph .node").nth(index).hover()
        shown.append(page.inner_text("#turn-detail"))
    page.locator("#input-issues summary").click()
    page.fill("#f-q", SID)
    assert page.inner_text("#count") == "1 of 1 sessions match"
    return "\n".join([*shown, page.inner_text("body")])


def _hostile_markup(page: Any) -> list[str]:
    """Elements or attributes that only the corpus could have put in the DOM."""
    return page.evaluate(
        """() => {
          const found = [];
          for (const node of document.querySelectorAll("*")) {
            for (const attr of node.attributes) {
              const hostile = /^on/i.test(attr.name) || /javascript:/i.test(attr.value);
              if (hostile) found.push(node.outerHTML);
            }
          }
          const foreign = "img, iframe, a, object, embed, foreignObject";
          for (const node of document.querySelectorAll(foreign)) found.push(node.outerHTML);
          if (document.scripts.length !== 3) found.push("scripts: " + document.scripts.length);
          return found;
        }"""
    )


@pytest.mark.parametrize("policy", ["with CSP", "CSP stripped"])
def test_xss_corpus_never_executes(browser: Any, tmp_path: Path, policy: str) -> None:
    traces, cases = xss_corpus(tmp_path)
    out = tmp_path / "xss.html"
    _audit(str(traces), "--cases", str(cases), "--html", str(out))
    if policy == "CSP stripped":  # escaping alone must hold: no policy to fall back on
        text, count = re.subn(
            r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", out.read_text()
        )
        assert count == 1
        out.write_text(text)
    opened = open_report(browser, out)
    shown = _exercise(opened.page)
    assert opened.problems == []
    assert _hostile_markup(opened.page) == []
    # The corpus is shown as text, whole: escaped, not dropped.
    for literal in (SID, "get_weather<img src=x onerror=alert(3)>", ERROR, KEY_POINT[:22]):
        assert literal in shown
    assert "{{7*7}} ${alert(10)}" in shown  # left as text by Jinja2 and by the page
    assert "alert(7)</script>" in shown and "alert(13)" in shown
