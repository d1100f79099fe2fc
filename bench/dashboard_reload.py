"""What a dashboard reload costs, taken apart: the page in Chromium beside the floor of any Streamlit page.

Per page and round, with the table already cached by the server (its first render is done untimed, then the
timed loads follow):

* ``browser_reload_s``: a navigation to the page's URL until its main element is drawn, nothing is labelled
  partial and the script run is over (the method of ``bench.commands``' dashboard pages): a new browser session,
  Streamlit's frontend booted again, every element sent and drawn anew;
* ``rerun_s``: the same page rerun in the loaded session (the ``r`` key: what a user waits for after pressing R or
  changing a widget outside a fragment), until the run's last message has arrived and the browser has drawn
  two frames after it;
* ``script_s``: the server's part of each run: from the run's first message (``new_session``) to its
  ``script_finished``, as received;
* page weight per run: websocket bytes received, messages, elements sent (``new_element`` deltas, by type) and
  elements sent as references to what the browser holds (``ref_hash``), and the largest elements;
* the element count of the drawn page and how many start above the fold (the first 1,000 px);
* with ``--tabs``: each tab opened once (``tab_switches``: a fragment's rerun on the Overview).

The floors, timed the same way in the same run on the same machine: ``trivial`` (a page with one ``st.write``)
and ``one_chart`` (``st.write`` and one small Plotly chart, which loads Plotly's script). The load average is
recorded at each measurement (the VM is shared: seconds under load are 2-5x a quiet machine's).

Run: ``python -m bench.dashboard_reload --table PATH [--table PATH ...] [--rounds 5] [--reruns 5]
[--code-root DIR [--compare-root DIR]]``; writes ``bench/results/dashboard-reload-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.commands import PARTIAL_LABEL, RESULTS_DIR, _env, machine_facts

#: The viewport: the browser tests' width; "above the fold" is the first FOLD_PX of it.
VIEWPORT = {"width": 1500, "height": 1000}
FOLD_PX = 1000

TRIVIAL_APP = 'import streamlit as st\n\nst.write("Hello")\n'
ONE_CHART_APP = ('import plotly.graph_objects as go\nimport streamlit as st\n\nst.write("Hello")\n'
                 'st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])))\n')

_IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
_COMPLETE = ("(label) => !document.querySelector('[data-testid=\"stStatusWidget\"]') && "
             "!document.querySelector('[data-stale=\"true\"]') && !document.body.innerText.includes(label)")
_TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
_ELEMENTS = f"""() => {{
  const all = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stElementContainer]')];
  const main = document.querySelector('[data-testid=stMain]');
  const top0 = main ? main.getBoundingClientRect().top : 0;
  const shown = all.filter(e => e.getBoundingClientRect().height > 0);
  return {{elements: all.length, drawn: shown.length,
          above_fold: shown.filter(e => e.getBoundingClientRect().top - top0 < {FOLD_PX}).length,
          charts: document.querySelectorAll('[data-testid=stMain] .js-plotly-plot').length,
          dataframes: document.querySelectorAll('[data-testid=stMain] [data-testid=stDataFrame]').length}};
}}"""


class WsLog:
    """Every websocket frame the page receives, decoded (Streamlit's ForwardMsg), with its arrival time."""

    def __init__(self) -> None:
        self.frames: list[tuple[float, bytes]] = []
        self.sent: list[float] = []

    def attach(self, page: Any) -> None:
        def on_ws(ws: Any) -> None:
            ws.on("framereceived", lambda payload: self.frames.append(
                (time.perf_counter(), payload if isinstance(payload, bytes) else payload.encode())))
            ws.on("framesent", lambda _payload: self.sent.append(time.perf_counter()))

        page.on("websocket", on_ws)

    def clear(self) -> None:
        self.frames.clear()
        self.sent.clear()

    def finished_since(self, t0: float) -> bool:
        return any(kind == "script_finished" for t, kind, _ in self._kinds() if t >= t0)

    def _kinds(self) -> list[tuple[float, str, Any]]:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        out = []
        for t, payload in list(self.frames):
            msg = ForwardMsg()
            msg.ParseFromString(payload)
            out.append((t, msg.WhichOneof("type") or "", msg))
        return out

    def stats(self, t0: float) -> dict[str, Any]:
        """The last script run's weight and timing (seconds from `t0`)."""
        runs: list[dict[str, Any]] = []
        current: dict[str, Any] | None = None
        for (t, kind, msg), (_, payload) in zip(self._kinds(), list(self.frames), strict=True):
            if kind == "new_session":
                current = {"start": t, "bytes": 0, "messages": 0, "elements": Counter(), "refs": 0, "biggest": []}
                runs.append(current)
            if current is None:
                continue
            current["bytes"] += len(payload)
            current["messages"] += 1
            if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element.WhichOneof("type") or "?"
                current["elements"][element] += 1
                current["biggest"].append((len(payload), element, list(msg.metadata.delta_path)))
            elif kind == "ref_hash":
                current["refs"] += 1
            elif kind == "script_finished":
                current["end"] = t
        done = [r for r in runs if "end" in r]
        if not done:
            return {"error": "no finished script run"}
        r = done[-1]
        biggest = sorted(r["biggest"], reverse=True)[:6]
        return {"script_s": round(r["end"] - r["start"], 3), "finished_at_s": round(r["end"] - t0, 3),
                "first_message_at_s": round(r["start"] - t0, 3), "runs_seen": len(done),
                "ws_bytes": r["bytes"], "ws_messages": r["messages"], "elements_sent": sum(r["elements"].values()),
                "elements_by_type": dict(r["elements"].most_common()), "elements_as_references": r["refs"],
                "largest_elements": [{"bytes": b, "type": e, "delta_path": p} for b, e, p in biggest]}


def _load(page: Any, ws: WsLog, url: str, ready: str) -> dict[str, Any]:
    ws.clear()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(ready, timeout=600_000)
    page.wait_for_function(_COMPLETE, arg=PARTIAL_LABEL, timeout=900_000)
    page.wait_for_function(_IDLE, timeout=600_000)
    drawn = time.perf_counter() - started
    deadline = time.monotonic() + 30
    while not ws.finished_since(started) and time.monotonic() < deadline:
        page.wait_for_timeout(20)
    page.evaluate(_TWO_FRAMES)
    return {"browser_reload_s": round(drawn, 3), **ws.stats(started), "load_avg_1m": load}


def _timed_run(page: Any, ws: WsLog, start: Any, what: str) -> tuple[float, float, float]:
    """Wait until the page is idle, then `start()` a run and wait until its last message has arrived and the
    browser has drawn two frames: (seconds, the run's start on the perf clock, the 1-minute load average)."""
    page.wait_for_function(_IDLE, timeout=600_000)
    page.wait_for_timeout(300)
    ws.clear()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    start()
    deadline = time.monotonic() + 600
    while not ws.finished_since(started):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not finish")
        page.wait_for_timeout(5)
    page.evaluate(_TWO_FRAMES)
    return time.perf_counter() - started, started, load


def _rerun(page: Any, ws: WsLog) -> dict[str, Any]:
    seconds, started, load = _timed_run(page, ws, lambda: page.keyboard.press("r"), "the rerun")
    return {"rerun_s": round(seconds, 3), **ws.stats(started), "load_avg_1m": load}


def _tab_switches(page: Any, ws: WsLog) -> list[dict[str, Any]]:
    """Open each tab of the page in turn, then the first again: a fragment's rerun each (what it sends, how long
    until it is drawn)."""
    out = []
    labels = page.locator("[data-testid=stTab]").all_inner_texts()
    for label in [*labels[1:], labels[0]] if labels else []:
        tab = page.locator("[data-testid=stTab]", has_text=label).first
        seconds, started, load = _timed_run(page, ws, tab.click, "the tab's run")
        out.append({"tab": label, "switch_s": round(seconds, 3), **ws.stats(started), "load_avg_1m": load})
    return out


@contextlib.contextmanager
def _app_server(source: str, env: dict[str, str]) -> Iterator[str]:
    from bench.streamlit_server import streamlit_server

    with tempfile.TemporaryDirectory(prefix="hudi-bench-floor-") as tmp:
        (Path(tmp) / "app.py").write_text(source)
        with streamlit_server(env, root=Path(tmp)) as base:
            yield base


def _summary(samples: list[dict[str, Any]], key: str) -> dict[str, Any]:
    values = [s[key] for s in samples if key in s]
    scripts = [s["script_s"] for s in samples if "script_s" in s]
    return {f"{key}_median": statistics.median(values) if values else None,
            f"{key}_range": [min(values), max(values)] if values else None,
            "script_s_median": statistics.median(scripts) if scripts else None,
            "ws_bytes_median": statistics.median(s["ws_bytes"] for s in samples if "ws_bytes" in s)
            if scripts else None,
            "load_avg_range": [min(s["load_avg_1m"] for s in samples), max(s["load_avg_1m"] for s in samples)]}


def run(tables: list[str], rounds: int, reruns: int, roots: dict[str, Path], page_path: str = "overview",
        ready: str = ".js-plotly-plot", queries: tuple[str, ...] = ("",), tabs: bool = False) -> dict[str, Any]:
    """Alternate the floors and each (code root, table, query) page, `rounds` browser reloads and `reruns` reruns
    each (`queries`: more query parameters of the page, e.g. ``tab=counts``; `tabs`: each tab opened once too)."""
    import shutil

    from playwright.sync_api import sync_playwright

    from bench.streamlit_server import streamlit_server

    browser_path = next((p for p in (os.environ.get("CHROMIUM_PATH", ""), "/usr/bin/chromium") if p and
                         os.path.exists(p)), shutil.which("chromium"))
    if not browser_path:
        raise SystemExit("bench: no Chromium binary")
    targets: dict[str, dict[str, Any]] = {}
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="hudi-bench-reload-"))
        base_env = {**_env(), "HUDI_INSPECTOR_CACHE": tmp}
        targets["floor: trivial page"] = {"url": stack.enter_context(_app_server(TRIVIAL_APP, base_env)) + "/",
                                          "ready": "[data-testid=stMarkdown]"}
        targets["floor: one chart"] = {"url": stack.enter_context(_app_server(ONE_CHART_APP, base_env)) + "/",
                                       "ready": ".js-plotly-plot"}
        for label, root in roots.items():
            env = {**_env(root), "HUDI_INSPECTOR_CACHE": f"{tmp}/{label}",
                   "HUDI_INSPECTOR_ROOTS": ",".join(str(Path(t).parent) for t in tables)}
            base = stack.enter_context(streamlit_server(env, root=root))
            for table in tables:
                for query in queries:
                    name = f"{label}: {Path(table).name} {page_path}" + (f"?{query}" if query else "")
                    targets[name] = {"url": f"{base}/{page_path}?table={urllib.parse.quote(table)}"
                                            + (f"&{query}" if query else ""), "ready": ready}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=browser_path, headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            try:
                pages = {}
                for name, target in targets.items():  # each page once, untimed: the table read, scripts cached
                    page = browser.new_context(viewport=VIEWPORT).new_page()
                    ws = WsLog()
                    ws.attach(page)
                    first = _load(page, ws, target["url"], target["ready"])
                    target.update(first_render=first, loads=[], reruns=[])
                    print(f"bench: {name}: first render {first['browser_reload_s']} s", file=sys.stderr)
                    pages[name] = (page, ws)
                for n in range(rounds):
                    for name, target in targets.items():
                        page, ws = pages[name]
                        sample = _load(page, ws, target["url"], target["ready"])
                        if n == 0:
                            target["drawn_page"] = page.evaluate(_ELEMENTS)
                        target["loads"].append(sample)
                        for _ in range(reruns if n == 0 else 0):
                            target["reruns"].append(_rerun(page, ws))
                        if n == 0 and tabs and not name.startswith("floor"):
                            target["tab_switches"] = _tab_switches(page, ws)
                            page.goto(target["url"], wait_until="domcontentloaded")  # the URL's tab again
                        print(f"bench: {name}: reload {sample['browser_reload_s']} s (script "
                              f"{sample.get('script_s')} s, {sample.get('ws_bytes', 0) / 1024:.0f} KiB, load "
                              f"{sample['load_avg_1m']:.2f}); reruns "
                              f"{[r['rerun_s'] for r in target['reruns']] if n == 0 else '-'}", file=sys.stderr)
            finally:
                browser.close()
    for target in targets.values():
        target["browser_reload"] = _summary(target["loads"], "browser_reload_s")
        target["rerun"] = _summary(target["reruns"], "rerun_s") if target["reruns"] else None
    return targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.dashboard_reload", description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="append", required=True, help="a table whose page is timed (repeatable)")
    parser.add_argument("--page", default="overview", help="the page's URL path (default overview)")
    parser.add_argument("--ready", default=".js-plotly-plot", help="the element that shows the page is drawn")
    parser.add_argument("--query", action="append", default=[],
                        help="more query parameters of the page, e.g. tab=counts (repeatable: one page each)")
    parser.add_argument("--tabs", action="store_true", help="open each tab of the page once too (tab_switches)")
    parser.add_argument("--rounds", type=int, default=5, help="browser reloads per page (default 5)")
    parser.add_argument("--reruns", type=int, default=5, help="reruns in the loaded session per page (default 5)")
    parser.add_argument("--code-root", default=str(Path(__file__).resolve().parent.parent),
                        help="the checkout whose dashboard runs (default this one)")
    parser.add_argument("--compare-root", default="",
                        help="another checkout run alternately (labelled before; --code-root is after)")
    parser.add_argument("--root", action="append", default=[],
                        help="LABEL=DIR: a checkout run alternately with the others under its own label (repeatable; "
                             "replaces --code-root and --compare-root)")
    parser.add_argument("--label", default="", help="a word for the results file name")
    args = parser.parse_args(argv)
    roots = {"after": Path(args.code_root).resolve(), "before": Path(args.compare_root).resolve()} \
        if args.compare_root else {"dashboard": Path(args.code_root).resolve()}
    if args.root:
        roots = {label: Path(path).resolve() for label, _, path in (r.partition("=") for r in args.root)}
    started = dt.datetime.now(dt.UTC)
    doc: dict[str, Any] = {
        "benchmark": "dashboard reload taken apart: browser reload, rerun in the loaded session, server script time, "
                     "page weight; beside the floor of a trivial Streamlit page",
        "started_utc": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_facts(),
        "code_roots": {k: str(v) for k, v in roots.items()}, "viewport": VIEWPORT, "fold_px": FOLD_PX,
        "rounds": args.rounds, "reruns": args.reruns,
        "pages": run(args.table, args.rounds, args.reruns, roots, args.page, args.ready, tuple(args.query or [""]),
                     args.tabs),
    }
    doc["machine"]["load_avg_at_end"] = os.getloadavg()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / (f"dashboard-reload{'-' + args.label if args.label else ''}-"
                         f"{started.strftime('%Y%m%dT%H%M%SZ')}.json")
    out.write_text(json.dumps(doc, indent=1) + "\n")
    for name, target in doc["pages"].items():
        print(f"{name}: reload {target['browser_reload']} rerun {target['rerun']} drawn {target.get('drawn_page')}",
              file=sys.stderr)
    print(out.relative_to(RESULTS_DIR.parent.parent))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
