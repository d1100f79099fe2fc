"""Log blocks: per file slice the block sequences (attempt by sequence number), the three verdicts
of the HUDI-6758 duplicate analysis (the proposal, Hudi 0.14.x's reader, the commit metadata) and
the risk flags where they disagree."""

from __future__ import annotations

from typing import Any

import streamlit as st

from hudi_core.dashboard import charts, loaders, overview, picker, render, state

uri, eng = picker.require_table()
ss, qp = st.session_state, st.query_params
st.title("Log blocks")
overview.hold_until_complete(uri, eng, "the commit bodies"
                             " (which log files each delta commit wrote) and the archived timeline")
st.caption("Block inventory of every log file (header scan) and the duplicate-block analysis per (file group, "
           "instant). Verdicts: **proposal** (longest sequence wins), **hudi_014** (0.14.x reader), "
           "**commit_metadata** (blocks in files the deltacommit names).")
with render.or_stop():
    loaders.ensure_fs_view(uri, eng)
    facts, _ = loaders.load_facts(uri, eng)
    groups = loaders.load_file_groups(uri, None, eng)

partitions = ["(all)", *groups.partitions]
state.init_widget(ss, qp, "partition", "(all)", valid=lambda v: v in partitions)
part = st.selectbox("Partition", partitions, key="partition",
                    format_func=lambda p: "(non-partitioned)" if p == "" else p)
state.remember(ss, qp, "partition", part, default="(all)")
log_count = sum(len(s["log_files"]) for s in groups.slices if part in ("(all)", s["partition"]))
if facts["table_type"] != "MERGE_ON_READ" and log_count == 0:
    st.info("This is a copy-on-write table: it has no log files.")
    st.stop()

bar = st.empty()  # a progress bar while the analysis is computed; reused analyses show none
with render.or_stop(bar.empty):
    blocks_result = loaders.load_log_blocks(
        uri, eng, None if part == "(all)" else part,
        progress=lambda f, text: bar.progress(min(max(f, 0.0), 1.0), text=text))
bar.empty()
inventory, analysis = blocks_result.inventory, blocks_result.analysis

risky = [a for a in analysis if a.risks]
dups = [a for a in analysis if a.has_duplicates]
m = st.columns(5)
m[0].metric("Log files", int(inventory["path"].nunique()) if not inventory.empty else 0)
m[1].metric("Blocks", len(inventory))
m[2].metric("Corrupt blocks", int(inventory["corrupt"].fillna(False).sum()) if not inventory.empty else 0)
m[3].metric("Instants with duplicates", len(dups))
m[4].metric("Risk flags", sum(len(a.risks) for a in analysis))

st.subheader("Risk flags")
if not risky:
    st.success("No risk: the reader rules agree with the commit metadata everywhere.")
MAX_FLAGS_SHOWN = 50  # one alert each: beyond this the verdicts table (riskiest first) and its CSV list them
flags = [(a, f) for a in risky for f in a.risks]
for a, f in flags[:MAX_FLAGS_SHOWN]:
    st.warning(f"**{f.code}** ({f.rule}) · `{a.file_id}` @ {a.instant_time}: {f.message}",
               icon=":material/dangerous:" if f.severity == "error" else ":material/warning:")
if len(flags) > MAX_FLAGS_SHOWN:
    st.caption(f"The first {MAX_FLAGS_SHOWN} of {len(flags):,} risk flags; the verdicts table below lists every "
               "pair with a flag first, and its CSV all of them.")

st.subheader("Verdicts per (file group, instant)")
RISK_ORDER = {"error": 0, "warning": 1, "info": 2}


