"""Follow live's memory: the dashboard process's RSS while Chromium follows an idle table.

Starts the dashboard (`streamlit run app.py`, as the browser tests do), opens the Overview of TABLE in Chromium
with `?follow=1&interval=S`, and samples the server process's resident memory (`/proc/<pid>/status` VmRSS) and the
watcher's poll count (the page's status line: "N polls") until N polls were made. Prints one JSON object: the RSS
after the first `--warm` polls and at the end, the growth per 100 polls after warm-up, and the samples.

Run: ``python -m bench.live_bench [TABLE] [--polls 1000] [--interval 0.5] [--tabs 1]``; TABLE defaults to the M
benchmark table (layout 1, merge-on-read) `~/.cache/hudi-inspector/bench/M-layout1-mor`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

from bench.streamlit_server import streamlit_server

DEFAULT_TABLE = Path.home() / ".cache" / "hudi-inspector" / "bench" / "M-layout1-mor"
POLLS = re.compile(r"(\d+) polls")


def _server_pid(port: str) -> int:
    """The Streamlit process serving `port` (its command line names the port)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(cmd) and port.encode() in cmd:
            return int(entry.name)
    raise RuntimeError(f"no streamlit process on port {port}")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def measure(table: Path, polls: int, interval: float, tabs: int, warm: int) -> dict[str, Any]:
    """Follow `table` in `tabs` Chromium tabs until the watcher made `polls` polls; RSS samples of the server."""
    from playwright.sync_api import sync_playwright

    env = {**os.environ, "HUDI_INSPECTOR_ROOTS": str(table.parent),
           "HUDI_INSPECTOR_CACHE": tempfile.mkdtemp(prefix="live-bench-cache-")}
    samples: list[dict[str, float]] = []
    started = time.monotonic()
    with open(os.devnull, "w") as log, streamlit_server(env, log) as base, sync_playwright() as pw:
        pid = _server_pid(base.rsplit(":", 1)[1])
        browser = pw.chromium.launch(executable_path=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"),
                                     headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            url = f"{base}/?table={urllib.parse.quote(str(table))}&follow=1&interval={interval:g}"
            pages = []
            for _ in range(tabs):
                page = browser.new_page(viewport={"width": 1500, "height": 1400})
                page.goto(url, wait_until="domcontentloaded")
                pages.append(page)
            main = pages[0].locator('[data-testid="stMain"]')
            count = 0
            while count < polls:
                pages[0].wait_for_timeout(2000)
                found = POLLS.search(main.inner_text()) if main.count() else None
                if found is None:
                    continue
                count = int(found.group(1))
                samples.append({"seconds": round(time.monotonic() - started, 1), "polls": count,
                                "rss_mb": round(_rss_mb(pid), 1)})
        finally:
            browser.close()
    after_warm = next((s for s in samples if s["polls"] >= warm), samples[0])
    last = samples[-1]
    grown = last["rss_mb"] - after_warm["rss_mb"]
    per_100 = grown / max(1, last["polls"] - after_warm["polls"]) * 100
    return {"table": str(table), "interval_s": interval, "tabs": tabs, "polls": last["polls"],
            "seconds": last["seconds"], "rss_mb_after_warm": after_warm["rss_mb"], "warm_polls": after_warm["polls"],
            "rss_mb_end": last["rss_mb"], "rss_mb_max": max(s["rss_mb"] for s in samples),
            "growth_mb_per_100_polls_after_warm": round(per_100, 2), "samples": samples}


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", 1)[0])
    p.add_argument("table", nargs="?", type=Path, default=DEFAULT_TABLE)
    p.add_argument("--polls", type=int, default=1000)
    p.add_argument("--interval", type=float, default=0.5)
    p.add_argument("--tabs", type=int, default=1)
    p.add_argument("--warm", type=int, default=100, help="polls before the reference sample (caches filled)")
    args = p.parse_args()
    print(json.dumps(measure(args.table, args.polls, args.interval, args.tabs, args.warm), indent=1))


if __name__ == "__main__":
    main()
