"""Regenerate ``docs/img/report-*.png``: the HTML report of the sample traces, in Chromium.

Why a script: the README shows the report, and pictures drawn by hand drift from what the
page really looks like. This audits ``sample_traces/`` with its cases and its taxonomy
(``sample_traces/taxonomy.toml``, as ``make demo`` does, so categories show), renders the
page, and photographs it in headless Chromium: the ranking with the categories and the
metric counts, and the session whose root cause is clicked in the ranking, with its turn
graph and the failing turn's metrics.

Run: ``python scripts/screenshots.py [--out docs/img]`` (needs /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_traces"
TAXONOMY = SAMPLES / "taxonomy.toml"


def audit_samples(html: Path) -> None:
    """``aem audit sample_traces/ --cases … --taxonomy … --html`` through the real
    command line."""
    from typer.testing import CliRunner

    from aem.cli import app

    args = ["audit", str(SAMPLES), "--cases", str(SAMPLES / "cases.jsonl")]
    args += ["--taxonomy", str(TAXONOMY)]
    result = CliRunner().invoke(app, [*args, "--html", str(html), "--summary", "--no-progress"])
    if result.exit_code not in (0, 1):
        raise SystemExit(f"aem audit failed ({result.exit_code}): {result.output}")


def photograph(html: Path, out: Path) -> list[Path]:
    from aem.report.browser import headless_chromium

    written = [out / "report-ranking.png", out / "report-session.png"]
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
        page.goto(html.resolve().as_uri())
        page.wait_for_selector("body[data-ready='1']")
        page.locator("header").evaluate("node => node.scrollIntoView()")
        page.screenshot(
            path=str(written[0]), clip=_clip(page, "header", "#metrics"), full_page=True
        )
        page.locator("#ranking tr.bar").first.click()
        page.locator("#detail:not(.hidden) svg.graph").wait_for()
        page.screenshot(
            path=str(written[1]), clip=_clip(page, "#sessions", "#detail"), full_page=True
        )
    return written


def _clip(page: Any, first: str, last: str) -> dict[str, float]:
    """The page region from the top of ``first`` to the bottom of ``last``, in page
    coordinates (what a full-page screenshot's clip takes, whatever the scroll)."""
    top, bottom = page.evaluate(
        """([first, last]) => {
          const box = (s) => document.querySelector(s).getBoundingClientRect();
          return [box(first).top + window.scrollY, box(last).bottom + window.scrollY];
        }""",
        [first, last],
    )
    return {"x": 0, "y": top, "width": 1280, "height": bottom - top}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "report.html"
        audit_samples(html)
        for path in photograph(html, args.out):
            print(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")


if __name__ == "__main__":
    main()
