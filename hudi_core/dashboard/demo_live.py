"""`python -m hudi_core.dashboard.demo_live` (`make demo`): a writer plays the HUDI-7779 scenario into a new folder
while the dashboard follows it live (docs/dashboard.md, "Presenting the guards live").

Two processes, as in production: the dashboard (`hudi-inspect ui ROOT`, ROOT a new folder under the inspector's
cache, `demo-live/<time>`) and, `--start-delay` seconds after its URL is printed, the writer (`hudi-inspect scenario
play NAME ROOT/NAME-v9 --interval S`). The URL opens the Overview on the table with "Follow live" on: the page
waits for the table, then shows each step arrive. `--guard off` plays the scenario with its archival without the
HUDI-7779 guard (a scenario file beside the table: the archive steps' `savepoint_guard: false`, as releases before
the guard archive) and the URL plans the alerts' archival without the guard too, so the exposure alert appears
the moment the next archival would expose the replaced file group, and the exposure when the archival happens.

Ctrl-C stops both (each child stops on its own SIGINT; this process waits for them, then terminates what is
left); so does SIGTERM to this process. Nothing here imports Streamlit.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

#: The demo's scenario: savepoint on t3, t4 replaces t3's file group, the savepoint removed, then archival.
DEMO_SCENARIO = "hudi7779_case_b"
DEFAULT_INTERVAL_S = 5.0
DEFAULT_START_DELAY_S = 10.0
#: Seconds between two looks of the dashboard at the table (`?interval=`).
FOLLOW_INTERVAL_S = 1.0
#: Seconds the dashboard has to start (`hudi-inspect ui` gives Streamlit 60).
UI_START_S = 90.0
STOP_TIMEOUT_S = 15.0


def demo_root(now: dt.datetime | None = None) -> Path:
    """A new folder for one demo: `<cache>/demo-live/<UTC time>`."""
    from hudi_core.formats.timeline.index_paths import cache_dir

    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%d-%H%M%S")
    root = cache_dir() / "demo-live" / stamp
    n = 1
    while root.exists():
        n += 1
        root = root.with_name(f"{stamp}-{n}")
    return root


def scenario_without_guard(name: str, out: Path) -> Path:
    """Write built-in scenario `name` with every archive step's `savepoint_guard` false to `out` (a scenario file
    `scenario play` accepts); returns `out`."""
    from hudi_core.scenarios.builtin import BUILTIN_DIR

    raw = json.loads((BUILTIN_DIR / f"{name}.json").read_text(encoding="utf-8"))
    for step in raw["steps"]:
        if step.get("op") == "archive":
            step["savepoint_guard"] = False
    raw["title"] = f"{raw.get('title', name)} (archival without the HUDI-7779 guard)"
    out.write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return out


def follow_url(host: str, port: int, table: Path, guard: bool, interval_s: float = FOLLOW_INTERVAL_S) -> str:
    """The Overview on `table` with "Follow live" on (and the alerts' guard off when `guard` is off)."""
    from hudi_core.cli.ui import browse_host

    url = (f"http://{browse_host(host)}:{port}/?table={quote(str(table), safe='/:')}&follow=1"
           f"&interval={interval_s:g}")
    return url + ("" if guard else "&guard=off")


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "hudi_core", *args]


def run(args: argparse.Namespace) -> int:
    """Start the dashboard, print the URL, start the writer after the delay, and wait for Ctrl-C."""
    guard = args.guard == "on"
    root = Path(args.out) if args.out else demo_root()
    root.mkdir(parents=True, exist_ok=False)
    table = root / f"{args.scenario}-v{args.table_version}"
    scenario = args.scenario if guard else str(scenario_without_guard(args.scenario, root / (
        f"{args.scenario}-without-guard.json")))
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    children: list[subprocess.Popen[Any]] = []  # the ui's output read as text, the writer's not
    try:
        ui = subprocess.Popen(_command("ui", str(root), "--port", str(args.port), "--host", args.host),
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        children.append(ui)
        ready = threading.Event()
        threading.Thread(target=_relay, args=(ui, ready), daemon=True).start()
        deadline = time.monotonic() + UI_START_S
        while not (ready.is_set() or stop.is_set() or ui.poll() is not None or time.monotonic() > deadline):
            time.sleep(0.1)
        if not ready.is_set():
            if not stop.is_set():
                print("demo: the dashboard did not start (see its message above)", file=sys.stderr, flush=True)
            return 0 if stop.is_set() else 1
        url = follow_url(args.host, args.port, table, guard)
        print(f"\ndemo: open {url}\n"
              f"demo: the writer plays {args.scenario} into {table}, one step every {args.interval:g} s, archival "
              f"{'with' if guard else 'WITHOUT'} the HUDI-7779 guard; it starts in {args.start_delay:g} s. Ctrl-C "
              "stops both.\n", flush=True)
        if stop.wait(args.start_delay):
            return 0
        writer = subprocess.Popen(_command("scenario", "play", scenario, str(table), "--interval", f"{args.interval:g}",
                                           "--table-version", str(args.table_version)), stdin=subprocess.DEVNULL)
        children.append(writer)
        announced = False
        while not stop.is_set() and ui.poll() is None:
            if not announced and writer.poll() is not None:
                announced = True
                print(f"demo: the writer is done (exit {writer.returncode}); the dashboard keeps following the table."
                      " Ctrl-C stops it.", flush=True)
            stop.wait(0.2)
        return 0 if stop.is_set() else 1
    finally:
        _stop(children)
        for s, handler in previous.items():
            signal.signal(s, handler)
        print(f"demo: stopped; the table stays in {table}", file=sys.stderr, flush=True)


def _relay(proc: subprocess.Popen[str], ready: threading.Event) -> None:
    """Pass the dashboard's lines on; its "dashboard on <URL>" line (a URL without "Follow live") means it is up."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if "dashboard on" in line:
            ready.set()
            continue  # the demo prints its own URL
        print(line, end="", flush=True)


def _stop(children: list[subprocess.Popen[str]]) -> None:
    """Each child had Ctrl-C too (the terminal signals the whole group) and is stopping: SIGINT again (a SIGTERM to
    this process reaches none of them), give it time, then SIGTERM and kill as `ui` stops Streamlit."""
    from hudi_core.cli.ui import _stop as terminate

    deadline = time.monotonic() + STOP_TIMEOUT_S
    for proc in children:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in children:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            terminate(proc)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run the demo."""
    p = argparse.ArgumentParser(prog="python -m hudi_core.dashboard.demo_live", description=(__doc__ or "").split(
        "\n\n", 1)[0])
    p.add_argument("--scenario", default=DEMO_SCENARIO, help=f"built-in scenario to play (default {DEMO_SCENARIO})")
    p.add_argument("--table-version", type=int, default=9, choices=[6, 8, 9])
    p.add_argument("--interval", type=float, default=DEFAULT_INTERVAL_S, metavar="S",
                   help=f"seconds between two steps of the writer (default {DEFAULT_INTERVAL_S:g})")
    p.add_argument("--guard", choices=["on", "off"], default="on",
                   help="off: the writer archives without the HUDI-7779 guard and the alerts plan without it")
    p.add_argument("--start-delay", type=float, default=DEFAULT_START_DELAY_S, metavar="S",
                   help=f"seconds between the URL and the writer's start (default {DEFAULT_START_DELAY_S:g})")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--out", help="the demo's folder (new; default <cache>/demo-live/<time>)")
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