def _verdict_row(a: Any) -> dict[str, Any]:
    return {
        "partition": a.partition, "file_id": a.file_id, "instant_time": a.instant_time,
        "attempts": " ".join(f"{x.key}[{','.join('-' if s is None else str(s) for s in x.seqs)}]"
                             for x in a.attempts),
        "rolled_back": a.rolled_back,
        "proposal": f"{a.verdict_proposal.status}: keeps {a.verdict_proposal.kept_attempts}",
        "hudi_014": f"{a.verdict_hudi_014.status}: keeps {a.verdict_hudi_014.kept_attempts}",
        "commit_metadata": f"{a.verdict_commit_metadata.status}: keeps {a.verdict_commit_metadata.kept_attempts}",
        "risk": a.risk_level, "corrupt_blocks": len(a.corrupt_blocks),
    }


# Risky pairs first; a browser is sent at most MAX_SHOWN_ROWS of them (a 10k-log-file table has ~10k pairs).
ranked = sorted(analysis, key=lambda a: RISK_ORDER.get(a.risk_level, 3))
verdicts = render.frame([_verdict_row(a) for a in ranked[:render.MAX_SHOWN_ROWS]])
if verdicts.empty:
    st.caption("No data or delete blocks found.")
else:
    colours = {"error": "#f8d7da", "warning": "#fff3cd", "info": "#e3f2fd"}
    shown_note = ("" if len(ranked) <= render.MAX_SHOWN_ROWS else
                  f" · the first {render.MAX_SHOWN_ROWS:,} of {len(ranked):,} pairs are shown, riskiest first; the CSV "
                  "holds all")
    render.table(verdicts, "log_block_verdicts", "verdicts_csv", caption="red: a reader rule disagrees with the "
                 "commit metadata (data loss or duplicates) · yellow: warning · blue: informational" + shown_note,
                 row_style=lambda r: f"background-color: {colours[r['risk']]}" if r["risk"] in colours else "",
                 csv_frame=lambda: render.frame([_verdict_row(a) for a in ranked]))
    render.json_download(lambda: [a.to_dict() for a in analysis], "duplicate_analysis", "analysis_json")

st.subheader("Block sequences per file slice")
slice_rows = [s for s in groups.slices if s["log_files"] and part in ("(all)", s["partition"])]
if not slice_rows:
    st.caption("No slice has log files.")
else:
    # Slices of risky file groups first, then the rest; the list offers at most MAX_SHOWN_ROWS of them.
    risky_groups = {(a.partition, a.file_id) for a in risky}
    slice_rows.sort(key=lambda s: (s["partition"], s["file_id"]) not in risky_groups)
    if len(slice_rows) > render.MAX_SHOWN_ROWS:
        st.caption(f"{len(slice_rows):,} slices have log files: the list offers the first {render.MAX_SHOWN_ROWS:,} "
                   "(risky ones first); choose a partition above to narrow it.")
        slice_rows = slice_rows[:render.MAX_SHOWN_ROWS]
    labels = [f"{s['partition'] or '(root)'} / {s['file_id']} @ {s['base_instant']}" for s in slice_rows]
    default = 0
    pick = st.selectbox("File slice", range(len(slice_rows)), index=default, format_func=lambda n: labels[n])
    chosen = slice_rows[pick]
    names = set(chosen["log_files"])
    blocks = inventory[inventory["path"].map(lambda p: p.rsplit("/", 1)[-1] in names)] if not inventory.empty \
        else inventory
    verdict = st.radio("Colour by verdict", ["commit_metadata", "proposal", "hudi_014"], horizontal=True)
    per_group = [a for a in analysis if a.file_id == chosen["file_id"] and a.partition == chosen["partition"]]
    block_frame = charts.log_block_rows(per_group)
    block_frame = block_frame[block_frame["path"].map(lambda p: str(p).rsplit("/", 1)[-1] in names)]
    st.plotly_chart(charts.log_blocks_figure(block_frame, verdict), key="log_blocks_chart", width="stretch")
    render.table(blocks, f"log_blocks_{chosen['file_id']}", "blocks_csv",
                 caption="Blocks in reader order (log files by instant, version, write token; then offset).")
