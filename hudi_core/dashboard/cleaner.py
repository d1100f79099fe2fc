"""The Cleaner & archival view: the cleaner's and archiver's dry runs for the form's configuration (the answer first,
the files to delete and keep, the releases compared, guards, decisions, the timeline before and after the archival,
the LSM side, the replaced file groups an archival would expose), drawn from a
:class:`~hudi_core.dashboard.sources.TableSource` (the table as opened, or the current state of a followed table)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from hudi_core.dashboard import frames, render, writers
from hudi_core.dashboard.loaders import DryRun
from hudi_core.dashboard.sources import Conf, TableSource
from hudi_core.services.releases import ListComparison

if TYPE_CHECKING:
    from hudi_core.services.clean import CleanPlan
    from hudi_core.services.lsm_archive import LsmArchivalPlan


def _shown(value: Any) -> str:
    """One release's value of a difference, as a cell: counts of compared lists, else the value."""
    if isinstance(value, ListComparison):
        return value.describe(3)
    return "–" if value is None else str(value)


def results(src: TableSource, conf: dict[str, str], guard: bool, release: str, answer_box: Any) -> None:
    """The dry runs of `conf` (with or without the HUDI-7779 `guard`, emulating Hudi `release`) on `src`'s table;
    the answer goes into `answer_box` (above the page's form), the rest where this is called."""
    key = tuple(sorted(conf.items()))
    # The spinner is gone once done (no clutter).
    with render.or_stop(), st.spinner("Planning the clean and the archival…", show_time=True):
        result = src.dry_run(key, guard, release)
    _answer(result, conf, guard, answer_box)
    _cleaner(result.clean)
    _releases(src, key)
    _archiver(src, result, key, guard, release)
    if result.archive.lsm is not None:
        _lsm(result.archive.lsm)
    _exposure(result, guard)


def _answer(result: DryRun, conf: dict[str, str], guard: bool, answer_box: Any) -> None:
    """The answer first (into `answer_box`), then what the emulation leaves out."""
    clean, archive, other = result.clean, result.archive, result.archive_other_guard
    to_archive = archive.to_archive
    exposed, other_exposed = archive.exposed_file_groups, other.exposed_file_groups
    binding = archive.binding_guard
    if archive.boundary_instant:
        stop = f"Archival stops at `{archive.boundary_instant}`: guard **{archive.boundary_guard or '?'}**"
        if binding is not None and binding.savepoint_bound:
            stop += " (HUDI-7779)"
    elif not to_archive:
        why = next((r for d in archive.decisions for r in d.reasons), "")
        stop = "Archival would not archive anything" + (f": {why}" if why else "")
    else:
        stop = "Archival has no boundary: no guard holds it back"
    answer = (f"{stop} · it would archive **{len(to_archive)}** instant(s) and expose "
              f"**{len(exposed) or 'no'}** replaced file group(s).")
    flip = "without" if guard else "with"
    answer += (f"  \n{flip.capitalize()} the HUDI-7779 guard it would archive {len(other.to_archive)} instant(s) and "
               f"expose {len(other_exposed) or 'no'} replaced file group(s).")
    with answer_box:
        render.incomplete_warning(missing_inputs=[*clean.missing_inputs, *archive.missing_inputs])
        render.verdict(answer, "bad" if exposed else "warn" if other_exposed else "good")
        if binding is not None:
            st.caption(f"Binding guard {binding.name}: {binding.detail}")
    st.caption(f"Emulating Hudi {clean.config.release_label} · configuration: "
               + (", ".join(f"`{k}={v}`" for k, v in conf.items()) or "Hudi defaults")
               + f" · guard {'on' if guard else 'off'}")
    clean_not_emulated = clean.config.not_emulated()
    for item in [*clean_not_emulated, *[n for n in archive.config.not_emulated()
                                        if n not in clean_not_emulated]]:
        st.warning(f"Not emulated: `{item['key']}={item['value']}`: {item['reason']}.", icon=":material/info:")
    for item in archive.config.unverified_keys():
        st.warning(f"Unverified key: `{item['key']}={item['value']}`: {item['reason']}.", icon=":material/info:")
    derived = clean.metadata_table_config or archive.metadata_table_config
    if derived:
        st.info("**Metadata table**: Hudi derives its cleaner and archiver settings from the data table's "
                "configuration (the form's values are the data table's):\n"
                + "\n".join(f"- {line}" for line in derived),
                icon=":material/account_tree:")
    render.json_download(result.to_dict, "dry_run", "dry_run_json")


