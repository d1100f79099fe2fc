"""Instant detail: decoded metadata (tables and raw JSON), write stats, files added, replaced and
deleted, and what the instant rolled back or was rolled back by."""

from __future__ import annotations

import streamlit as st

from hudi_core.ui import loaders, picker, render, state

uri, eng = picker.require_table()
ss, qp = st.session_state, st.query_params
try:
    loaders.ensure_decoded(uri, eng)
    instants, _ = loaders.load_instants(uri, eng)
except Exception as exc:  # every error becomes a readable message
    render.show_error(exc)
    st.stop()

st.title("Instant detail")
if instants.empty:
    st.info("The timeline has no instants.")
    st.stop()
keys = [f"{t}" for t in instants["requested_time"]]
labels = {t: f"{t} · {a} · {s} ({src})" for t, a, s, src in
          zip(instants["requested_time"], instants["action"], instants["state"], instants["source"], strict=True)}
state.init_widget(ss, qp, "instant", keys[-1], valid=lambda v: v in labels)
choice = st.selectbox("Instant", keys, key="instant", format_func=lambda t: labels.get(t, t))
state.remember(ss, qp, "instant", choice)

row = instants[instants["requested_time"] == choice].iloc[-1]
if row["source"] != "active":
    st.info(f"{choice} is an archived instant: its metadata is read from the archived timeline.")

try:
    detail = loaders.load_instant_detail(uri, choice, row["completed_action"], eng)
except Exception as exc:  # every error becomes a readable message
    render.show_error(exc)
    st.stop()

inst = detail["instant"]
c = st.columns(5)
c[0].metric("Action", inst["action"])
c[1].metric("State", inst["state"])
c[2].metric("Requested", inst["requested_time"])
c[3].metric("Completed", inst["completion_time"] or "pending")
c[4].metric("Operation", inst["operation_type"] or "–")
st.caption(f"{inst['source']} · planned as `{inst['pending_action']}`, completes as "
           f"`{inst['completed_action']}` · completion time from `{inst['completion_time_source']}` · files: "
           + ", ".join(f"`{f}`" for f in inst["files"]))
for err in inst["errors"]:
    st.warning(err, icon=":material/dangerous:")

tabs = st.tabs(["Write stats", "Files replaced / deleted", "Rollbacks", "Metadata (decoded)", "Raw JSON"])
with tabs[0]:
    stats = render.frame(detail["write_stats"])
    if stats.empty:
        st.caption("No write stats (not a completed commit, deltacommit or replacecommit).")
    else:
        m = st.columns(4)
        m[0].metric("Files written", len(stats))
        m[1].metric("Records written", int(stats["num_writes"].fillna(0).sum()))
        m[2].metric("Inserts / updates", f"{int(stats['num_inserts'].fillna(0).sum())} / "
                    f"{int(stats['num_update_writes'].fillna(0).sum())}")
        m[3].metric("Bytes written", int(stats["total_write_bytes"].fillna(0).sum()))
        render.table(stats, f"write_stats_{choice}", "write_stats", caption="Files added or appended to")
with tabs[1]:
    st.markdown("**Replaced file groups** (`partitionToReplaceFileIds`)")
    if detail["replaced"]:
        render.table(render.frame(detail["replaced"]), f"replaced_{choice}", "replaced")
    else:
        st.caption("None.")
    st.markdown("**Deleted files**")
    if detail["deleted"]:
        render.table(render.frame(detail["deleted"]), f"deleted_{choice}", "deleted")
    else:
        st.caption("None.")
with tabs[2]:
    st.markdown("**Rolls back**")
    if detail["rolls_back"]:
        render.table(render.frame(detail["rolls_back"]), f"rolls_back_{choice}", "rolls_back")
    else:
        st.caption("Nothing (not a rollback or restore).")
    st.markdown("**Rolled back by**")
    if detail["rolled_back_by"]:
        render.table(render.frame(detail["rolled_back_by"]), f"rolled_back_by_{choice}", "rolled_back_by")
    else:
        st.caption("No rollback or restore names this instant.")
with tabs[3]:
    for body in detail["bodies"]:
        st.markdown(f"**{body['state']}** · `{body['file']}` · {body['size']} bytes · {body['format']} · "
                    f"{body['record_type'] or 'no record'}")
        data = body["data"]
        if isinstance(data, dict):
            scalars = {k: v for k, v in data.items() if not isinstance(v, (dict, list))}
            if scalars:
                st.dataframe(render.frame([{"field": k, "value": str(v)} for k, v in scalars.items()]),
                             width="stretch", hide_index=True)
            for k, v in data.items():
                if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                    st.caption(k)
                    st.dataframe(render.frame(v), width="stretch", hide_index=True)
        for err in body["errors"]:
            st.warning(err, icon=":material/dangerous:")
with tabs[4]:
    for body in detail["bodies"]:
        st.markdown(f"`{body['file']}`")
        st.json(body["data"] if body["data"] is not None else {}, expanded=False)
    render.json_download(detail, f"instant_{choice}", "instant_json")
