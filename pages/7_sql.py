"""SQL: one SELECT (DuckDB) over the table's inspector views, with example postmortem queries, the result as a
table (CSV download) and a chart. The query lives in the URL (`sql`), so a pasted link runs it again."""

from __future__ import annotations

import streamlit as st

from hudi_core.dashboard import loaders, picker, render, state
from hudi_core.dashboard import sql as sql_ui
from hudi_core.inspect.sql import MACROS, VIEW_DOCS, schema_rows
from hudi_core.services.config import DEFAULT_HUDI_RELEASE, HUDI_RELEASES

uri, eng = picker.require_table()
ss, qp = st.session_state, st.query_params
st.title("SQL")
st.caption("One `SELECT` (DuckDB) over the table's views: " + ", ".join(f"`{v}`" for v in VIEW_DOCS)
           + ". Only the views a query names are computed; nothing can be written and no file read from SQL. "
           "`instant_ts(t)` reads an instant time as a timestamp in the table's timezone.")

state.init_widget(ss, qp, "sql", sql_ui.DEFAULT_QUERY)
state.init_widget(ss, qp, "sql_conf", "")
state.init_widget(ss, qp, "sql_release", DEFAULT_HUDI_RELEASE, valid=lambda v: v in HUDI_RELEASES)
PICK = "(pick an example)"


def _use_example() -> None:
    """Put the chosen example in the editor (runs before the script, when widget values may be set)."""
    label = ss.get("sql_example")
    if label in sql_ui.EXAMPLES:
        ss["sql"] = sql_ui.EXAMPLES[label]
        ss["sql_example"] = PICK


st.selectbox("Example postmortem queries", [PICK, *sql_ui.EXAMPLES], key="sql_example", on_change=_use_example)
with st.form("sql_form", border=False):
    query = st.text_area("Query", key="sql", height=220, help="One SELECT (or WITH … SELECT, DESCRIBE, SUMMARIZE). "
                         "Ctrl+Enter or Run.")
    with st.expander("Dry-run configuration (the clean_plan and archive_plan views)"):
        conf_text = st.text_area("Hudi configuration, KEY=VALUE per line", key="sql_conf", height=90,
                                 placeholder="hoodie.cleaner.commits.retained=4")
        release = st.selectbox("Emulated Hudi release", list(HUDI_RELEASES), key="sql_release")
    timeout = st.number_input("Time limit (seconds)", min_value=1.0, max_value=sql_ui.MAX_QUERY_TIMEOUT_S,
                              value=sql_ui.QUERY_TIMEOUT_S, step=10.0, key="sql_timeout",
                              help="A query still running after this is interrupted.")
    st.form_submit_button("Run", type="primary")
state.remember(ss, qp, "sql", query, default=sql_ui.DEFAULT_QUERY)
state.remember(ss, qp, "sql_conf", conf_text, default="")
state.remember(ss, qp, "sql_release", release, default=DEFAULT_HUDI_RELEASE)

with st.expander("Views and columns"):
    st.markdown("\n".join(f"- **{name}**: {doc}" for name, doc in VIEW_DOCS.items())
                + "\n" + "\n".join(f"- macro {doc}" for _, doc in MACROS.values()))
    render.table(render.frame(schema_rows()), "sql-views", "sql_views",
                 column_config={"doc": st.column_config.TextColumn(width="large")})

try:
    conf = sql_ui.parse_conf(conf_text)
except ValueError as exc:
    st.error(f"Dry-run configuration: {exc}")
    st.stop()
answer = sql_ui.run(uri, eng, query, conf, release, float(timeout))
if answer.error is not None:
    st.error(answer.error, icon=":material/error:")
    st.stop()
render.incomplete_warning([f for f in answer.findings])
result = answer.table
assert result is not None
st.caption(f"{result.num_rows:,} row(s) · views computed: {', '.join(answer.views) or 'none'}")
with render.or_stop():
    timezone = loaders.get_table(uri, eng).properties.timezone
    shown = sql_ui.to_frame(result, render.MAX_SHOWN_ROWS)
render.table(shown, "query-result", "sql_result", csv_frame=lambda: sql_ui.to_frame(result),
             caption=None if result.num_rows <= render.MAX_SHOWN_ROWS else
             f"The first {render.MAX_SHOWN_ROWS:,} of {result.num_rows:,} rows: the CSV holds every row.")
with render.guard():
    fig = sql_ui.result_figure(shown, timezone)
    if fig is not None:
        st.plotly_chart(fig, key="sql_chart", width="stretch", config={"displaylogo": False})
    elif result.num_rows:
        st.caption("No chart: the result has no time column and no category column with a number.")
