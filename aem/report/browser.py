"""Headless Chromium for the HTML report's tests, benchmark and screenshots.

Why here: the browser test, ``bench.html`` and ``scripts/screenshots.py`` must start the
browser the same way — Debian's ``chromium`` (Playwright's own browser download cannot
work offline), with background networking off so a closed network does not slow it. Only
the development extra installs Playwright, so it is imported when a browser is started.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """The browser to drive: ``AEM_CHROMIUM`` if set, else Debian's, else None."""
    path = os.environ.get("AEM_CHROMIUM", DEFAULT_CHROMIUM)
    return path if Path(path).exists() else None


@contextmanager
def headless_chromium() -> Iterator[Any]:
    """A Playwright ``Browser`` on the system Chromium, closed on exit."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError(
            f"no Chromium at {DEFAULT_CHROMIUM} (apt-get install chromium, or set AEM_CHROMIUM)"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
