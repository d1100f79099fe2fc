"""Browser test: the Health and Overview pages on a table with a dead writer, in Chromium (screenshots to
`tests/artifacts/writers_*.png`). Skips as `test_browser` does without Playwright or Chromium."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest
from test_browser import (  # noqa: F401
    ARTIFACTS,
    ERROR_SELECTORS,
    _screenshot,
    _wait_for_texts,
    browser_cache,
    browser_path,
    server,
)

from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin

pytestmark = pytest.mark.slow


def test_dead_writer_on_health_and_overview_in_chromium(server: str, browser_path: str,  # noqa: F811
                                                        browser_cache: Path) -> None:  # noqa: F811
    from playwright.sync_api import sync_playwright

    table = build_scenario(load_builtin("writers_dead_writer"), browser_cache / "writers-dead", 9, upto_step=9).path
    quoted = urllib.parse.quote(str(table))
    ARTIFACTS.mkdir(exist_ok=True)
    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_context(viewport={"width": 1500, "height": 2600}).new_page()
            for path, needles, name in (
                    ("health", ["Dead writer holds the table back", "commit 20240101002000000"], "writers_health"),
                    ("", ["Writers", "Dead writer", "Heartbeat every 1 min"], "writers_overview")):
                page.goto(f"{server}/{path}?table={quoted}", wait_until="domcontentloaded")
                page.wait_for_selector('[data-testid="stMain"]', timeout=120_000)
                _wait_for_texts(page, needles, 120_000)
                text = page.locator('[data-testid="stMain"]').inner_text()
                problems += [f"{name}: {n!r} not shown" for n in needles if n not in text]
                for selector in ERROR_SELECTORS:
                    problems += [f"{name}: {e.inner_text()[:300]}" for e in page.locator(selector).all()]
                _screenshot(page, name)
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
    assert (ARTIFACTS / "writers_health.png").stat().st_size > 10_000
