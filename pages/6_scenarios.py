"""Scenarios: pick a built-in scenario, step through its operations, and watch the markers and the
dry-run decisions change before and after each step. Each step is built once into a new folder
under the inspector's cache (the scenario builder is the only writer; tables are never modified)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hudi_core.dashboard import charts, loaders, markers, page_path, picker, render, roots, scenario_tables, state
from hudi_core.scenarios.builtin import builtin_names, load_builtin
from hudi_core.services.archive import ARCHIVE, ArchivePlan

picker.require_app()
ss, qp = st.session_state, st.query_params
st.title("Scenarios")
with render.or_stop():
    names = builtin_names()

state.init_widget(ss, qp, "scenario", "hudi7779_case_b" if "hudi7779_case_b" in names else names[0],
                  valid=lambda v: v in names)
name = st.selectbox("Built-in scenario", names, key="scenario")
state.remember(ss, qp, "scenario", name)
with render.or_stop():
    scenario = load_builtin(name)

st.markdown(f"**{scenario.title}**  \n{scenario.description}")
st.caption(f"source: {scenario.source} · {scenario.table_type} · configuration: "
           + (", ".join(f"`{k}={v}`" for k, v in scenario.conf.items()) or "Hudi defaults"))
steps = [s.describe() for s in scenario.steps]
versions = [int(v) for v in scenario.table_versions]
c1, c2 = st.columns([1, 4])
version = c1.selectbox("Table version", versions, index=len(versions) - 1, key=f"scenario_version::{name}")
state.init_widget(ss, qp, "step", len(steps) - 1, int, valid=lambda v: 0 <= v < len(steps))
step = c2.select_slider("Step", options=list(range(len(steps))), key="step",
                        format_func=lambda i: f"{i}: {scenario.steps[i].op}"
                        + (f" {scenario.steps[i].label}" if scenario.steps[i].label else ""))
state.remember(ss, qp, "step", step)
st.markdown(f"#### Step {steps[step]}")
conf = tuple(sorted(scenario.conf.items()))
out_root = roots.scenario_output_root()

bar = st.progress(0.0, text="Building the scenario tables…")
with render.or_stop(bar.empty):
    bar.progress(0.1, text=f"Building {name} up to step {step - 1}" if step else "Empty table before step 0")
    before_uri = scenario_tables.build_scenario_step(out_root, name, version, step - 1)[0] if step > 0 else None
    bar.progress(0.5, text=f"Building {name} up to step {step}")
    after_uri, step_results = scenario_tables.build_scenario_step(out_root, name, version, step)
    bar.progress(0.8, text="Reading both tables")
    before = loaders.load_step_view(before_uri, conf, "local") if before_uri else None
    after = loaders.load_step_view(after_uri, conf, "local")
bar.empty()

def _decisions(plan: ArchivePlan | None) -> dict[str, dict[str, str]]:
    """Instant label → its decision and reasons in an archive plan."""
    if plan is None:
        return {}
    return {f"{d.instant.requested_time} {d.instant.action}": {"decision": d.decision, "reasons": "; ".join(d.reasons)}
            for d in plan.decisions}


def _plan(view: loaders.StepView | None, guarded: bool) -> ArchivePlan | None:
    if view is None:
        return None
    return view.archive if guarded else view.archive_unguarded


plans = {key: (_decisions(_plan(before, key == "archive")), _decisions(_plan(after, key == "archive")))
         for key in ("archive", "archive_unguarded")}
# The answer first: what each archival would do after this step.
lines = []
for label, key in (("With the HUDI-7779 guard", "archive"), ("Without the guard", "archive_unguarded")):
    n_arch = sum(1 for d in plans[key][1].values() if d["decision"] == ARCHIVE)
    exposed = _plan(after, key == "archive").exposed_file_groups  # type: ignore[union-attr]
    lines.append(f"{label}: archives **{n_arch}** instant(s), exposes **{len(exposed) or 'no'}** replaced "
                 "file group(s)" + (" — " + ", ".join(f"`{e.file_id}`" for e in exposed) if exposed else ""))
danger = bool(after.archive.exposed_file_groups or after.archive_unguarded.exposed_file_groups)
render.verdict(f"After step {step}:  \n" + "  \n".join(lines), "warn" if danger else "good")

if st.button("Open this table in the other pages", help=after_uri):
    picker.open_uri(after_uri)
    st.switch_page(page_path("overview"))
st.caption(f"after this step: `{after_uri}`")
if step_results and step < len(step_results):
    with st.expander("What the step did"):
        st.json(step_results[step], expanded=False)

empty = pd.DataFrame(columns=after.instants.columns)
before_instants = before.instants if before else empty


def _instant_keys(frame: pd.DataFrame) -> set[tuple[str, str, str, str]]:
    """(requested time, action, state, source) per instant: a savepoint shares its commit's time."""
    return set(zip(frame["requested_time"], frame["action"], frame["state"], frame["source"], strict=True))


