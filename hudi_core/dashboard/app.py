"""Hudi Timeline Inspector dashboard: the entry script (`hudi-inspect ui`, or `streamlit run app.py` in a
checkout, whose root `app.py` calls :func:`main`).

It draws the sidebar (table picker, engine) and routes to the pages with `st.navigation`.
Pages render what `hudi_core` computes; they never parse files themselves.
"""

from __future__ import annotations

import streamlit as st
from streamlit import config as st_config


def main() -> None:
    # Imported here, not above: a worker process the engine spawns (`spawn`) imports this script again as
    # __mp_main__, and the dashboard's modules (their cached loaders among them) are not its business.
    from hudi_core.dashboard import page_path, picker
    from hudi_core.dashboard.memory import release_freed_memory
    from hudi_core.io.memory import prefer_system_allocator

    prefer_system_allocator()  # for `streamlit run app.py`: effective while pyarrow is not imported yet

    # Streamlit collects every generation of garbage after each script run (`runner.postScriptGC`): with a big
    # table's timeline in the caches (millions of objects) that was seconds per run, holding the GIL, so every
    # rerun, each progress poll of a first look and the background decoding waited on it (the M
    # table's archive took 72 s to read behind twice-a-second polls, 3 s without). Reference counting frees
    # what the runs drop; cycles are left to Python's own collector.
    st_config.set_option("runner.postScriptGC", False)
    st.set_page_config(page_title="Hudi Timeline Inspector", page_icon=":material/timeline:", layout="wide")

    # Page scripts by absolute path: the same pages whether the entry script is this file or a checkout's app.py.
    overview = st.Page(page_path("overview"), title="Overview", icon=":material/timeline:", url_path="overview")
    health = st.Page(page_path("health"), title="Health", icon=":material/health_and_safety:", url_path="health")

    def landing() -> None:
        """The root URL: a table whose verdict says readers fail or data is exposed opens on the Health page, any
        other on the Overview. Streamlit serves its default page only at the root (its own path answers "Page not
        found"), so the default is this hidden page and every visible page keeps a URL that can be pasted."""
        picker.carry_refusal()
        st.switch_page(health if picker.table_has_errors() else overview,
                       query_params=dict(st.query_params.to_dict()))

    pages = [
        st.Page(landing, title="Hudi Timeline Inspector", url_path="start", default=True, visibility="hidden"),
        overview,
        health,
        st.Page(page_path("instant"), title="Instant detail", icon=":material/search:", url_path="instant"),
        st.Page(page_path("cleaner"), title="Cleaner & archival", icon=":material/cleaning_services:",
                url_path="cleaner"),
        st.Page(page_path("file-groups"), title="File groups", icon=":material/folder_open:",
                url_path="file-groups"),
        st.Page(page_path("log-blocks"), title="Log blocks", icon=":material/view_module:", url_path="log-blocks"),
        st.Page(page_path("scenarios"), title="Scenarios", icon=":material/science:", url_path="scenarios"),
        st.Page(page_path("sql"), title="SQL", icon=":material/terminal:", url_path="sql"),
        st.Page(page_path("schema"), title="Schema", icon=":material/schema:", url_path="schema"),
    ]
    page = st.navigation(pages)
    picker.sidebar()
    try:
        page.run()
    finally:  # also after st.stop(); at most twice a minute (a big table's frames and figures free 100s of MB)
        release_freed_memory()


if __name__ == "__main__":  # Streamlit runs the entry script as __main__ (and `require_app` re-runs it so)
    main()
