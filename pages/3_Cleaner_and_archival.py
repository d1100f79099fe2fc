"""Cleaner and archival dry-runs: Hudi config keys in, decisions with reasons out, the timeline
before and after the archival, and the replaced file groups an unguarded archival would expose."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import streamlit as st

from hudi_core.ui import charts, engine, loaders, markers, picker, render

uri, eng = picker.require_table()
ss = st.session_state
st.title("Cleaner & archival dry-run")
st.caption("What Hudi 1.1.x's cleaner and archiver would do next, computed read-only. Nothing is written.")
try:
    loaders.ensure_decoded(uri, eng)
    keys = engine.config_keys()
    instants, source_note = loaders.load_instants(uri, eng)
except Exception as exc:  # every error becomes a readable message
    render.show_error(exc)
    st.stop()

MAIN_KEYS = ["hoodie.clean.policy", "hoodie.clean.commits.retained", "hoodie.clean.fileversions.retained",
             "hoodie.clean.hours.retained", "hoodie.keep.min.commits", "hoodie.keep.max.commits",
             "hoodie.archive.beyond.savepoint"]
by_name = {k.name: k for k in keys}
scenario = engine.scenario_of_table(uri)
seed: dict[str, str] = {}
if scenario:
    with render.guard():
        sconf = engine.scenario_info(scenario)["conf"]
        seed = {k.name: v for k in keys for n in k.names() for kk, v in sconf.items() if kk == n}
        st.info(f"Built from scenario `{scenario}`: the form starts from its configuration "
                + ", ".join(f"`{k}={v}`" for k, v in sconf.items()))


def _default(key: Any) -> Any:
    """The form's starting value: the scenario's setting, else Hudi's default."""
    if key.name not in seed:
        return key.default
    raw = seed[key.name]
    if key.kind == "bool":
        return str(raw).lower() == "true"
    if key.kind == "int":
        return int(raw)
    return raw


def _widget(key: Any, container: Any) -> Any:
    """One form widget for a `services.config.ConfigKey`."""
    label = key.name
    help_text = key.description + (f" (also: {', '.join(key.alternatives)})" if key.alternatives else "")
    wkey = f"conf::{uri}::{key.name}"
    start = _default(key)
    if key.choices:
        return container.selectbox(label, list(key.choices), index=list(key.choices).index(start)
                                   if start in key.choices else 0, help=help_text, key=wkey)
    if key.kind == "bool":
        return container.checkbox(label, value=bool(start), help=help_text, key=wkey)
    if key.kind == "int" and start is not None:
        return container.number_input(label, value=int(start), min_value=0, step=1, help=help_text, key=wkey)
    return container.text_input(label, value="" if start is None else str(start), help=help_text, key=wkey)


with st.form("dry_run"):
    cols = st.columns(4)
    values = {}
    for n, name in enumerate(MAIN_KEYS):
        if name in by_name:
            values[name] = _widget(by_name[name], cols[n % 4])
    guard = cols[(len(MAIN_KEYS)) % 4].checkbox(
        "HUDI-7779 guard", value=True, key="conf::guard",
        help="Keep instants from the earliest savepoint the latest clean tracked (EarliestCommitToNotArchive).")
    with st.expander("More Hudi keys"):
        more = st.columns(3)
        for n, key in enumerate(k for k in keys if k.name not in MAIN_KEYS):
            values[key.name] = _widget(key, more[n % 3])
    st.form_submit_button("Run dry-run", type="primary")

conf = {}
for name, value in values.items():
    default = by_name[name].default
    if value in ("", None) or value == default or (isinstance(value, float) and value == default):
        continue
    conf[name] = str(value).lower() if isinstance(value, bool) else str(int(value) if isinstance(value, float)
                                                                         else value)

try:
    with st.status("Planning the clean and the archival…", expanded=False) as status:
        result = loaders.load_dry_run(uri, tuple(sorted(conf.items())), bool(guard), eng)
        status.update(label="Dry-run done", state="complete")
except Exception as exc:  # every error becomes a readable message
    render.show_error(exc)
    st.stop()

clean, archive, other = result["clean_plan"], result["archive_plan"], result["archive_plan_other_guard"]
st.caption("Configuration: " + (", ".join(f"`{k}={v}`" for k, v in conf.items()) or "Hudi defaults")
           + f" · guard {'on' if guard else 'off'}")
render.json_download(result, "dry_run", "dry_run_json")