changed = _instant_keys(after.instants) ^ _instant_keys(before_instants)
changed_times = sorted({(c[0], c[1]) for c in changed})
st.plotly_chart(charts.before_after_figure(before_instants, after.instants, before.markers if before else [],
                                           after.markers, highlight=changed_times,
                                           highlight_label="changed by this step",
                                           titles=(f"Before step {step}", f"After step {step}"),
                                           timezone=after.timezone),
                key="scenario_chart", width="stretch")

st.subheader("Markers")
bmap = markers.instants_by_label(before.markers) if before else {}
amap = markers.instants_by_label(after.markers)
rows = [{"marker": k, "before": bmap.get(k, "–"), "after": amap.get(k, "–"),
         "changed": bmap.get(k) != amap.get(k)} for k in sorted(set(bmap) | set(amap))]
marker_table = render.frame(rows)
if marker_table.empty:
    st.caption("No markers before or after this step.")
else:
    render.table(marker_table, f"markers_{name}_step{step}", "scenario_markers",
                 row_style=lambda r: "font-weight: bold; background-color: #e3f2fd" if r["changed"] else "")

st.subheader("Dry-run decisions")
instants_all = sorted(set().union(*(set(b) | set(a) for b, a in plans.values())))
table = render.frame([{
    "instant": k,
    "guarded before": plans["archive"][0].get(k, {}).get("decision", "–"),
    "guarded after": plans["archive"][1].get(k, {}).get("decision", "–"),
    "unguarded before": plans["archive_unguarded"][0].get(k, {}).get("decision", "–"),
    "unguarded after": plans["archive_unguarded"][1].get(k, {}).get("decision", "–"),
    "reason (guarded, after)": plans["archive"][1].get(k, {}).get("reasons", ""),
    "reason (unguarded, after)": plans["archive_unguarded"][1].get(k, {}).get("reasons", ""),
} for k in instants_all])
if table.empty:
    st.caption("The archiver considers no instant yet (the timeline is too short).")
else:
    render.table(table, f"archive_decisions_{name}_step{step}", "scenario_archive",
                 caption="Archival decisions before and after this step; rows where the guard changes the "
                         "outcome are highlighted.",
                 row_style=lambda r: "background-color: #fde0dc" if r["guarded after"] != r["unguarded after"]
                 else "", column_config={"reason (guarded, after)": st.column_config.TextColumn(width="large"),
                                         "reason (unguarded, after)": st.column_config.TextColumn(width="large")})
cols = st.columns(2)
for col, (label, plan) in zip(cols, (("with the HUDI-7779 guard", after.archive),
                                     ("without the guard", after.archive_unguarded)), strict=True):
    with col:
        if plan.exposed_file_groups:
            st.warning(f"Archival {label} would expose {len(plan.exposed_file_groups)} replaced file group(s): "
                       + ", ".join(f"`{e.file_id}`" for e in plan.exposed_file_groups), icon=":material/dangerous:")
        else:
            st.success(f"Archival {label} exposes no replaced file group.")
clean_after = after.clean
clean_before = before.clean if before else None
st.markdown(f"**Next clean**: ECTR before `{(clean_before.ectr if clean_before else None) or 'none'}` → after "
            f"`{clean_after.ectr or 'none'}`; files to delete before "
            f"{len(clean_before.files_to_delete) if clean_before else 0} → after {len(clean_after.files_to_delete)}")


def _plans_json(view: loaders.StepView | None) -> dict:
    if view is None:
        return {"archive": None, "archive_unguarded": None, "clean": None}
    return {"archive": view.archive.to_dict(), "archive_unguarded": view.archive_unguarded.to_dict(),
            "clean": view.clean.to_dict()}


render.json_download({"scenario": name, "step": step, "table_version": version, "before": _plans_json(before),
                      "after": _plans_json(after)}, f"scenario_{name}_step{step}", "scenario_json")
