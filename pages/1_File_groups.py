"""Latest file slices of the open table (as of an instant, optionally)."""

from __future__ import annotations

import streamlit as st

from hudi_core import HudiInspectError, open_table

st.set_page_config(page_title="File groups · Hudi Timeline Inspector", layout="wide")
uri = st.query_params.get("table", "")
if not uri:
    st.info("Open a table on the main page first.")
    st.stop()
try:
    table = open_table(uri)
    times = [i.requested_time for i in table.timeline.completed()]
    as_of = st.select_slider("As of", options=times, value=times[-1]) if len(times) > 1 else None
    slices = table.inspect.file_slices(as_of=as_of)
except HudiInspectError as exc:
    st.error(str(exc))
    st.stop()
st.subheader("File slices")
st.dataframe(slices.to_pandas(), width="stretch", hide_index=True)