# -- cleaner -------------------------------------------------------------------------------------
st.header("Cleaner")
m = st.columns(5)
m[0].metric("Policy", clean["policy"])
m[1].metric("ECTR (next clean)", clean["earliest_commit_to_retain"] or "none")
m[2].metric("Would schedule", "yes" if clean["would_schedule"] else "no")
m[3].metric("Files to delete", len(clean["files_to_delete"]))
m[4].metric("Files kept", len(clean["kept"]))
ectna = clean.get("earliest_commit_to_not_archive") or {}
st.markdown(f"- **ECTR**: {clean['earliest_commit_to_retain_detail']}\n"
            f"- **EarliestCommitToNotArchive**: proposed `{ectna.get('proposed')}` · Hudi `{ectna.get('hudi')}`\n"
            f"- **Trigger**: {clean['trigger_detail']}\n"
            f"- **Partitions** ({clean['partition_mode']}): {clean['partition_detail']}")
for pending in clean.get("pending_cleans", []):
    st.warning(f"A {pending['state']} clean {pending['requested_time']} runs first "
               f"({pending['files']} files).")
c1, c2 = st.columns(2)
with c1:
    st.subheader("Files to delete")
    render.table(render.frame(clean["files_to_delete"]), "clean_files_to_delete", "clean_delete")
with c2:
    st.subheader("Files kept (with reason)")
    render.table(render.frame(clean["kept"]), "clean_files_kept", "clean_kept")

# -- archiver ------------------------------------------------------------------------------------
st.header("Archiver")
boundary = archive.get("boundary") or {}
decisions = render.frame(archive["instants"])
to_archive = engine.archived_by_plan(archive)
m = st.columns(5)
m[0].metric("Archiver", archive["archiver"])
m[1].metric("Keep min / max", f"{archive['min_to_keep']} / {archive['max_to_keep']}")
m[2].metric("Boundary", boundary.get("instant") or "none")
m[3].metric("Binding guard", boundary.get("guard") or "none")
m[4].metric("Instants to archive", len(to_archive))
st.caption(archive["min_max_detail"])
st.subheader("Guards")
guards = render.frame(archive["guards"])
if not guards.empty:
    styled = guards.style.apply(lambda r: ["background-color: #fff3cd" if r["binding"] else "" for _ in r], axis=1)
    st.dataframe(styled, width="stretch", hide_index=True)
    render.json_download(archive["guards"], "archive_guards", "guards_json")
st.subheader("Decisions")
if not decisions.empty:
    decisions["reasons"] = decisions["reasons"].map(lambda r: "; ".join(r) if isinstance(r, list) else r)
    render.table(decisions, "archive_decisions", "archive_decisions")

st.subheader("Timeline before and after the archival")
arrow_before = loaders.load_instants(uri, eng)[0]
after = engine.after_archival(pa.Table.from_pandas(arrow_before, preserve_index=False), archive).to_pandas()
marks_before, _ = loaders.load_markers(uri, eng)
marks_after = markers.markers_from_engine(result.get("markers") or {})
b = markers.boundary_from_plan(archive)
if b:
    marks_after.append(b)
st.plotly_chart(charts.before_after_figure(arrow_before, after, marks_before, markers.dedupe(marks_after),
                                           highlight=to_archive, highlight_label="archived by this plan",
                                           titles=("Before", "After the planned archival")), key="before_after")

# -- exposure ------------------------------------------------------------------------------------
st.subheader("Replaced file groups an archival would expose")
exposed = render.frame(archive.get("exposed_file_groups", []))
other_exposed = render.frame(other.get("exposed_file_groups", []))
unguarded = other_exposed if guard else exposed
if not exposed.empty:
    st.warning(f"This archival would expose {len(exposed)} replaced file group(s): readers would see them "
               "next to their replacement (duplicates).", icon=":material/dangerous:")
    st.dataframe(exposed.style.apply(lambda r: ["background-color: #f8d7da"] * len(r), axis=1), width="stretch",
                 hide_index=True)
    render.table(exposed, "exposed_file_groups", "exposed")
else:
    st.success("This archival exposes no replaced file group.")
if guard:
    if unguarded.empty:
        st.caption("Without the HUDI-7779 guard the archival would not expose any file group either.")
    else:
        st.warning(f"Without the HUDI-7779 guard the archival would expose {len(unguarded)} replaced file "
                   "group(s):", icon=":material/dangerous:")
        st.dataframe(unguarded.style.apply(lambda r: ["background-color: #f8d7da"] * len(r), axis=1),
                     width="stretch", hide_index=True)
        render.table(unguarded, "exposed_file_groups_unguarded", "exposed_unguarded")
other_archive = engine.archived_by_plan(other)
diff = sorted(set(other_archive) ^ set(to_archive))
if diff:
    st.info(f"Flipping the guard changes the decision for {len(diff)} instant(s): " + ", ".join(diff[:20]))
