"""Health: the doctor's findings, worst first, each with its evidence, why it matters and what to do;
and the shareable postmortem report (one HTML file that opens offline)."""

from __future__ import annotations

import streamlit as st

from hudi_core.dashboard import loaders, overview, picker, render, writers
from hudi_core.errors import Severity
from hudi_core.services.config import DEFAULT_HUDI_RELEASE

uri, eng = picker.require_table()
st.title("Health")
overview.hold_until_complete(uri, eng, "every commit body, the archived timeline and the table's files"
                             " (every health check)")
verdict_box = st.container()
st.caption("Health checks computed read-only from the table (the same as `hudi-inspect doctor`). Ages are "
           "measured from now.")
guard = st.toggle(f"HUDI-7779 guard (Hudi {DEFAULT_HUDI_RELEASE}.x's archiver, as the dry runs emulate)", value=True,
                  help="Off: plan archival as Hudi releases without the guard would (the risk for older writers).")
with render.or_stop():
    report = loaders.load_doctor(uri, eng, guard)
# The verdict judged from this report, drawn above it: on a heavy table the Overview's comes from the quick checks.
with verdict_box, render.guard():
    render.table_verdict(loaders.load_health_verdict(uri, eng, guard), health_link=False)

# A dead writer that holds cleaning, compaction or archival back is named right after the verdict.
with render.guard():
    writers.dead_writer_first(loaders.load_writers(uri, eng), report)

counts = {s: sum(1 for f in report.findings if f.severity is s) for s in Severity}
status = report.worst.value if report.worst else "healthy"
tone = {"error": "bad", "warning": "warn", "healthy": "good"}.get(status, "info")
render.verdict(f"**{status}**: {counts[Severity.ERROR]} errors, {counts[Severity.WARNING]} warnings, "
               f"{counts[Severity.INFO]} info ({len(report.checks)} checks)", tone)

ICONS = {Severity.ERROR: ":material/dangerous:", Severity.WARNING: ":material/warning:",
         Severity.INFO: ":material/info:"}
for f in report.findings:
    with st.expander(f"{f.severity.value.upper()} · {f.check} · {f.title}", icon=ICONS[f.severity],
                     expanded=f.severity is Severity.ERROR):
        st.markdown(f"**Why it matters.** {f.why}")
        st.markdown(f"**What to do.** {f.what_to_do}")
        st.json(render.shown_evidence(f.evidence), expanded=True)

st.subheader("Metadata table vs storage")
with render.guard():
    validation = loaders.load_metadata_validation(uri, eng)
    if validation is None:
        st.caption("The table has no metadata table: Hudi lists its files from storage.")
    else:
        render.metadata_validation(validation)

st.subheader("Postmortem report")
redacted = st.checkbox("Redact the table's path and bucket", value=False)
if st.button("Prepare the report", help="One HTML file with facts, the timeline chart, these findings and both "
                                        "dry-runs; it opens offline."):
    with render.guard():
        html_text = loaders.load_report_html(uri, eng, redacted)
        st.download_button("Download report.html", html_text.encode("utf-8"), file_name="report.html",
                           mime="text/html")
