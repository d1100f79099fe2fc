"""Schema: every schema the table's commits recorded (active and archived, and the create schema), what changed
at each instant, and the diff of any two picked versions (in the URL: `schema_from`, `schema_to`), changes
coloured by kind; changes readers of older data fail on are warnings."""

from __future__ import annotations

import streamlit as st

from hudi_core.dashboard import overview, picker, render, state
from hudi_core.dashboard import schema as schema_ui

uri, eng = picker.require_table()
ss, qp = st.session_state, st.query_params
st.title("Schema history")
overview.hold_until_complete(uri, eng, "every commit body (the schema each commit wrote)")
st.caption("The writer schema each completed commit, deltacommit and replacecommit recorded "
           "(`extraMetadata.schema`), active and archived, after the table's `hoodie.table.create.schema`. A new "
           "version starts where a commit's schema differs from the one before (meta fields and docs aside). "
           "Changes follow Hudi 1.x's Avro compatibility rules: promotions int → long → float → double, numbers → "
           "string, string ↔ bytes, wider decimals.")
with render.or_stop():
    history, findings = schema_ui.load_history(uri, eng)

render.incomplete_warning([*findings, *history.unreadable])
for f in history.findings:
    if f.code == "schema_change_breaks_readers":
        st.warning(f"{f.message} (`{f.path}`)", icon=":material/warning:")

versions = history.versions
breaking = [c for c in history.changes if c.breaks_readers]
render.facts([
    render.Fact("Schema versions", len(versions)),
    render.Fact("Commits read", f"{history.commits:,}", sub=f"{history.commits_with_schema:,} recorded a schema"),
    render.Fact("Field changes", len(history.changes)),
    render.Fact("Break readers", len(breaking), tone="bad" if breaking else "good"),
])
if not versions:
    st.info("No commit of this table recorded a schema, and hoodie.properties holds no create schema.")
    st.stop()

st.subheader("History")
render.table(render.frame(schema_ui.history_rows(history)), "schema-history", "schema_history",
             row_style=lambda r: f"background-color: {schema_ui.BREAKING_COLOR}" if r.get("breaks_readers") else "",
             column_config={"changed": st.column_config.TextColumn(width="large")})

st.subheader("Compare two versions")
labels = [v.label for v in versions]
if len(labels) == 1:
    st.info(f"One schema version: every commit recorded the schema of `{labels[0]}`; nothing to compare.")
    with st.expander(f"Fields of {labels[0]}"):
        render.table(render.frame(schema_ui.fields_rows(versions[0])), "schema-fields", "schema_fields")
    st.stop()
by_label = {v.label: v for v in versions}


def _label_of(value: str | None) -> str | None:
    """A version label, or the version in effect at an instant time given in a link."""
    if value is None or value in by_label:
        return value
    found = history.version_at(value)
    return found.label if found is not None else None


for key in ("schema_from", "schema_to"):
    if key not in ss:
        resolved = _label_of(state.url_value(qp, key))
        if resolved is not None:
            ss[key] = resolved
state.init_widget(ss, qp, "schema_from", labels[-2] if len(labels) > 1 else labels[-1], valid=lambda v: v in by_label)
state.init_widget(ss, qp, "schema_to", labels[-1], valid=lambda v: v in by_label)
left, right = st.columns(2)
older = left.selectbox("From", labels, key="schema_from", format_func=lambda k: schema_ui.version_text(by_label[k]))
newer = right.selectbox("To", labels, key="schema_to", format_func=lambda k: schema_ui.version_text(by_label[k]))
state.remember(ss, qp, "schema_from", older, default=labels[-2] if len(labels) > 1 else labels[-1])
state.remember(ss, qp, "schema_to", newer, default=labels[-1])

changes = history.between(by_label[older], by_label[newer])
if older == newer:
    st.info("The same version on both sides: pick two.")
elif not changes:
    st.success("No change between these two versions (meta fields and docs aside).")
else:
    kinds: dict[str, int] = {}
    for c in changes:
        kinds[c.change.value] = kinds.get(c.change.value, 0) + 1
    st.caption(f"{len(changes)} change(s) from `{older}` to `{newer}`: "
               + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in kinds.items())
               + ". Red: readers of data written with the older schema fail on it.")
    render.table(render.frame(schema_ui.diff_rows(changes)), "schema-diff", "schema_diff",
                 row_style=schema_ui.change_style, column_config={"reason": st.column_config.TextColumn(width="large")})

with st.expander(f"Fields of {newer}"):
    render.table(render.frame(schema_ui.fields_rows(by_label[newer])), "schema-fields", "schema_fields")
