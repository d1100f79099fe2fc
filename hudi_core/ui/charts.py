"""Plotly figure builders for the dashboard. Pure: data in, figure out (unit-tested).

The timeline chart draws one lane per action, a bar from requested to completion time per
instant (pending instants run to the end of the chart, dashed), colours by state, shaded active
and archived regions, and vertical markers (ECTR, EarliestCommitToNotArchive, savepoints, the
archival boundary). Traces are WebGL (`Scattergl`), one per (source, state): 10,000 instants stay
smooth; above `aggregate_above` instants the bars are replaced by per-lane time buckets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hudi_core.ui.markers import KIND_LABELS, Marker

STATE_COLOURS = {"COMPLETED": "#2e7d32", "INFLIGHT": "#f9a825", "REQUESTED": "#c62828"}
ARCHIVED_COLOUR = "#78909c"
MARKER_STYLES: dict[str, tuple[str, str]] = {
    "ectr_recorded": ("#1565c0", "solid"),
    "ectr_recomputed": ("#42a5f5", "dash"),
    "ectna_recorded": ("#6a1b9a", "solid"),
    "ectna_proposed": ("#ab47bc", "dash"),
    "ectna_hudi": ("#4a148c", "dot"),
    "savepoint": ("#ef6c00", "dashdot"),
    "archival_boundary": ("#37474f", "longdash"),
    "other": ("#9e9e9e", "dot"),
}
LANE_ORDER = ["commit", "deltacommit", "replacecommit", "clustering", "compaction", "logcompaction", "clean",
              "rollback", "restore", "savepoint", "indexing"]
_PLANNED_LANES = {"compaction", "clustering", "logcompaction", "indexing"}
HOVER_REPLACED_LIMIT = 8
#: Short marker labels drawn on the chart (the legend and hover carry the full names).
SHORT_LABELS = {"ectr_recorded": "ECTR", "ectr_recomputed": "ECTR next", "ectna_recorded": "ECTNA rec.",
                "ectna_proposed": "ECTNA prop.", "ectna_hudi": "ECTNA Hudi", "savepoint": "SP",
                "archival_boundary": "archive ▸", "active_start": "archived | active"}


def instant_datetimes(values: Iterable[Any]) -> pd.Series:
    """Instant times (``yyyyMMddHHmmss[SSS]``) as naive datetimes; odd values become NaT."""
    s = pd.Series(list(values), dtype="string")
    padded = s.str.slice(0, 17).str.pad(17, side="right", fillchar="0")
    return pd.to_datetime(padded, format="%Y%m%d%H%M%S%f", errors="coerce")


def lane_of(pending_action: str | None, completed_action: str | None) -> str:
    """The chart lane: what the instant was planned as for table services, else its action."""
    if pending_action in _PLANNED_LANES:
        return str(pending_action)
    return str(completed_action or pending_action or "?")


def prepare_instants(instants: pd.DataFrame) -> pd.DataFrame:
    """Add `lane`, `start`, `end` (datetimes) and `duration_s` to an instants frame.

    Expects the columns of `table.inspect.instants()` (requested_time, action, state,
    pending_action, completed_action, completion_time, source; operation_type optional).
    """
    df = instants.copy()
    if df.empty:
        for col, dtype in (("lane", "object"), ("start", "datetime64[ns]"), ("end", "datetime64[ns]"),
                           ("duration_s", "float64")):
            df[col] = pd.Series(dtype=dtype)
        return df
    df["lane"] = [lane_of(p, c) for p, c in zip(df["pending_action"], df["completed_action"], strict=True)]
    df["start"] = instant_datetimes(df["requested_time"]).to_numpy()
    df["end"] = instant_datetimes(df["completion_time"].fillna("")).to_numpy()
    df["duration_s"] = (df["end"] - df["start"]).dt.total_seconds()
    if "source" not in df:
        df["source"] = "active"
    return df


def lanes_in(df: pd.DataFrame) -> list[str]:
    """Lanes present, in the fixed chart order (unknown actions last, alphabetically)."""
    present = set(df["lane"]) if "lane" in df else set()
    return [lane for lane in LANE_ORDER if lane in present] + sorted(present - set(LANE_ORDER))


def counts_by_action_and_state(instants: pd.DataFrame) -> pd.DataFrame:
    """Counts per action (lane) and state, plus totals, for the overview table."""
    df = prepare_instants(instants)
    if df.empty:
        return pd.DataFrame(columns=["action", "COMPLETED", "INFLIGHT", "REQUESTED", "total"])
    pivot = df.pivot_table(index="lane", columns="state", values="requested_time", aggfunc="count", fill_value=0)
    for state in STATE_COLOURS:
        if state not in pivot:
            pivot[state] = 0
    pivot = pivot[list(STATE_COLOURS)]
    pivot["total"] = pivot.sum(axis=1)
    pivot = pivot.reindex([lane for lane in lanes_in(df)])
    return pivot.reset_index().rename(columns={"lane": "action"}).astype(
        {s: "int64" for s in [*STATE_COLOURS, "total"]})


def _hover(row: Any, replaced: Mapping[str, Sequence[str]]) -> str:
    parts = [f"<b>{row.action}</b> {row.requested_time}", f"state {row.state} ({row.source})"]
    if isinstance(row.completion_time, str) and row.completion_time:
        parts.append(f"completed {row.completion_time}")
        if pd.notna(row.duration_s):
            parts.append(f"duration {row.duration_s:.3f} s")
    op = getattr(row, "operation_type", None)
    if isinstance(op, str) and op:
        parts.append(f"operation {op}")
    groups = replaced.get(row.requested_time)
    if groups:
        shown = list(groups)[:HOVER_REPLACED_LIMIT]
        more = len(groups) - len(shown)
        parts.append(f"replaced {len(groups)} file group(s):<br>  " + "<br>  ".join(shown)
                     + (f"<br>  … {more} more" if more > 0 else ""))
    return "<br>".join(parts)


def _colour(state: str, source: str) -> str:
    if source != "active" and state == "COMPLETED":
        return ARCHIVED_COLOUR
    return STATE_COLOURS.get(state, "#9e9e9e")


def _add_bars(fig: go.Figure, df: pd.DataFrame, replaced: Mapping[str, Sequence[str]], chart_end: Any,
              row: int | None, showlegend: bool) -> None:
    sub = {"row": row, "col": 1} if row else {}
    for (source, state), part in df.groupby(["source", "state"], sort=True):
        colour = _colour(str(state), str(source))
        name = f"{state.lower()}" + ("" if source == "active" else f" ({source})")
        ends = part["end"].where(part["end"].notna(), chart_end)
        xs: list[Any] = []
        ys: list[Any] = []
        for start, end, lane in zip(part["start"], ends, part["lane"], strict=True):
            xs.extend((start, end, None))
            ys.extend((lane, lane, None))
        pending = state != "COMPLETED"
        fig.add_trace(go.Scattergl(x=xs, y=ys, mode="lines", name=name, legendgroup=name, showlegend=False,
                                   line={"color": colour, "width": 6 if not pending else 3,
                                         "dash": "dash" if pending else "solid"},
                                   hoverinfo="skip"), **sub)
        fig.add_trace(go.Scattergl(
            x=part["start"], y=part["lane"], mode="markers", name=name, legendgroup=name, showlegend=showlegend,
            marker={"color": colour, "size": 9 if pending else 7, "symbol": "diamond" if pending else "circle",
                    "line": {"width": 1, "color": "#ffffff"}},
            hovertext=[_hover(r, replaced) for r in part.itertuples(index=False)], hoverinfo="text",
            customdata=part["requested_time"],
        ), **sub)


def _aggregate(fig: go.Figure, df: pd.DataFrame, max_buckets: int, row: int | None, showlegend: bool) -> None:
    sub = {"row": row, "col": 1} if row else {}
    span = (df["start"].max() - df["start"].min()) or pd.Timedelta(seconds=1)
    freq = max(span / max_buckets, pd.Timedelta(milliseconds=1))
    buckets = df.assign(bucket=df["start"].dt.floor(freq))
    grouped = buckets.groupby(["source", "state", "lane", "bucket"]).size().reset_index(name="n")
    peak = max(int(grouped["n"].max()), 1)
    for (source, state), part in grouped.groupby(["source", "state"], sort=True):
        name = f"{state.lower()}" + ("" if source == "active" else f" ({source})") + " (bucketed)"
        fig.add_trace(go.Scattergl(
            x=part["bucket"], y=part["lane"], mode="markers", name=name, showlegend=showlegend,
            marker={"color": _colour(str(state), str(source)), "size": 4 + 14 * (part["n"] / peak) ** 0.5,
                    "symbol": "square"},
            hovertext=[f"{n} {lane} instants ({state}) from {b}" for n, lane, b in
                       zip(part["n"], part["lane"], part["bucket"], strict=True)], hoverinfo="text",
        ), **sub)


def _add_regions(fig: go.Figure, df: pd.DataFrame, chart_end: Any, row: int | None) -> None:
    sub = {"row": row, "col": 1} if row else {}
    active = df[df["source"] == "active"]
    archived = df[df["source"] != "active"]
    if not archived.empty:
        a_end = active["start"].min() if not active.empty else archived["start"].max()
        fig.add_vrect(x0=archived["start"].min(), x1=a_end, fillcolor=ARCHIVED_COLOUR, opacity=0.12,
                      layer="below", line_width=0, name="archived region", **sub)
    if not active.empty:
        fig.add_vrect(x0=active["start"].min(), x1=chart_end, fillcolor=STATE_COLOURS["COMPLETED"], opacity=0.05,
                      layer="below", line_width=0, name="active region", **sub)


def _add_markers(fig: go.Figure, markers: Sequence[Marker], row: int | None, axis_suffix: str) -> None:
    for n, m in enumerate(sorted(markers, key=lambda m: (m.time, m.kind))):
        x = instant_datetimes([m.time]).iloc[0]
        if pd.isna(x):
            continue
        colour, dash = MARKER_STYLES.get(m.kind, MARKER_STYLES["other"])
        fig.add_shape(type="line", x0=x, x1=x, xref=f"x{axis_suffix}", y0=0, y1=1, yref=f"y{axis_suffix} domain",
                      line={"color": colour, "dash": dash, "width": 2}, name=m.kind)
        fig.add_annotation(x=x, xref=f"x{axis_suffix}", y=1 - 0.09 * (n % 5), yref=f"y{axis_suffix} domain",
                           text=SHORT_LABELS.get(m.kind, m.label), showarrow=False, xanchor="left",
                           font={"size": 10, "color": colour},
                           bgcolor="rgba(255,255,255,0.7)", hovertext=f"{m.label}: {m.time} ({m.source}) {m.detail}",
                           name=m.kind)


def _marker_legend(fig: go.Figure, markers: Sequence[Marker]) -> None:
    for kind in dict.fromkeys(m.kind for m in markers):
        colour, dash = MARKER_STYLES.get(kind, MARKER_STYLES["other"])
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=KIND_LABELS.get(kind, kind),
                                 line={"color": colour, "dash": dash}, hoverinfo="skip"))


def _add_highlight(fig: go.Figure, df: pd.DataFrame, highlight: Iterable[str], label: str, row: int | None) -> None:
    wanted = set(highlight)
    part = df[df["requested_time"].isin(wanted)] if wanted else df.iloc[0:0]
    if part.empty:
        return
    sub = {"row": row, "col": 1} if row else {}
    fig.add_trace(go.Scattergl(x=part["start"], y=part["lane"], mode="markers", name=label,
                               marker={"symbol": "circle-open", "size": 16, "color": "#d50000",
                                       "line": {"width": 2}},
                               hovertext=[f"{label}: {a} {t}" for a, t in
                                          zip(part["action"], part["requested_time"], strict=True)],
                               hoverinfo="text"), **sub)


def _chart_end(df: pd.DataFrame) -> Any:
    latest = pd.concat([df["start"], df["end"]]).max()
    earliest = df["start"].min()
    pad = (latest - earliest) * 0.02 if pd.notna(latest) and pd.notna(earliest) else pd.Timedelta(0)
    return latest + max(pad, pd.Timedelta(seconds=1)) if pd.notna(latest) else None


def timeline_figure(instants: pd.DataFrame, markers: Sequence[Marker] = (),
                    replaced: Mapping[str, Sequence[str]] | None = None, *, highlight: Iterable[str] = (),
                    highlight_label: str = "highlighted", title: str | None = None,
                    aggregate_above: int = 50_000, max_buckets: int = 1500) -> go.Figure:
    """The timeline chart of an instants frame (see the module docstring).

    `replaced` maps a replacecommit's requested time to the file groups it replaced (shown on
    hover); `highlight` circles instants (e.g. the ones an archival would archive).
    """
    df = prepare_instants(instants)
    fig = go.Figure()
    df = df[df["start"].notna()] if not df.empty else df
    lanes = lanes_in(df)
    if df.empty:
        fig.add_annotation(text="no instants to show", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    else:
        end = _chart_end(df)
        _add_regions(fig, df, end, None)
        if len(df) > aggregate_above:
            _aggregate(fig, df, max_buckets, None, True)
        else:
            _add_bars(fig, df, replaced or {}, end, None, True)
        _add_highlight(fig, df, highlight, highlight_label, None)
    _add_markers(fig, markers, None, "")
    _marker_legend(fig, markers)
    fig.update_yaxes(categoryorder="array", categoryarray=list(reversed(lanes)), type="category", title=None)
    fig.update_xaxes(type="date", title="requested → completion time (table timezone)")
    fig.update_layout(title=title, height=max(260, 120 + 48 * len(lanes)), hovermode="closest",
                      margin={"l": 10, "r": 10, "t": 40 if title else 20, "b": 10},
                      legend={"orientation": "h", "y": -0.25}, uirevision="timeline")
    return fig


def before_after_figure(before: pd.DataFrame, after: pd.DataFrame, markers_before: Sequence[Marker] = (),
                        markers_after: Sequence[Marker] = (), *, highlight: Iterable[str] = (),
                        highlight_label: str = "changes", titles: tuple[str, str] = ("Before", "After")) -> go.Figure:
    """Two timelines on a shared time axis: before and after a dry-run (or a scenario step)."""
    b = prepare_instants(before)
    a = prepare_instants(after)
    b = b[b["start"].notna()] if not b.empty else b
    a = a[a["start"].notna()] if not a.empty else a
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, subplot_titles=titles, vertical_spacing=0.12)
    lanes = lanes_in(pd.concat([b, a])) if not (a.empty and b.empty) else []
    end_candidates = [x for x in (_chart_end(b) if not b.empty else None, _chart_end(a) if not a.empty else None)
                      if x is not None]
    end = max(end_candidates) if end_candidates else None
    highlight = list(highlight)
    for row, df, marks in ((1, b, markers_before), (2, a, markers_after)):
        if not df.empty:
            _add_regions(fig, df, end, row)
            _add_bars(fig, df, {}, end, row, row == 1)
            _add_highlight(fig, df, highlight, highlight_label, row)
        _add_markers(fig, marks, row, "" if row == 1 else "2")
    _marker_legend(fig, [*markers_before, *markers_after])
    fig.update_yaxes(categoryorder="array", categoryarray=list(reversed(lanes)), type="category")
    fig.update_xaxes(type="date")
    fig.update_layout(height=max(420, 2 * (100 + 40 * len(lanes))), hovermode="closest",
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, legend={"orientation": "h", "y": -0.15})
    return fig


def counts_figure(counts: pd.DataFrame) -> go.Figure:
    """Stacked bars of :func:`counts_by_action_and_state` (one colour per state)."""
    fig = go.Figure()
    for state, colour in STATE_COLOURS.items():
        if state in counts:
            fig.add_trace(go.Bar(x=counts["action"], y=counts[state], name=state.lower(), marker_color=colour))
    fig.update_layout(barmode="stack", height=260, margin={"l": 10, "r": 10, "t": 20, "b": 10},
                      legend={"orientation": "h"})
    return fig


VERDICT_COLOURS = {"keep": "#2e7d32", "committed": "#2e7d32", "drop": "#c62828", "spurious": "#c62828",
                   "rolled_back": "#9e9e9e", "mixed": "#f9a825", "unknown": "#90a4ae"}


def log_block_rows(analysis: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per block of an analysis (`InstantBlocks.to_dict()` list) with the three verdicts."""
    rows = []
    for entry in analysis:
        for attempt in entry.get("attempts", []):
            for pos, block in enumerate(attempt.get("blocks", [])):
                rows.append({
                    "partition": entry["partition"], "file_id": entry["file_id"],
                    "instant_time": entry["instant_time"], "attempt": attempt["attempt"],
                    "position": pos, "seq": block.get("seq"), "path": block.get("path"),
                    "offset": block.get("offset"), "type": block.get("type"),
                    "proposal": attempt.get("proposal"), "hudi_014": attempt.get("hudi_014"),
                    "commit_metadata": attempt.get("commit_metadata"), "rolled_back": attempt.get("rolled_back"),
                })
    return pd.DataFrame(rows, columns=["partition", "file_id", "instant_time", "attempt", "position", "seq", "path",
                                       "offset", "type", "proposal", "hudi_014", "commit_metadata", "rolled_back"])


