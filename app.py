"""Hudi Timeline Inspector dashboard: open a table and browse its timeline.

Pages render what `hudi_core` computes; they never parse files themselves.
"""

from __future__ import annotations

import streamlit as st

from hudi_core import HudiInspectError, open_table
from hudi_core.demo import demo_table_path

st.set_page_config(page_title="Hudi Timeline Inspector", layout="wide")


@st.cache_resource(show_spinner="Opening table…")
def load(uri: str):
    return open_table(uri)


def default_uri() -> str:
    demo = demo_table_path()
    return str(demo) if demo else ""


st.title("Hudi Timeline Inspector")
uri = st.query_params.get("table") or default_uri()
uri = st.sidebar.text_input("Table path or URL", value=uri, help="Local path or fsspec URL (s3://…)")
if not uri:
    st.info("Enter the path of a Hudi table in the sidebar.")
    st.stop()
st.query_params["table"] = uri

try:
    table = load(uri)
    facts = table.describe()
    instants = table.inspect.instants()
except HudiInspectError as exc:
    st.error(str(exc))
    st.stop()

cols = st.columns(4)
cols[0].metric("Table", facts["name"])
cols[1].metric("Type / version", f"{facts['table_type'].split('_')[0]} v{facts['version']}")
cols[2].metric("Active instants", facts["active_instants"])
cols[3].metric("Pending", facts["pending_instants"])
for finding in table.findings:
    st.warning(f"{finding.message} — {finding.path}")
st.subheader("Active timeline")
st.dataframe(instants.to_pandas(), width="stretch", hide_index=True)
