"""`python -m hudi_core.dashboard.serve [STREAMLIT OPTIONS]`: `streamlit run` on the packaged dashboard, as
`hudi-inspect ui` starts it, with its first page warmed while the browser loads Streamlit's frontend.

A background thread waits for Streamlit's server to listen, then imports the dashboard's modules (pandas, Plotly,
pyarrow and the engine: about 0.45 s of the first script run) and, when `HUDI_INSPECTOR_WARM_TABLE` names a
table, reads it into the dashboard's caches as the Overview asks for it (triage, decoded timeline, facts,
markers, timeline figure). The first page's script run then waits on, or finds, those results instead of
computing them after the browser has connected. Nothing is shown from this thread: an error is left for the
page to report.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time

#: The table the Overview opens on (`hudi-inspect ui TABLE` sets it, resolved as the dashboard resolves it).
WARM_TABLE_ENV = "HUDI_INSPECTOR_WARM_TABLE"
RUNTIME_WAIT_S = 60.0


def _wait_for_server() -> bool:
    """Wait until Streamlit's runtime exists and its server accepts connections (warming earlier would slow
    the start itself: both are Python, on one interpreter lock)."""
    import socket

    from streamlit import config
    from streamlit.runtime import Runtime

    deadline = time.monotonic() + RUNTIME_WAIT_S
    while not Runtime.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    host = str(config.get_option("server.address") or "127.0.0.1")
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    port = int(config.get_option("server.port"))
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.02)
    return False


def warm(table: str | None) -> None:
    """Import the dashboard's modules; then, if `table` is given, compute what the Overview's first run of
    `table` asks of the caches (default engine, no filters)."""
    if not _wait_for_server():  # and caches made before the runtime would not be the runtime's
        return
    # Cached loaders called outside a script run log "missing ScriptRunContext" on this thread: say nothing.
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)
    from hudi_core.dashboard import charts, loaders, picker  # noqa: F401  (the imports are the point)

    if not table:
        return
    engine = "local"
    try:
        heavy = loaders.load_weight(table, engine).heavy
    except Exception:  # the page reports it
        return
    if heavy:  # the first look, and its background decoding started; never the whole decode here
        for first_step in (lambda: loaders.load_triage(table, engine),
                           lambda: loaders.first_look_pending(table, engine)):
            try:
                first_step()
            except Exception:  # the page runs the same call and shows its error
                return
        return
    steps = (
        lambda: loaders.load_triage(table, engine),
        lambda: loaders.ensure_decoded(table, engine),
        lambda: loaders.load_facts(table, engine),
        lambda: loaders.load_instants(table, engine),
        lambda: loaders.load_lanes_and_counts(table, engine),
        lambda: loaders.load_markers(table, engine),
        lambda: loaders.load_timeline(table, engine, (), (), "", ""),
    )
    for step in steps:
        try:
            step()
        except Exception:  # the page runs the same call and shows its error
            return


def main(argv: list[str] | None = None) -> None:
    """Start the warming thread, then Streamlit's own command line: `streamlit run APP ARGV...`."""
    from streamlit.web import cli

    from hudi_core.dashboard import APP
    from hudi_core.io.memory import prefer_system_allocator

    prefer_system_allocator()
    threading.Thread(target=warm, args=(os.environ.get(WARM_TABLE_ENV) or None,), name="hudi-inspector-warm",
                     daemon=True).start()
    cli.main(args=["run", str(APP), *(sys.argv[1:] if argv is None else argv)], prog_name="streamlit")


if __name__ == "__main__":
    main()
