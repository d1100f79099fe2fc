"""The writers on the dashboard: pending writes and their heartbeats (Overview), the dead writer that holds the
table back (Health, first), and the rollbacks a LAZY clean makes first (Cleaner & archival). Renders what
:mod:`hudi_core.services.writers` computes; reads no file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from hudi_core.dashboard import render
from hudi_core.services.writers import PendingWrite, WritersReport, WriterStatus, human_ms

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from hudi_core.services.clean import CleanPlan
    from hudi_core.services.doctor import DoctorReport
    from hudi_core.services.writers import Concurrency

_WRITER = {WriterStatus.ALIVE: "alive", WriterStatus.EXPIRED: "dead: heartbeat expired",
           WriterStatus.NO_HEARTBEAT: "no heartbeat file"}
_BY = {"next_write": "the next write", "next_clean": "the next clean"}


def _beat(p: PendingWrite) -> str:
    if not p.heartbeat.file_present:
        return "none (counts as time 0)"
    return f"{p.heartbeat_time} ({human_ms(p.heartbeat.age_ms)} ago)"


def rows(report: WritersReport) -> list[dict[str, Any]]:
    """One display row per pending write."""
    return [{"instant": p.instant, "action": p.action, "state": p.state.lower(), "writer": _WRITER[p.writer],
             "last heartbeat": _beat(p), "rolled back by": _BY.get(p.rollback.value, "") if p.rollback else "nobody",
             "why": p.rollback_reason} for p in report.pending]


def settings_line(report: WritersReport) -> str:
    s = report.settings
    return (f"Heartbeat every {human_ms(s.interval_ms)}, expired after {s.tolerable_misses} misses = "
            f"{human_ms(s.expiry_ms)}; failed writes {s.failed_writes_policy} ({s.failed_writes_policy_source}).")


def overview_section(report: WritersReport, concurrency: go.Figure | None = None) -> None:
    """The Overview's Writers section: is each pending write's writer alive, and who rolls it back; writes that
    ran at the same time drawn on one time axis (`concurrency`: the figure of
    `hudi_core.dashboard.charts.concurrency_figure` for the report)."""
    st.subheader("Writers")
    if concurrency is not None and report.concurrency is not None:
        _concurrency(report.concurrency, concurrency)
    if not report.pending and not report.markers and report.lock is None:
        st.caption("No pending write, no markers, no lock file.")
        return
    dead = [p for p in report.pending if p.writer is WriterStatus.EXPIRED]
    if dead:
        st.warning("**Dead writer**: " + "; ".join(f"{p.action} `{p.instant}` (heartbeat stopped "
                                                     f"{human_ms(p.heartbeat.age_ms)} ago)" for p in dead),
                   icon=":material/heart_broken:")
    if report.pending:
        render.table(render.frame(rows(report)), "pending_writes", "pending_writes", caption=settings_line(report),
                     column_config={"why": st.column_config.TextColumn(width="large")})
    notes = []
    if report.lock is not None:
        lock = report.lock
        state = "unreadable" if lock.error else "released" if lock.released else "held" if lock.held \
            else "held past its expiry"
        notes.append(f"lock `{lock.path}`: {state}" + (f", owner {lock.owner}" if lock.owner else ""))
    notes += [f"markers of `{m.instant}`: {m.count} {m.marker_type.lower()}"
              f"{' (instant completed: left behind)' if m.completed else ''}" for m in report.markers]
    if notes:
        st.markdown("\n".join(f"- {n}" for n in notes))


def _concurrency(conc: Concurrency, fig: go.Figure) -> None:
    """Concurrent writes and likely conflicts (:class:`~hudi_core.services.writers.Concurrency`) as a chart."""
    st.plotly_chart(fig, key="concurrency_chart", width="stretch", config={"displaylogo": False})
    st.caption(f"{len(conc.concurrent)} pair(s) of completed writes ran at the same time (blue); "
               f"{len(conc.likely_conflicts)} rolled-back write(s) (red, dashed to the rollback) were pending when "
               "a completed write (orange) committed on a common file group: a likely write conflict. Hover a bar "
               "for the file groups.")


def pending_instant_note(report: WritersReport, instant: str) -> None:
    """On the Instant detail page of a pending write: its writer's heartbeat and who rolls it back."""
    p = next((x for x in report.pending if x.instant == instant), None)
    if p is None:
        return
    by = _BY.get(p.rollback.value, "") if p.rollback else "nobody"
    text = (f"**Writer: {_WRITER[p.writer]}** · last heartbeat {_beat(p)} · rolled back by **{by}**: "
            f"{p.rollback_reason}. {settings_line(report)}")
    if p.writer is WriterStatus.ALIVE:
        st.info(text, icon=":material/favorite:")
    else:
        st.warning(text, icon=":material/heart_broken:")


def dead_writer_first(report: WritersReport, doctor: DoctorReport) -> None:
    """On the Health page, before the findings: each dead writer whose pending write holds back cleaning,
    compaction or archival (what the `pending_instant` check lists it blocks)."""
    blocks = {f.evidence.instants[0]: f.evidence.blocks for f in doctor.of("pending_instant") if f.evidence.instants}
    for p in report.pending:
        held = blocks.get(p.instant, ())
        if p.writer is not WriterStatus.EXPIRED or not held:
            continue
        by = _BY.get(p.rollback.value, "") if p.rollback else "nobody"
        st.warning(f"**Dead writer holds the table back**: {p.action} `{p.instant}` is {p.state.lower()}; its "
                   f"heartbeat stopped {human_ms(p.heartbeat.age_ms)} ago (last {p.heartbeat_time}, expiry "
                   f"{human_ms(report.settings.expiry_ms)}). It blocks: " + "; ".join(held) + ". "
                   f"Rolled back by **{by}**: {p.rollback_reason}.", icon=":material/heart_broken:")


def clean_rollbacks(clean: CleanPlan) -> None:
    """On the Cleaner page: the failed writes a LAZY clean rolls back before it plans."""
    first = clean.rollbacks_first
    if first is None or first.failed_writes_policy != "LAZY":
        return
    if not first.rollbacks:
        st.caption(f"Failed writes: {first.detail}.")
        return
    st.warning(f"**The clean first rolls back {len(first.rollbacks)} failed write(s)** (LAZY): "
               + "; ".join(f"`{r.instant}` ({r.writer or 'pending rollback'}"
                           + (f", last heartbeat {r.heartbeat_time}" if r.heartbeat_time else "") + ")"
                           for r in first.rollbacks), icon=":material/undo:")
    render.table(render.frame([r.to_dict() for r in first.rollbacks]), "clean_rollbacks_first", "clean_rollbacks",
                 column_config={"reason": st.column_config.TextColumn(width="large")})
