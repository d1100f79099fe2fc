"""File groups: per partition, file groups and their slices (base and log files), replaced groups
with their replacecommit and whether their files still exist, savepoint pins, an as-of slider."""

from __future__ import annotations

import streamlit as st

from hudi_core.dashboard import loaders, overview, picker, render, state

uri, eng = picker.require_table()
ss, qp = st.session_state, st.query_params
st.title("File groups")
overview.hold_until_complete(uri, eng, "the replaced file groups in the commit bodies and the archived timeline"
                             " (the file groups as of any instant)")
with render.or_stop():
    loaders.ensure_fs_view(uri, eng)
    instants, _ = loaders.load_instants(uri, eng)
    facts, _ = loaders.load_facts(uri, eng)

# Which listing the view is built from: Hudi 1.x's (the metadata table when hoodie.properties enables it) or
# the other one, to compare.
LISTINGS = {"metadata": "Metadata table", "storage": "Storage"}
default_listing = facts["listing"]
if facts.get("has_metadata_table") and not facts.get("is_metadata_table"):
    state.init_widget(ss, qp, "listing", default_listing, valid=lambda v: v in LISTINGS)
    listing = st.segmented_control(
        "Listing", list(LISTINGS), key="listing", format_func=lambda k: LISTINGS[k] + (
            " (as Hudi 1.x lists)" if k == default_listing else ""),
        help="Where the file-system view takes its files from. Hudi 1.x readers, the cleaner and the archiver list "
             "through the metadata table's files partition when hoodie.properties enables it; storage is what is "
             "really there.") or default_listing
    state.remember(ss, qp, "listing", listing, default=default_listing)
else:
    listing = default_listing

LATEST = "latest"
active = instants[(instants["source"] == "active") & (instants["state"] == "COMPLETED")]
times = [LATEST, *reversed(active["requested_time"].tolist())]
state.init_widget(ss, qp, "as_of", LATEST, valid=lambda v: v in times)
as_of = st.select_slider("As of (completed instants of the active timeline, newest first)", options=times,
                         key="as_of", help="The file-system view as a reader at that instant would see it.")
state.remember(ss, qp, "as_of", as_of, default=LATEST)

with render.or_stop():
    data = loaders.load_file_groups(uri, None if as_of == LATEST else as_of, eng, listing)

render.incomplete_warning(data.findings)
st.caption(f"Listed from **{'the metadata table' if data.listing == 'metadata' else 'storage'}**: "
           f"{data.listing_reason}")
if data.differences:
    kinds: dict[str, int] = {}
    for d in data.differences:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    st.warning(f"**The metadata table and storage disagree on {len(data.differences)} file(s) or partition(s)** ("
               + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in kinds.items()) + "): rows holding such a file "
               "are red below; the Health page lists each with what Hudi does because of it.",
               icon=":material/dangerous:")
partitions = ["(all)", *data.partitions]
state.init_widget(ss, qp, "partition", "(all)", valid=lambda v: v in partitions)
part = st.selectbox("Partition", partitions, key="partition",
                    format_func=lambda p: "(non-partitioned)" if p == "" else p)
state.remember(ss, qp, "partition", part, default="(all)")


def _in_part(rows: list[dict]) -> list[dict]:
    return rows if part == "(all)" else [r for r in rows if r["partition"] == part]


groups = render.frame(_in_part(data.groups))
slices = render.frame(_in_part(data.slices))
replaced = render.frame(_in_part(data.replaced))
pins = render.frame(_in_part(data.pins))
m = st.columns(5)
m[0].metric("Partitions", len(data.partitions))
m[1].metric("File groups", len(groups))
m[2].metric("Slices", len(slices))
m[3].metric("Replaced groups", len(replaced))
m[4].metric("Savepoint-pinned files", len(pins))

# The answer first: what a reader sees, and what an archival could bring back.
as_of_text = "latest" if as_of == LATEST else f"as of `{as_of}`"
lingering = replaced[replaced["files_exist"].astype(bool)] if not replaced.empty and "files_exist" in replaced else \
    replaced.iloc[0:0]
summary = (f"{len(groups)} file group(s) in {len(data.partitions)} partition(s), {as_of_text}; "
           f"{len(replaced)} replaced")
if not lingering.empty:
    by = ", ".join(sorted({f"`{t}`" for t in lingering["replacecommit"]}))
    render.verdict(f"{summary}: **{len(lingering)} replaced file group(s) still have files on storage** — "
                   f"archiving their replacecommit ({by}) before the cleaner removes them would expose them.", "warn")
elif groups.empty:
    render.verdict("No file groups: the table has no committed data files yet.", "info")
else:
    render.verdict(f"{summary}: no replaced file group has files left on storage.", "good")

st.subheader("File groups")
if groups.empty:
    st.caption("No file groups.")
else:
    render.table(groups, "file_groups", "groups_csv", caption="red: holds a file the metadata table and storage "
                 "disagree on (`storage_check`) · grey: replaced · yellow: in a pending table service",
                 row_style=lambda r: "background-color: #fdecea" if r.get("storage_check") else
                 "background-color: #eceff1; color: #607d8b" if r["replaced_by"] else
                 "background-color: #fff3cd" if r["pending_compaction"] or r["pending_clustering"] else "")

st.subheader("File slices")
render.table(slices, "file_slices", "slices", caption="Committed slices as of the chosen instant; `is_latest` marks "
             "the slice a snapshot reader uses; red: a file the metadata table and storage disagree on.",
             row_style=lambda r: "background-color: #fdecea" if r.get("storage_check") else "")

st.subheader("Replaced file groups")
if replaced.empty:
    st.caption("No replaced file groups in the active timeline.")
else:
    still = int(replaced["files_exist"].sum())
    if still:
        st.warning(f"{still} replaced file group(s) still have files on storage: the cleaner has not removed them "
                   "yet, so archiving their replacecommit would make them visible again.")
    render.table(replaced, "replaced_file_groups", "replaced")

st.subheader("Savepoint pins")
if pins.empty:
    st.caption("No completed savepoint pins files.")
else:
    missing = int((~pins["exists"]).sum())
    if missing:
        st.warning(f"{missing} savepointed file(s) no longer exist on storage: restoring to that savepoint would "
                   "fail.", icon=":material/dangerous:")
    render.table(pins, "savepoint_pins", "pins")

st.subheader("History of a file group")
choices = sorted({(g["partition"], g["file_id"]) for g in _in_part(data.groups)} |
                 {(r["partition"], r["file_id"]) for r in _in_part(data.replaced)})
if not choices:
    st.caption("No file group to trace.")
else:
    state.init_widget(ss, qp, "history", "", valid=lambda v: v == "" or v in {f"{p}/{f}" for p, f in choices})
    picked = st.selectbox("File group", ["", *(f"{p}/{f}" for p, f in choices)], key="history",
                          help="Every instant, active and archived, that wrote, compacted, clustered, replaced, "
                               "cleaned or rolled back it (`hudi-inspect history`).")
    state.remember(ss, qp, "history", picked, default="")
    if picked:
        partition, _, file_id = picked.rpartition("/")
        with render.guard():
            history = loaders.load_history(uri, file_id, partition, eng)
            st.caption(f"{len(history.events)} events in {history.instants_read} instants")
            render.table(render.frame([e.to_dict() for e in history.events]), "file_group_history", "history_csv")
