"""The Streamlit dashboard: the entry script, its pages and the view code they call.

:data:`APP` is the entry script (page config, sidebar, `st.navigation`); the page scripts, one per page named after
its URL path, live in the repository's top-level ``pages/`` beside ``app.py`` (Streamlit's own layout) and are
installed as ``hudi_core/dashboard/pages/`` (``pyproject.toml`` maps them there), so `hudi-inspect ui` serves the
same pages from a wheel. Streamlit 1.67 runs a fresh server's first script run the old "pages directory" way when
the entry script has a ``pages/`` folder beside it: see :func:`hudi_core.dashboard.picker.require_app`.

The view modules render what the engine computes and never parse files. Pure parts (no Streamlit import at
module level): :mod:`.roots` (allowed table roots), :mod:`.recent` (recently opened tables), :mod:`.state`
(URL/query-param encoding), :mod:`.markers` (how the engine's typed markers are worded), :mod:`.frames` (display
rows), :mod:`.scenario_tables` (scenario steps built into the cache), :mod:`.charts` (Plotly figure builders:
data in, figure out). Streamlit-bound parts: :mod:`.loaders` (cached calls of the engine's API), :mod:`.render`
(errors, tables, downloads), :mod:`.picker` (the sidebar), :mod:`.overview`, :mod:`.cleaner`, :mod:`.live` and the
other page views; :mod:`.report` (the postmortem report, also the CLI's `report`).

A face: imports any layer below and the scenario writers. Nothing in this module imports Streamlit: the CLI reads
these paths at start-up.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The entry script `streamlit run` is given.
APP = HERE / "app.py"
#: Installed, the pages sit in the package; in a checkout (an editable install too), beside the root `app.py`.
PAGES_DIR = HERE / "pages" if (HERE / "pages").is_dir() else HERE.parent.parent / "pages"
#: URL path → page script (the URL paths are the dashboard's public links: `/health`, `/cleaner`, …).
PAGE_FILES: dict[str, str] = {
    "overview": "1_overview.py",
    "health": "0_health.py",
    "instant": "2_instant.py",
    "cleaner": "3_cleaner.py",
    "file-groups": "4_file-groups.py",
    "log-blocks": "5_log-blocks.py",
    "scenarios": "6_scenarios.py",
    "sql": "7_sql.py",
    "schema": "8_schema.py",
}


def page_path(url_path: str) -> str:
    """The absolute path of the page script served at `/<url_path>` (what `st.Page`, `st.switch_page` and
    `st.page_link` are given: valid whichever entry script, package or checkout, the server runs)."""
    return str(PAGES_DIR / PAGE_FILES[url_path])