def _cleaner(clean: CleanPlan) -> None:
    st.header("Cleaner")
    scheduled, not_scheduled = clean.would_schedule, clean.not_scheduled_reason
    forced_files = clean.files_if_forced
    render.facts([
        render.Fact("Policy", clean.policy, mono=True),
        render.Fact("ECTR (next clean)", clean.ectr or "none", sub=clean.ectr_detail or ""),
        render.Fact("ECTNA proposed / Hudi", clean.earliest_commit_to_not_archive_proposed or "–",
                    sub=f"Hudi: {clean.earliest_commit_to_not_archive_hudi or '–'}", mono=True),
        render.Fact("Would schedule", "yes" if scheduled else "no", sub="" if scheduled else str(not_scheduled),
                    tone="" if scheduled else "warn"),
        render.Fact("Files to delete (next clean)", len(clean.files_to_delete),
                    tone="warn" if clean.files_to_delete else ""),
        render.Fact("If forced", len(forced_files), sub="files a forced clean would delete"),
        render.Fact("Files kept", len(clean.kept)),
    ])
    st.markdown(f"- **Trigger**: {clean.trigger_detail}\n"
                f"- **Partitions** ({clean.partition_mode}): {clean.partition_detail}")
    writers.clean_rollbacks(clean)
    for pending in clean.pending_cleans:
        st.warning(f"A {pending.state} clean {pending.requested_time} runs first ({pending.files} files).")
    empty = clean.empty_clean
    if empty is not None:
        st.info(f"Empty clean (Hudi 1.2, `hoodie.write.empty.clean.interval.hours`): "
                f"**{'written now' if empty.would_write else 'not now'}** — {empty.detail}"
                + (f" · ECTR recorded: `{empty.earliest_commit_to_retain}`" if empty.would_write else ""))
    if clean.planning_failure is not None:
        # A warning, not an error box: error boxes mean the inspector itself failed.
        st.warning(f"Hudi's clean planning would **fail**: {clean.planning_failure}. No plan is written and "
                   "**nothing is deleted**, forced or not.", icon=":material/error:")
    elif not scheduled:
        st.warning(f"Hudi would **not** schedule this clean: {clean.not_scheduled_detail}. "
                   f"**Nothing is deleted.** A forced clean would delete {len(forced_files)} file(s), listed "
                   "separately below.", icon=":material/block:")
    # One table under the other, full width: file ids and names are long (side by side they were cut).
    st.subheader(f"Files to delete by the next clean ({len(clean.files_to_delete)})")
    if clean.files_to_delete:
        render.decisions_table(clean.files_to_delete, "clean_files_to_delete", "clean_delete", "files")
    elif not scheduled:
        st.caption(f"None: the clean is not scheduled ({not_scheduled}).")
    else:
        st.caption("None: every file is still needed under this policy.")
    if not scheduled and forced_files:
        st.subheader(f"If forced: files a forced clean would delete ({len(forced_files)})")
        st.caption("Not deleted by the next clean: only if the trigger were met and no clean were pending.")
        render.decisions_table(forced_files, "clean_files_to_delete_if_forced", "clean_delete_forced", "files")
    st.subheader(f"Files kept, with reason ({len(clean.kept)})")
    if clean.kept:
        render.decisions_table(clean.kept, "clean_files_kept", "clean_kept", "files")
    else:
        st.caption("None listed: Hudi's planning fails before it looks at a file." if clean.planning_failure
                   else "None listed: the cleaner has no earliest commit to retain, so it looks at no file.")


def _releases(src: TableSource, key: Conf) -> None:
    """Both releases' plans compared, on request."""
    if st.toggle("Compare Hudi 1.1 and 1.2 on this table", key="conf::compare_releases",
                 help="Plan the clean and the archival under both releases from this configuration and list every "
                      "point where they differ (two more dry runs)."):
        try:
            with st.spinner("Planning under both releases…", show_time=True):
                comparison = src.release_comparison(key)
        except Exception as exc:  # every error becomes a readable message
            render.show_error(exc)
        else:
            if comparison.agree:
                st.success("Hudi 1.1 and 1.2 plan the same clean and archival for this table and configuration.")
            else:
                st.warning(f"Hudi 1.1 and 1.2 differ on {len(comparison.differences)} point(s):",
                           icon=":material/compare_arrows:")
                render.table(render.frame([{"aspect": d.aspect, **{k: _shown(v) for k, v in d.values.items()},
                                            "why": d.why} for d in comparison.differences]),
                             "release_differences", "release_differences")