def log_blocks_figure(blocks: pd.DataFrame, verdict: str = "commit_metadata") -> go.Figure:
    """Block sequences: one row per (instant, attempt), one square per block, coloured by a verdict."""
    fig = go.Figure()
    if blocks.empty:
        fig.add_annotation(text="no log blocks", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
        return fig
    df = blocks.assign(row=blocks["file_id"].str.slice(0, 8) + " · " + blocks["instant_time"] + " · "
                       + blocks["attempt"].astype(str))
    for value, part in df.groupby(verdict, dropna=False, sort=True):
        label = str(value)
        fig.add_trace(go.Scattergl(
            x=part["seq"].where(part["seq"].notna(), part["position"]), y=part["row"], mode="markers",
            name=f"{verdict}: {label}", marker={"symbol": "square", "size": 14,
                                                "color": VERDICT_COLOURS.get(label, "#9e9e9e")},
            hovertext=[f"{p} @ {o}<br>{t} seq {s}<br>proposal {a} · hudi 0.14 {b} · commit metadata {c}"
                       for p, o, t, s, a, b, c in zip(part["path"], part["offset"], part["type"], part["seq"],
                                                      part["proposal"], part["hudi_014"], part["commit_metadata"],
                                                      strict=True)],
            hoverinfo="text"))
    fig.update_xaxes(title="sequence number (or position) in the attempt", dtick=1)
    fig.update_yaxes(type="category", title=None)
    fig.update_layout(height=max(220, 80 + 26 * df["row"].nunique()), margin={"l": 10, "r": 10, "t": 20, "b": 10},
                      legend={"orientation": "h", "y": -0.3})
    return fig
