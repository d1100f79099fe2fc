"""Hudi Timeline Inspector dashboard: the entrypoint (`streamlit run app.py`).

It draws the sidebar (table picker, engine) and routes to the pages with `st.navigation`.
Pages render what `hudi_core` computes; they never parse files themselves.
"""

from __future__ import annotations

import streamlit as st

from hudi_core.ui import picker

st.set_page_config(page_title="Hudi Timeline Inspector", page_icon=":material/timeline:", layout="wide")

# Issue 15: a table with problems opens on the Health page (an error among the doctor's cheap checks);
# any other table on the Overview. Pages are still reachable by name and URL either way.
health_first = picker.table_has_errors()
PAGES = [
    st.Page("pages/1_overview.py", title="Overview", icon=":material/timeline:", url_path="overview",
            default=not health_first),
    st.Page("pages/0_health.py", title="Health", icon=":material/health_and_safety:", url_path="health",
            default=health_first),
    st.Page("pages/2_instant.py", title="Instant detail", icon=":material/search:", url_path="instant"),
    st.Page("pages/3_cleaner.py", title="Cleaner & archival", icon=":material/cleaning_services:",
            url_path="cleaner"),
    st.Page("pages/4_file-groups.py", title="File groups", icon=":material/folder_open:", url_path="file-groups"),
    st.Page("pages/5_log-blocks.py", title="Log blocks", icon=":material/view_module:", url_path="log-blocks"),
    st.Page("pages/6_scenarios.py", title="Scenarios", icon=":material/science:", url_path="scenarios"),
]

page = st.navigation(PAGES)
picker.sidebar()
page.run()
