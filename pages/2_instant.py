"""Instant detail: decoded metadata (tables and raw JSON), write stats, files added, replaced and
deleted, and what the instant rolled back or was rolled back by."""

from __future__ import annotations

import streamlit as st

from hudi_core.dashboard import loaders, overview, picker, render, state, writers

uri, eng = picker.require_table()
overview.hold_until_complete(uri, eng, "every commit body and the archived timeline (any instant, active or archived)",
                             title="Instant detail")
ss, qp = st.session_state, st.query_params
with render.or_stop():
    loaders.ensure_decoded(uri, eng)
    instants, _ = loaders.load_instants(uri, eng)

st.title("Instant detail")
if instants.empty:
    st.info("The timeline has no instants.")
    st.stop()
known = instants["requested_time"].astype(str)
known_set = set(known)
state.init_widget(ss, qp, "instant", known.iloc[-1], valid=lambda v: v in known_set)
# The newest instants are offered in the list (a browser handles a few thousand options well, not a
# 100k-instant archive); any other one is reached by typing its time, or from a link.
options = state.picker_options(known.tail(render.MAX_SHOWN_ROWS).tolist(), ss["instant"], known_set)
if len(known) > len(options):
    st.text_input(f"Go to any of the {len(known):,} instants (requested time)", key="instant_jump",
                  on_change=state.jump_callback(ss, "instant", "instant_jump", known_set),
                  help=f"the list below offers the newest {render.MAX_SHOWN_ROWS:,}")
    typed = ss.get("instant_jump", "").strip()
    if typed and typed not in known_set:
        st.warning(f"No instant {typed} in the active or archived timeline.")
shown_rows = instants[instants["requested_time"].isin(options)]
labels = {t: f"{t} · {a} · {s} ({src})" for t, a, s, src in
          zip(shown_rows["requested_time"], shown_rows["action"], shown_rows["state"], shown_rows["source"],
              strict=True)}
choice = st.selectbox("Instant", options, key="instant", format_func=lambda t: labels.get(t, t))
state.remember(ss, qp, "instant", choice)

row = instants[instants["requested_time"] == choice].iloc[-1]
if row["source"] != "active":
    st.info(f"{choice} is an archived instant: its metadata is read from the archived timeline.")

with render.or_stop():
    detail = loaders.load_instant_detail(uri, choice, row["completed_action"], eng)

inst = detail.instant
stats = render.frame(detail.write_stats)
render.facts([
    render.Fact("Action", inst["action"], mono=False),
    render.Fact("State", inst["state"], tone="" if inst["state"] == "COMPLETED" else "warn"),
    render.Fact("Requested", inst["requested_time"], mono=True),
    render.Fact("Completed", inst["completion_time"] or "pending", mono=bool(inst["completion_time"]),
                sub=f"from {inst['completion_time_source']}" if inst["completion_time"] else ""),
    render.Fact("Operation", inst["operation_type"] or "–"),
])
# What the instant did, in one line (the tabs below hold the details).
did = []
if not stats.empty:
    did.append(f"wrote {len(stats)} file(s), {int(stats['num_writes'].fillna(0).sum())} record(s)")
if detail.replaced:
    did.append(f"replaced {len(detail.replaced)} file group(s)")
if detail.deleted:
    # A rollback's metadata summarises its deletions in one line ("3 files in 2 partitions").
    did.append("deleted " + (detail.rollback_deleted_summary or f"{len(detail.deleted)} file(s)"))
if detail.rolls_back:
    did.append("rolled back " + ", ".join(f"{r['action']} `{r['instant']}`" for r in detail.rolls_back[:5]))
if detail.rolled_back_by:
    did.append("**was rolled back** by " + ", ".join(f"{r['action']} `{r['instant']}`"
                                                      for r in detail.rolled_back_by[:5]))
if did:
    st.markdown(f"**{inst['action']} {inst['requested_time']}** " + "; ".join(did) + ".")
st.caption(f"{inst['source']} · planned as `{inst['pending_action']}`, completes as "
           f"`{inst['completed_action']}` · files: " + ", ".join(f"`{f}`" for f in inst["files"]))
for err in inst["errors"]:
    st.warning(err, icon=":material/dangerous:")
if inst["state"] != "COMPLETED" and row["source"] == "active":
    with render.guard():  # a pending write: is its writer alive, and who rolls it back
        writers.pending_instant_note(loaders.load_writers(uri, eng), inst["requested_time"])

# Tab labels carry their counts; the first tab with content opens (a clean opens on its deleted files).
n_replaced, n_rollback = len(detail.replaced) + len(detail.deleted), len(detail.rolls_back) + len(
    detail.rolled_back_by)
labels = [f"Write stats ({len(stats)})", f"Files replaced / deleted ({n_replaced})", f"Rollbacks ({n_rollback})",
          "Metadata (decoded)", "Raw JSON"]
opening = next((lb for lb, n in zip(labels, (len(stats), n_replaced, n_rollback, 1), strict=False) if n), labels[3])
if detail.rolls_back:
    opening = labels[2]  # a rollback or restore: what it undid comes first
tabs = st.tabs(labels, default=opening)
with tabs[0]:
    if stats.empty:
        st.caption("No write stats (not a completed commit, deltacommit or replacecommit).")
    else:
        render.facts([
            render.Fact("Files written", len(stats)),
            render.Fact("Records written", int(stats["num_writes"].fillna(0).sum())),
            render.Fact("Inserts / updates", f"{int(stats['num_inserts'].fillna(0).sum())} / "
                        f"{int(stats['num_update_writes'].fillna(0).sum())}"),
            render.Fact("Bytes written", f"{int(stats['total_write_bytes'].fillna(0).sum()):,}"),
        ])
        render.table(stats, f"write_stats_{choice}", "write_stats", caption="Files added or appended to")
def _rows_or_none(heading: str, rows: list[dict], name: str, key: str, none: str) -> None:
    """One labelled table of the instant's detail, or a caption when it has no rows."""
    st.markdown(heading)
    if rows:
        render.table(render.frame(rows), f"{name}_{choice}", key)
    else:
        st.caption(none)


with tabs[1]:
    _rows_or_none("**Replaced file groups** (`partitionToReplaceFileIds`)", detail.replaced, "replaced", "replaced",
                  "None.")
    _rows_or_none("**Deleted files**", detail.deleted, "deleted", "deleted", "None.")
with tabs[2]:
    _rows_or_none("**Rolls back**", detail.rolls_back, "rolls_back", "rolls_back",
                  "Nothing (not a rollback or restore).")
    _rows_or_none("**Rolled back by**", detail.rolled_back_by, "rolled_back_by", "rolled_back_by",
                  "No rollback or restore names this instant.")
with tabs[3]:
    for body in detail.bodies:
        st.markdown(f"**{body.state}** · `{body.file}` · {body.size} bytes · {body.format} · "
                    f"{body.record_type or 'no record'}")
        data = body.data
        if isinstance(data, dict):
            scalars = {k: v for k, v in data.items() if not isinstance(v, (dict, list))}
            if scalars:
                st.dataframe(render.frame([{"field": k, "value": str(v)} for k, v in scalars.items()]),
                             width="stretch", hide_index=True)
            for k, v in data.items():
                if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                    st.caption(k)
                    st.dataframe(render.frame(v), width="stretch", hide_index=True)
        for err in body.errors:
            st.warning(err, icon=":material/dangerous:")
with tabs[4]:
    for body in detail.bodies:
        st.markdown(f"`{body.file}`")
        st.json(body.data if body.data is not None else {}, expanded=False)
    render.json_download(detail.to_dict(), f"instant_{choice}", "instant_json")
