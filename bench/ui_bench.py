"""Dashboard benchmark: time to first complete render of the Overview page (Streamlit AppTest).

Generates a synthetic table with 10,000 active instants (plus archived ones) with the scale
generator, then runs `app.py` headless through `AppTest`: once cold (caches empty: open the table,
read and decode the timeline, markers, dry-run boundary, build the figure) and several times warm
(the table cached, as for every rerun and every other session). Also times the pure figure
builder alone and reports the figure's JSON size. Prints one JSON object.

Run: ``python -m bench.ui_bench [--active 10000] [--archived 1000] [--warm 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hudi_core import dashboard
from hudi_core.inspect import TableInspector

APP = dashboard.APP  # the entry script shipped in the package, pages/ beside it


def _render(uri: str) -> tuple[float, Any]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=600)
    at.query_params["table"] = uri
    started = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - started
    if at.exception or at.error:
        raise RuntimeError(f"overview failed: {[e.value for e in at.exception] + [e.value for e in at.error]}")
    return seconds, at


def main(argv: list[str] | None = None) -> None:
    """Generate the table, time cold and warm overview renders, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--active", type=int, default=10_000, help="active instants")
    parser.add_argument("--archived", type=int, default=1_000, help="archived instants")
    parser.add_argument("--warm", type=int, default=3, help="warm runs")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="hudi-ui-bench-") as tmp:
        os.environ["HUDI_INSPECTOR_CACHE"] = str(Path(tmp) / "cache")
        os.environ["HUDI_INSPECTOR_ROOTS"] = tmp
        import streamlit as st

        from hudi_core.dashboard import charts, loaders
        from hudi_core.scenarios.scale import generate_table

        table_dir = Path(tmp) / "t10k"
        started = time.perf_counter()
        report = generate_table(table_dir, "S", layout=2, active_instants=args.active,
                                archived_instants=args.archived, partitions=10, file_groups=1_000, files=10_000)
        generate_seconds = time.perf_counter() - started
        uri = str(table_dir.resolve())

        st.cache_data.clear()
        st.cache_resource.clear()
        cold, at = _render(uri)
        warm = [_render(uri)[0] for _ in range(args.warm)]

        st.cache_data.clear()
        st.cache_resource.clear()
        breakdown: dict[str, float] = {}
        for label, step in (("open_table", lambda: loaders.get_table(uri, "local")),
                            ("facts_and_decode", lambda: loaders.load_facts(uri, "local")),
                            ("instants_unified", lambda: loaders.load_instants(uri, "local")),
                            ("markers_and_dry_run_boundary", lambda: loaders.load_markers(uri, "local")),
                            ("replaced_map", lambda: loaders.load_replaced_map(uri, "local")),
                            ("timeline_figure", lambda: loaders.load_timeline(uri, "local", (), (), "", ""))):
            started = time.perf_counter()
            step()
            breakdown[label] = round(time.perf_counter() - started, 3)

        table = loaders.get_table(uri)
        frame = TableInspector(table).instants(archived=True).to_pandas()
        marks = loaders.load_markers(uri)
        started = time.perf_counter()
        fig = charts.timeline_figure(frame, marks, loaders.load_replaced_map(uri))
        figure_seconds = time.perf_counter() - started
        spec = fig.to_json()
        result = {
            "benchmark": "ui_overview_first_render",
            "table": {"active_instants": report.active_instants, "archived_instants": report.archived_instants,
                      "table_version": report.table_version, "layout": report.layout,
                      "generate_seconds": round(generate_seconds, 2)},
            "instants_charted": len(frame),
            "markers": len(marks),
            "cold_render_seconds": round(cold, 3),
            "cold_breakdown_seconds": breakdown,
            "warm_render_seconds": [round(w, 3) for w in warm],
            "warm_render_median_seconds": round(statistics.median(warm), 3) if warm else None,
            "figure_build_seconds": round(figure_seconds, 3),
            "figure_json_bytes": len(spec),
            "webgl_traces": sum(1 for t in fig.data if t.type == "scattergl"),
            "target_warm_seconds": 2.0,
            "metrics": {m.label: m.value for m in at.metric},
        }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
