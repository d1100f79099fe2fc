"""The Streamlit dashboard, shipped inside the package (`pip install .` installs it with the engine).

:data:`APP` is the entry script (page config, sidebar, `st.navigation`); ``pages/`` holds one script per
page, named after the page's URL path (Streamlit 1.67 runs a fresh server's first script run the old
"pages directory" way when the entry script has a ``pages/`` folder beside it: see
:func:`hudi_core.ui.picker.require_app`). `hudi-inspect ui` runs :data:`APP` with Streamlit; a checkout's
root ``app.py`` (``streamlit run app.py``, ``make run``) calls :func:`hudi_core.dashboard.app.main`.

Nothing here imports Streamlit: the CLI reads these paths at start-up.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The entry script `streamlit run` is given.
APP = HERE / "app.py"
PAGES_DIR = HERE / "pages"
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
