"""HTML report at scale: file size, time to open, time to filter, in headless Chromium.

Synthesises an audit report of N sessions (default 10,000; see ``bench.html.synth``),
renders it with ``aem.report.html`` and opens it from disk in Debian's Chromium through
Playwright. Figures:

* render — Python time to build the page, and the file size;
* open — from navigation start: the first page of the session list drawn (the page's
  inline script, before ``load``), the ``load`` event, and every session unpacked
  (gzip, in the browser) so that any of them opens at once;
* each interaction — time in the page's own handler (``performance.now()`` around a
  dispatched event) and to the next frame (``requestAnimationFrame``), median of runs.

    python -m bench.html.run [--sessions 10000] [--repeat 5] [--keep report.html]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from aem.report.browser import headless_chromium
from aem.report.html import render_report, write_html
from bench.html.synth import synthesize

_MEASURE = (Path(__file__).parent / "measure.js").read_text(encoding="utf-8")
INTERACTIONS = [
    "search",
    "search-clear",
    "metric",
    "label",
    "category",
    "clear",
    "next-page",
    "bar",
]


def _open(browser: Any, url: str) -> tuple[Any, dict[str, float]]:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    started = time.perf_counter()
    page.goto(url, wait_until="load", timeout=120_000)
    page.wait_for_selector("body[data-ready='1']", timeout=120_000)
    wall = (time.perf_counter() - started) * 1000
    marks = page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " const m = (name) => performance.getEntriesByName(name)[0].startTime;"
        " return [m('aem-list'), n.loadEventEnd, m('aem-details')]; }"
    )
    if errors:
        raise RuntimeError(f"the page did not start cleanly: {errors}")
    return page, {
        "list_ms": marks[0],
        "load_ms": marks[1],
        "details_ms": marks[2],
        "ready_wall_ms": wall,
    }


def measure(path: Path, repeat: int) -> dict[str, Any]:
    """Open the page ``repeat`` times (fresh tab each) and time every interaction."""
    opens: list[dict[str, float]] = []
    timings: dict[str, list[tuple[float, float]]] = {k: [] for k in INTERACTIONS}
    with headless_chromium() as browser:
        for run in range(repeat):
            page, opened = _open(browser, path.resolve().as_uri())
            opens.append(opened)
            for kind in INTERACTIONS:
                handler, frame = page.evaluate(_MEASURE, [kind, run])
                timings[kind].append((handler, frame))
            page.close()
    result: dict[str, Any] = {key: statistics.median(o[key] for o in opens) for key in opens[0]}
    for kind, values in timings.items():
        result[f"{kind}_handler_ms"] = statistics.median(v[0] for v in values)
        result[f"{kind}_frame_ms"] = statistics.median(v[1] for v in values)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the page here instead of a temp dir")
    args = parser.parse_args()

    started = time.perf_counter()
    report = synthesize(args.sessions)
    synth_s = time.perf_counter() - started
    started = time.perf_counter()
    page = render_report(report, title=f"AEM report: {args.sessions} synthetic sessions")
    render_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "report.html"
        write_html(page, path)
        size = path.stat().st_size
        json_size = len(report.model_dump_json())
        figures = measure(path, args.repeat)
    turns = sum(len(s.turns) for s in report.sessions)
    print(
        f"sessions {args.sessions:,} · turns {turns:,} · root causes ranked {len(report.ranking)}"
    )
    print(f"synthesise {synth_s:.1f} s · render {render_s:.2f} s")
    print(f"file {size / 1e6:.1f} MB (the JSON report of the same run: {json_size / 1e6:.1f} MB)")
    print(
        f"open (median of {args.repeat}, ms from navigation start): session list drawn "
        f"{figures['list_ms']:.0f} · load event {figures['load_ms']:.0f} · all sessions "
        f"unpacked {figures['details_ms']:.0f} · (goto() to ready, wall "
        f"{figures['ready_wall_ms']:.0f})"
    )
    print(f"{'interaction':<14} {'handler ms':>11} {'to next frame ms':>17}")
    for kind in INTERACTIONS:
        handler, frame = figures[f"{kind}_handler_ms"], figures[f"{kind}_frame_ms"]
        print(f"{kind:<14} {handler:>11.1f} {frame:>17.1f}")


if __name__ == "__main__":
    main()