def _archiver(src: TableSource, result: DryRun, key: Conf, guard: bool, release: str) -> None:
    archive = result.archive
    to_archive = archive.to_archive
    st.header("Archiver")
    decisions = render.frame([{**d.to_dict(), "reasons": "; ".join(d.reasons)} for d in archive.decisions])
    render.facts([
        render.Fact("Archiver", archive.archiver, mono=True),
        render.Fact("Keep min / max", f"{archive.min_to_keep} / {archive.max_to_keep}",
                    sub=archive.min_max_detail or ""),
        render.Fact("Boundary", archive.boundary_instant or "none"),
        render.Fact("Binding guard", archive.boundary_guard or "none", mono=archive.boundary_guard is not None),
        render.Fact("Instants to archive", len(to_archive), tone="warn" if to_archive else ""),
    ])
    st.subheader("Guards")
    guards = render.frame([g.to_dict() for g in archive.guards])
    if not guards.empty:
        render.table(guards, "archive_guards", "guards_csv",
                     caption="The binding guard (highlighted) sets the boundary: instants at or after it stay active.",
                     row_style=lambda r: "background-color: #fff3cd" if r["binding"] else "",
                     column_config={"detail": st.column_config.TextColumn(width="large")})
        render.json_download([g.to_dict() for g in archive.guards], "archive_guards", "guards_json")
    n_keep = int((decisions["decision"] == "keep").sum()) if not decisions.empty else 0
    st.subheader(f"Decisions ({len(to_archive)} archive · {n_keep} keep)")
    if not decisions.empty:
        render.table(decisions, "archive_decisions", "archive_decisions",
                     row_style=lambda r: "background-color: #fde0dc" if r["decision"] == "archive" else "",
                     column_config={"reasons": st.column_config.TextColumn(width="large")})
    else:
        st.caption("The archiver considers no instant (the active timeline is too short).")

    st.subheader("Timeline before and after the archival")
    before_after = src.before_after(key, guard, release)
    st.plotly_chart(before_after.figure, key="before_after", width="stretch")
    if before_after.archived_not_drawn:
        st.caption(f"The active timeline and the newest {frames.ARCHIVED_CONTEXT_ROWS:,} archived instants are "
                   f"drawn; {before_after.archived_not_drawn:,} older archived instants are not (an archival never "
                   "moves them; the Overview draws the whole timeline).")


def _lsm(lsm: LsmArchivalPlan) -> None:
    """What Hudi's LSMTimelineWriter does after choosing the instants (layout 2)."""
    st.subheader("LSM timeline after this archival")
    st.caption("What Hudi's LSMTimelineWriter does once the instants are chosen: one L0 file and a new snapshot, "
               "then compaction of full levels and cleaning of old snapshots (layout 2 only).")
    kept = lsm.most_versions_kept
    render.facts([
        render.Fact("Snapshot", f"{lsm.latest_version} → {lsm.final_version}", sub=lsm.version_source, mono=True),
        render.Fact("Compactions", lsm.compactions),
        render.Fact("Snapshots kept", kept, sub=lsm.retained_rule),
        render.Fact("Files deleted", len(lsm.deletions), tone="warn" if lsm.deletions else "",
                    sub=f"{len(lsm.manifests_deleted)} manifest(s), {len(lsm.data_files_deleted)} data file(s)"),
    ])
    if lsm.failure:
        st.warning(f"Hudi's archiver would fail here: {lsm.failure}", icon=":material/error:")
    steps = render.frame([{**s.to_dict(), "inputs": ", ".join(s.inputs)} for s in lsm.steps])
    if not steps.empty:
        render.table(steps, "lsm_steps", "lsm_steps", caption="Files this archival writes, in order; each with "
                     "the snapshot version it commits.",
                     column_config={"detail": st.column_config.TextColumn(width="large")})
    if lsm.versions_kept is None and not lsm.failure:
        st.caption(f"{lsm.snapshot_count} snapshot(s), at most {kept} kept: cleaning deletes nothing.")
    elif lsm.deletions:
        kept_versions = ", ".join(map(str, lsm.versions_kept or []))
        render.table(render.frame([d.to_dict() for d in lsm.deletions]), "lsm_deletions", "lsm_deletions",
                     caption=f"Deleted by cleaning (it keeps snapshots {kept_versions}).")
    for note in lsm.notes:
        st.caption(note)


def _exposure(result: DryRun, guard: bool) -> None:
    """The replaced file groups this archival, and the one with the guard flipped, would expose."""
    to_archive, other_archive = result.archive.to_archive, result.archive_other_guard.to_archive
    exposed = render.frame([e.to_dict() for e in result.archive.exposed_file_groups])
    other_exposed = render.frame([e.to_dict() for e in result.archive_other_guard.exposed_file_groups])
    st.subheader("Replaced file groups an archival would expose")
    unguarded = other_exposed if guard else exposed
    danger = "background-color: #f8d7da"
    if not exposed.empty:
        st.warning(f"This archival would expose {len(exposed)} replaced file group(s): readers would see them "
                   "next to their replacement (duplicates).", icon=":material/dangerous:")
        render.table(exposed, "exposed_file_groups", "exposed", row_style=lambda r: danger)
    else:
        st.success("This archival exposes no replaced file group.")
    if guard:
        if unguarded.empty:
            st.caption("Without the HUDI-7779 guard the archival would not expose any file group either.")
        else:
            st.warning(f"Without the HUDI-7779 guard the archival would expose {len(unguarded)} replaced file "
                       "group(s):", icon=":material/dangerous:")
            render.table(unguarded, "exposed_file_groups_unguarded", "exposed_unguarded", row_style=lambda r: danger)
    diff = sorted({i.requested_time for i in other_archive} ^ {i.requested_time for i in to_archive})
    if diff:
        st.info(f"Flipping the guard changes the decision for {len(diff)} instant(s): "
                + ", ".join(f"`{t}`" for t in diff[:20]) + (" …" if len(diff) > 20 else ""))
