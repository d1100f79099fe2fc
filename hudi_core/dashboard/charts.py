"""Plotly figure builders for the dashboard. Pure: data in, figure out (unit-tested).

The timeline chart draws one lane per action, a bar from requested to completion time per
instant in two shades of the action's colour (light from requested to inflight, full from inflight to
completion; one full bar where the inflight time is unknown), pending instants dashed to the end of the
chart in their state's colour, a point per instant coloured by state, shaded active and archived regions,
and vertical markers (ECTR, EarliestCommitToNotArchive, savepoints, the archival boundary). Bars are WebGL
(`Scattergl`), one trace per lane and phase and one per (source, state) for the points: 10,000 instants
stay smooth; above `aggregate_above` instants the bars are replaced by per-lane time buckets (a heatmap
strip per lane: one image, where an SVG marker per bucket cost the browser seconds). The duration chart
shows each action's instant durations over time (a slow-down shows as a trend), bucketed medians and 95th
percentiles when an action has many instants.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
from plotly.subplots import make_subplots

from hudi_core.dashboard.markers import SHORT_LABELS
from hudi_core.formats.timeline.phase_columns import instant_epoch_ms
from hudi_core.services.markers import Marker, MarkerKind
from hudi_core.services.writers import human_ms

if TYPE_CHECKING:
    from hudi_core.services.duplicates import InstantBlocks
    from hudi_core.services.writers import Concurrency

STATE_COLOURS = {"COMPLETED": "#2e7d32", "INFLIGHT": "#f9a825", "REQUESTED": "#c62828"}
ARCHIVED_COLOUR = "#78909c"
MARKER_STYLES: dict[MarkerKind, tuple[str, str]] = {
    MarkerKind.ECTR_RECORDED: ("#1565c0", "solid"),
    MarkerKind.ECTR_RECOMPUTED: ("#42a5f5", "dash"),
    MarkerKind.ECTNA_RECORDED: ("#6a1b9a", "solid"),
    MarkerKind.ECTNA_PROPOSED: ("#ab47bc", "dash"),
    MarkerKind.ECTNA_HUDI: ("#4a148c", "dot"),
    MarkerKind.SAVEPOINT: ("#ef6c00", "dashdot"),
    MarkerKind.ARCHIVAL_BOUNDARY: ("#37474f", "longdash"),
    MarkerKind.ARCHIVED_SPLIT: ("#607d8b", "dot"),
}
#: A colour per lane (action), for completed bars: full from inflight to completion, light before.
ACTION_COLOURS = {"commit": "#1565c0", "deltacommit": "#00838f", "replacecommit": "#6a1b9a", "clustering": "#8e24aa",
                  "compaction": "#ef6c00", "logcompaction": "#f9a825", "clean": "#6d4c41", "rollback": "#c62828",
                  "restore": "#ad1457", "savepoint": "#2e7d32", "indexing": "#546e7a"}
OTHER_ACTION_COLOUR = "#455a64"
#: How much of the colour the light shade (requested -> inflight) keeps, mixed with white.
LIGHT_SHADE = 0.4
#: Half the height of a lane's bucket strip (lanes are 1 apart).
BUCKET_BAND = 0.18
LANE_ORDER = ["commit", "deltacommit", "replacecommit", "clustering", "compaction", "logcompaction", "clean",
              "rollback", "restore", "savepoint", "indexing"]
_PLANNED_LANES = {"compaction", "clustering", "logcompaction", "indexing"}
HOVER_REPLACED_LIMIT = 8


def _is_arrow_text(series: pd.Series) -> bool:
    """Whether `series` is text kept in Arrow memory (missing values are ``pd.NA``)."""
    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype):
        return pa.types.is_string(dtype.pyarrow_dtype) or pa.types.is_large_string(dtype.pyarrow_dtype)
    return isinstance(dtype, pd.StringDtype)


def _is_str(series: pd.Series) -> np.ndarray:
    """Which values of an object or string column are strings (not None, NaN or NA)."""
    if _is_arrow_text(series):  # `frames.compact_frame`'s columns
        return series.notna().to_numpy(dtype=bool)
    return np.frompyfunc(lambda v: isinstance(v, str), 1, 1)(series.to_numpy(dtype=object)).astype(bool)


def instant_datetimes(values: Iterable[Any]) -> pd.Series:
    """Instant times (``yyyyMMddHHmmss[SSS]``) as naive datetimes; odd values (not a string, no date) become NaT.

    The timeline's own parse (`timeline.phases.instant_epoch_ms`: digits read from the Arrow buffers), so a chart
    and the phase columns agree; a million instants in ~0.1 s, without a Python object per value.
    """
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    if _is_arrow_text(series):
        text = pa.array(series.array)  # the frame's own Arrow buffers (`frames.compact_frame`)
    else:
        strings = series.where(_is_str(series), None) if series.dtype == object else pd.Series([None] * len(series))
        text = pa.array(strings.to_numpy(dtype=object), pa.string(), from_pandas=True)
    stamps = instant_epoch_ms(text).cast(pa.timestamp("ms")).to_pandas(coerce_temporal_nanoseconds=True)
    return pd.Series(stamps.to_numpy(), dtype="datetime64[ns]")


def lane_of(pending_action: str | None, completed_action: str | None) -> str:
    """The chart lane: what the instant was planned as for table services, else its action."""
    if pending_action in _PLANNED_LANES:
        return str(pending_action)
    return str(completed_action or pending_action or "?")


def lanes_of(pending: pd.Series, completed: pd.Series) -> np.ndarray:
    """:func:`lane_of` of whole columns."""
    pending_s = pending.where(_is_str(pending), None)
    completed_s = completed.where(_is_str(completed), None)
    planned = pending_s.isin(list(_PLANNED_LANES)).to_numpy()
    fallback = completed_s.where(completed_s.fillna("") != "", pending_s)
    fallback = fallback.where(fallback.fillna("") != "", "?")
    return np.where(planned, pending_s.to_numpy(dtype=object), fallback.to_numpy(dtype=object))


#: The columns :func:`prepare_instants` adds (to be dropped again where a frame is shown as a table).
PREPARED_EXTRA = ["lane", "start", "end", "duration_s", "inflight"]
_PREPARED_COLUMNS = {*PREPARED_EXTRA, "source"}


def prepare_instants(instants: pd.DataFrame, copy: bool = True) -> pd.DataFrame:
    """Add `lane`, `start`, `end` (datetimes) and `duration_s` to an instants frame (to a copy unless `copy`
    is off: a frame nobody else holds, 1M rows on L).

    Expects the columns of `TableInspector.instants()` (requested_time, action, state,
    pending_action, completed_action, completion_time, source; operation_type optional). A frame prepared
    already is returned as is (a 1M-instant frame takes seconds to prepare).
    """
    if set(instants.columns) >= _PREPARED_COLUMNS:
        return instants
    df = instants.copy() if copy else instants
    if df.empty:
        for col, dtype in (("lane", "object"), ("start", "datetime64[ns]"), ("end", "datetime64[ns]"),
                           ("duration_s", "float64"), ("inflight", "datetime64[ns]")):
            df[col] = pd.Series(dtype=dtype)
        return df
    df["lane"] = lanes_of(df["pending_action"], df["completed_action"])
    df["start"] = instant_datetimes(df["requested_time"]).to_numpy()
    df["end"] = instant_datetimes(df["completion_time"].fillna("")).to_numpy()
    df["duration_s"] = (df["end"] - df["start"]).dt.total_seconds()
    # The inflight transition where it is known and in order (the engine's requested_to_inflight_ms).
    if "requested_to_inflight_ms" in df:
        ms = pd.to_numeric(df["requested_to_inflight_ms"], errors="coerce")
        df["inflight"] = df["start"] + pd.to_timedelta(ms, unit="ms")
    else:
        df["inflight"] = pd.Series(pd.NaT, index=df.index, dtype="datetime64[ns]")
    if "source" not in df:
        df["source"] = "active"
    return df


def lanes_in(df: pd.DataFrame) -> list[str]:
    """Lanes present, in the fixed chart order (unknown actions last, alphabetically)."""
    present = set(df["lane"]) if "lane" in df else set()
    return [lane for lane in LANE_ORDER if lane in present] + sorted(present - set(LANE_ORDER))


def filter_instants(instants: pd.DataFrame, actions: Sequence[str] = (), states: Sequence[str] = (),
                    since: str = "", until: str = "") -> pd.DataFrame:
    """The instants whose lane is in `actions` and state in `states` (empty: all) and whose
    requested time lies in [`since`, `until`] (prefixes of ``yyyyMMddHHmmssSSS``, inclusive)."""
    shown = instants
    if actions:
        lanes = lanes_of(shown["pending_action"], shown["completed_action"])
        shown = shown[pd.Series(lanes, index=shown.index).isin(list(actions))]
    if states:
        shown = shown[shown["state"].isin(list(states))]
    if since.strip():
        shown = shown[shown["requested_time"] >= since.strip()]
    if until.strip():
        shown = shown[shown["requested_time"] <= until.strip().ljust(17, "9")]
    return shown


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


def hover_texts(part: pd.DataFrame, replaced: Mapping[str, Sequence[str]]) -> np.ndarray:
    """Hover text per instant of a prepared frame: action, times, state, duration, operation and,
    for a replacecommit, the file groups it replaced (first :data:`HOVER_REPLACED_LIMIT`)."""
    if part.empty:
        return np.array([], dtype=object)
    text = ("<b>" + part["action"].astype(str) + "</b> " + part["requested_time"].astype(str) + "<br>state "
            + part["state"].astype(str) + " (" + part["source"].astype(str) + ")")
    if "inflight_time" in part:
        inflight = part["inflight_time"].fillna("").astype(str)
        src = part["inflight_time_source"].fillna("").astype(str) if "inflight_time_source" in part else ""
        text = text + np.where(inflight != "", "<br>inflight " + inflight + " (" + src + ")", "")
    comp = part["completion_time"].fillna("").astype(str)
    dur = part["duration_s"].map(lambda v: f"<br>duration {v:.3f} s" if pd.notna(v) else "")
    text = text + np.where(comp != "", "<br>completed " + comp + dur, "")
    for col, label in (("requested_to_inflight_ms", "requested → inflight"),
                       ("inflight_to_completed_ms", "inflight → completed"),
                       ("mdt_duration_ms", "metadata table delta commit")):
        if col in part:
            values = pd.to_numeric(part[col], errors="coerce")
            text = text + values.map(lambda v, label=label: f"<br>{label} {v / 1000:.3f} s" if pd.notna(v) else "")
    if "rollback_info" in part:
        info = part["rollback_info"].fillna("").astype(str)
        text = text + np.where(info != "", "<br>" + info, "")
    if "operation_type" in part:
        op = part["operation_type"].fillna("").astype(str)
        text = text + np.where(op != "", "<br>operation " + op, "")
    out = text.to_numpy(dtype=object)
    if replaced:
        for i, t in enumerate(part["requested_time"]):
            groups = replaced.get(t)
            if groups:
                shown = list(groups)[:HOVER_REPLACED_LIMIT]
                more = len(groups) - len(shown)
                out[i] += (f"<br>replaced {len(groups)} file group(s):<br>  " + "<br>  ".join(shown)
                           + (f"<br>  … {more} more" if more > 0 else ""))
    return out


def _colour(state: str, source: str) -> str:
    if source != "active" and state == "COMPLETED":
        return ARCHIVED_COLOUR
    return STATE_COLOURS.get(state, "#9e9e9e")


def action_colour(lane: str) -> str:
    """The colour of a lane's completed bars."""
    return ACTION_COLOURS.get(lane, OTHER_ACTION_COLOUR)


def light_shade(colour: str, keep: float = LIGHT_SHADE) -> str:
    """`colour` (``#rrggbb``) mixed with white, keeping `keep` of it: the requested -> inflight shade."""
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - (255 - c) * keep):02x}" for c in rgb)


def _segments(start: np.ndarray, end: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y of one line trace drawing a segment per row (start -> end at y), gaps between them."""
    n = len(start)
    xs = np.full(3 * n, np.nan)
    ys = np.full(3 * n, np.nan)
    xs[0::3], xs[1::3] = start, end
    ys[0::3], ys[1::3] = y, y
    return xs, ys


def _add_phase_bars(fig: go.Figure, done: pd.DataFrame, lane_y: Mapping[str, int], sub: Mapping[str, Any]) -> None:
    """Completed instants, per lane: requested -> inflight in the light shade of the lane's colour, inflight ->
    completion in the full colour, requested -> completion in the full colour where the inflight time is not
    known (one WebGL trace per lane and phase)."""
    for lane, part in done.groupby("lane", sort=True):
        colour = action_colour(str(lane))
        start, end = to_ms(part["start"]), to_ms(part["end"])
        mid = to_ms(part["inflight"])
        y = part["lane"].map(lane_y).to_numpy(dtype="float64")
        known = ~np.isnan(mid)
        for name, a, b, rows, shade in (
                (f"{lane}: requested → inflight", start, mid, known, light_shade(colour)),
                (f"{lane}: inflight → completed", mid, end, known, colour),
                (f"{lane}: requested → completed", start, end, ~known, colour)):
            if not rows.any():
                continue
            xs, ys = _segments(a[rows], b[rows], y[rows])
            fig.add_trace(go.Scattergl(x=xs, y=ys, mode="lines", name=name, showlegend=False, hoverinfo="skip",
                                       line={"color": shade, "width": 6}), **sub)


def _phase_legend(fig: go.Figure) -> None:
    """Two legend entries explaining the shades (in a neutral colour: each lane has its own)."""
    for name, colour in (("requested → inflight", light_shade(OTHER_ACTION_COLOUR)),
                         ("inflight → completed", OTHER_ACTION_COLOUR)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=name, line={"color": colour, "width": 6},
                                 hoverinfo="skip", legendgroup="phases"))


def to_ms(values: Any) -> np.ndarray:
    """Naive datetimes → float milliseconds since the epoch (NaT → NaN).

    Plotly reads numbers on a date axis as epoch milliseconds; float arrays travel as compact
    typed arrays and skip Plotly's per-element validation, which keeps 10,000+ instants fast.
    """
    series = pd.Series(values)
    if series.empty:
        return np.array([], dtype="float64")
    stamps = pd.to_datetime(series)
    out = stamps.astype("int64").to_numpy(dtype="float64") / 1e6
    out[stamps.isna().to_numpy()] = np.nan
    return out


def _lane_y(lanes: Sequence[str]) -> dict[str, int]:
    """Lane → y position (the first lane at the top)."""
    return {lane: len(lanes) - 1 - i for i, lane in enumerate(lanes)}


def _add_bars(fig: go.Figure, df: pd.DataFrame, replaced: Mapping[str, Sequence[str]], chart_end: Any,
              lane_y: Mapping[str, int], row: int | None, showlegend: bool) -> None:
    sub = {"row": row, "col": 1} if row else {}
    end_ms = float(to_ms([chart_end])[0])
    if "inflight" not in df:
        df = df.assign(inflight=pd.Series(pd.NaT, index=df.index, dtype="datetime64[ns]"))
    _add_phase_bars(fig, df[df["state"] == "COMPLETED"], lane_y, sub)
    for (source, state), part in df.groupby(["source", "state"], sort=True):
        colour = _colour(str(state), str(source))
        name = f"{state.lower()}" + ("" if source == "active" else f" ({source})")
        start = to_ms(part["start"])
        y = part["lane"].map(lane_y).to_numpy(dtype="float64")
        pending = state != "COMPLETED"
        if pending:  # dashed to the chart's end in the state's colour
            xs, ys = _segments(start, np.full(len(part), end_ms), y)
            fig.add_trace(go.Scattergl(x=xs, y=ys, mode="lines", name=name, legendgroup=name, showlegend=False,
                                       line={"color": colour, "width": 3, "dash": "dash"}, hoverinfo="skip"), **sub)
        fig.add_trace(go.Scattergl(
            x=start, y=y, mode="markers", name=name, legendgroup=name, showlegend=showlegend,
            marker={"color": colour, "size": 9 if pending else 7, "symbol": "diamond" if pending else "circle",
                    "line": {"width": 1, "color": "#ffffff"}},
            hovertext=hover_texts(part, replaced),
            hoverinfo="text", customdata=part["requested_time"].to_numpy(dtype=object),
        ), **sub)


def _aggregate(fig: go.Figure, df: pd.DataFrame, max_buckets: int, lane_y: Mapping[str, int], row: int | None,
               showlegend: bool) -> None:
    """Per-lane time buckets of a big timeline: one heatmap strip per (source, state, lane), a cell per bucket
    shaded by its instant count, with a square legend entry per (source, state).

    A heatmap is drawn as one image, where a marker per bucket was an SVG element each (M's 1,500 of them: the
    figure took 0.4 s longer to draw in Chromium, and a reload of the Overview 0.7 s). Hover labels are
    templates over the values (the count as customdata, the lane in the template): a label string per bucket
    was two thirds of the chart's bytes."""
    sub = {"row": row, "col": 1} if row else {}
    span = (df["start"].max() - df["start"].min()) or pd.Timedelta(seconds=1)
    freq = max(span / max_buckets, pd.Timedelta(milliseconds=1))
    # Only the grouped columns (a copy of the whole frame was ~300 MB on L).
    buckets = df[["source", "state", "lane"]].assign(bucket=df["start"].dt.floor(freq))
    grouped = buckets.groupby(["source", "state", "lane", "bucket"]).size().reset_index(name="n")
    origin = grouped["bucket"].min()
    column = ((grouped["bucket"] - origin) // freq).to_numpy(dtype="int64")
    columns = int(column.max()) + 1
    edges = to_ms(pd.Series(origin + freq * np.arange(columns + 1)))
    peak = max(int(grouped["n"].max()), 1)
    grouped = grouped.assign(column=column)
    width_ms = freq / pd.Timedelta(milliseconds=1)
    width = human_ms(int(round(width_ms / 1000) * 1000 if width_ms >= 10_000 else width_ms))
    for (source, state), part in grouped.groupby(["source", "state"], sort=True):
        name = f"{state.lower()}" + ("" if source == "active" else f" ({source})") + " (bucketed)"
        colour = _colour(str(state), str(source))
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, legendgroup=name,
                                 showlegend=showlegend, marker={"color": colour, "size": 10, "symbol": "square"},
                                 hoverinfo="skip"), **sub)
        for lane, cells in part.groupby("lane", sort=True):
            at = cells["column"].to_numpy()
            shade = np.full((1, columns), np.nan, dtype="float32")
            shade[0, at] = (0.25 + 0.75 * (cells["n"].to_numpy() / peak) ** 0.5).astype("float32")
            counts = np.zeros((1, columns), dtype="int32")
            counts[0, at] = cells["n"].to_numpy(dtype="int32")
            y = lane_y[str(lane)]
            fig.add_trace(go.Heatmap(
                x=edges, y=[y - BUCKET_BAND, y + BUCKET_BAND], z=shade, zmin=0, zmax=1, showscale=False,
                colorscale=[[0, light_shade(colour, 0.15)], [1, colour]], hoverongaps=False,
                name=f"{name}: {lane}", legendgroup=name, customdata=counts,
                hovertemplate=f"%{{customdata}} {lane} instants ({state}) in the {width} around %{{x}}<extra></extra>",
            ), **sub)


def _add_regions(fig: go.Figure, df: pd.DataFrame, chart_end: Any, row: int | None) -> None:
    sub = {"row": row, "col": 1} if row else {}
    is_active = (df["source"] == "active").fillna(False).to_numpy(dtype=bool)  # Arrow text compares to NA
    active, archived = df["start"][is_active], df["start"][~is_active]  # the start times only: no frame copy
    if not archived.empty:
        a_end = active.min() if not active.empty else archived.max()
        x0, x1 = to_ms([archived.min(), a_end])
        fig.add_vrect(x0=x0, x1=x1, fillcolor=ARCHIVED_COLOUR, opacity=0.12, layer="below", line_width=0,
                      name="archived region", **sub)
    if not active.empty:
        x0, x1 = to_ms([active.min(), chart_end])
        fig.add_vrect(x0=x0, x1=x1, fillcolor=STATE_COLOURS["COMPLETED"], opacity=0.05, layer="below",
                      line_width=0, name="active region", **sub)


#: Pixel height of one row of marker labels above a plot: a label box is LABEL_BOX_PX high (text and padding).
LABEL_ROW_PX = 19
LABEL_BOX_PX = 15
#: The narrowest plot the labels are laid out for (px): on a wider plot labels are only further apart.
LABEL_LAYOUT_WIDTH_PX = 640
#: Width of one character of a label (11 px font; the bold instant time is the widest part) and padding.
LABEL_CHAR_PX = 7.0
LABEL_PAD_PX = 10
#: Hover and spike readout: a date and time in the table's timezone, to the millisecond.
HOVER_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%L"


def marker_labels(markers: Sequence[Marker], x_range: tuple[float, float] | None = None) -> list[dict[str, Any]]:
    """One label per distinct marker time, with its stacking level (0 = right above the plot).

    Markers at the same instant share one label (``"ECTR · SP 20240101000200000"``). A label reads
    to the right of its line, or to the left when it would run past the plot's right edge; labels
    are laid out left to right and one that would overlap a label already on a level moves up a
    level, so no two labels overlap on any plot at least :data:`LABEL_LAYOUT_WIDTH_PX` wide
    (`x_range`: the chart's time range in epoch ms; default: the markers' own range).
    """
    groups: dict[str, list[Marker]] = {}
    for m in sorted(markers, key=lambda m: (m.instant, list(MarkerKind).index(m.kind))):
        groups.setdefault(m.instant, []).append(m)
    items: list[dict[str, Any]] = []
    for time, ms in groups.items():
        x = float(to_ms(instant_datetimes([time]))[0])
        if np.isnan(x):
            continue
        kinds = list(dict.fromkeys(m.kind for m in ms))
        short = " · ".join(SHORT_LABELS[k] for k in kinds)
        colour = MARKER_STYLES[kinds[0]][0] if len(kinds) == 1 else "#263238"
        hover = "<br>".join(f"{m.label}: {m.instant} ({m.source}) {m.explanation}".rstrip() for m in ms)
        coloured = " · ".join(f'<span style="color:{MARKER_STYLES[k][0]}">{SHORT_LABELS[k]}</span>' for k in kinds)
        items.append({"x": x, "time": time, "text": f"{short} {time}", "html": f"{coloured} <b>{time}</b>",
                      "colour": colour, "hover": hover, "kinds": [k.value for k in kinds]})
    if not items:
        return []
    xs = [i["x"] for i in items]
    lo, hi = x_range if x_range is not None else (min(xs), max(xs))
    lo, hi = min(lo, *xs), max(hi, *xs)
    if hi - lo < 1000.0:
        lo, hi = lo - 1000.0, hi + 1000.0
    per_px = ((hi - lo) or 1.0) / LABEL_LAYOUT_WIDTH_PX
    levels: list[list[tuple[float, float]]] = []  # per level: the occupied (start, end) intervals in ms
    for item in items:
        width = (len(item["text"]) * LABEL_CHAR_PX + LABEL_PAD_PX) * per_px
        right = item["x"] + width <= hi
        item["anchor"] = "left" if right else "right"
        start, end = (item["x"], item["x"] + width) if right else (item["x"] - width, item["x"])
        gap = 4 * per_px
        level = next((n for n, taken in enumerate(levels)
                      if all(end + gap < a or start - gap > b for a, b in taken)), len(levels))
        if level == len(levels):
            levels.append([])
        levels[level].append((start, end))
        item["level"] = level
    return items


def _add_markers(fig: go.Figure, markers: Sequence[Marker], row: int | None, axis_suffix: str,
                 x_range: tuple[float, float] | None = None) -> int:
    """Vertical marker lines and their labels above the plot; returns the number of label rows."""
    for m in sorted(markers, key=lambda m: (m.instant, m.kind.value)):
        x = float(to_ms(instant_datetimes([m.instant]))[0])
        if np.isnan(x):
            continue
        colour, dash = MARKER_STYLES[m.kind]
        fig.add_shape(type="line", x0=x, x1=x, xref=f"x{axis_suffix}", y0=0, y1=1, yref=f"y{axis_suffix} domain",
                      line={"color": colour, "dash": dash, "width": 2}, name=m.kind.value)
    labels = marker_labels(markers, x_range)
    for item in labels:
        fig.add_annotation(x=item["x"], xref=f"x{axis_suffix}", y=1, yref=f"y{axis_suffix} domain",
                           yanchor="bottom", yshift=2 + LABEL_ROW_PX * item["level"], text=item["html"],
                           showarrow=False, xanchor=item["anchor"], font={"size": 11, "color": item["colour"]},
                           height=LABEL_BOX_PX, borderpad=1, bgcolor="rgba(255,255,255,0.9)", hovertext=item["hover"],
                           name="|".join(item["kinds"]))
    return 1 + max((i["level"] for i in labels), default=-1)


def _marker_legend(fig: go.Figure, markers: Sequence[Marker]) -> None:
    for kind in dict.fromkeys(m.kind for m in markers):
        colour, dash = MARKER_STYLES[kind]
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=kind.label,
                                 line={"color": colour, "dash": dash}, hoverinfo="skip"))


def _add_highlight(fig: go.Figure, df: pd.DataFrame, highlight: Iterable[str], label: str,
                   lane_y: Mapping[str, int], row: int | None, show_legend: bool = True) -> bool:
    """Circle the `highlight` instants; returns whether any was drawn."""
    # Items are requested times, or (requested time, action) pairs where a time is shared (a savepoint
    # has its commit's time).
    wanted = set(highlight)
    times = {w for w in wanted if isinstance(w, str)}
    pairs = {tuple(w) for w in wanted if not isinstance(w, str)}
    hit = df["requested_time"].isin(times)
    if pairs:
        hit |= pd.Series([(t, a) in pairs for t, a in zip(df["requested_time"], df["action"], strict=True)],
                         index=df.index, dtype=bool)
    part = df[hit] if wanted else df.iloc[0:0]
    if part.empty:
        return False
    sub = {"row": row, "col": 1} if row else {}
    fig.add_trace(go.Scattergl(x=to_ms(part["start"]), y=part["lane"].map(lane_y).to_numpy(dtype="float64"),
                               mode="markers", name=label, legendgroup=label, showlegend=show_legend,
                               marker={"symbol": "circle-open", "size": 16, "color": "#d50000",
                                       "line": {"width": 2}},
                               hovertext=np.array([f"{label}: {a} {t}" for a, t in
                                                   zip(part["action"], part["requested_time"], strict=True)],
                                                  dtype=object),
                               hoverinfo="text"), **sub)
    return True


def _chart_end(df: pd.DataFrame) -> Any:
    latest = pd.concat([df["start"], df["end"]]).max()
    earliest = df["start"].min()
    pad = (latest - earliest) * 0.02 if pd.notna(latest) and pd.notna(earliest) else pd.Timedelta(0)
    return latest + max(pad, pd.Timedelta(seconds=1)) if pd.notna(latest) else None


#: Legend to the right of the plot: it never collides with tick labels or marker labels.
LEGEND = {"orientation": "v", "x": 1.01, "xanchor": "left", "y": 1, "yanchor": "top", "font": {"size": 11},
          "bgcolor": "rgba(255,255,255,0)", "tracegroupgap": 0}


def _label_rows(markers: Sequence[Marker], x_range: tuple[float, float] | None = None) -> int:
    """How many rows of marker labels :func:`_add_markers` stacks above a plot."""
    return 1 + max((i["level"] for i in marker_labels(markers, x_range)), default=-1)


def _x_range(frames: Sequence[pd.DataFrame], markers: Sequence[Marker] = ()) -> tuple[float, float] | None:
    """The chart's time range (epoch ms): the prepared frames and the markers, padded 3 % each side."""
    values = [v for df in frames if not df.empty
              for v in (df["start"].min(), df["start"].max(), df["end"].min(), df["end"].max()) if pd.notna(v)]
    ms = [*to_ms(values), *to_ms(instant_datetimes([m.instant for m in markers]))] if (values or markers) else []
    ms = [v for v in ms if not np.isnan(v)]
    if not ms:
        return None
    lo, hi = min(ms), max(ms)
    pad = max((hi - lo) * 0.03, 1000.0)
    return lo - pad, hi + pad


def _time_axis(fig: go.Figure, x_range: tuple[float, float] | None, timezone: str, bottom: str = "xaxis") -> None:
    """Date x axes read as dates and times in the table's timezone (instant times are wall-clock times
    there, spec `01` §1.9), over an explicit range (so marker labels are laid out for the range shown),
    with spike lines to read a time off the chart."""
    zone = "UTC" if timezone.upper() == "UTC" else "the writer's local time (hoodie.table.timeline.timezone=LOCAL)"
    fig.update_xaxes(type="date", hoverformat=HOVER_TIME_FORMAT, showspikes=True, spikemode="across",
                     spikethickness=1, spikedash="dot", spikecolor="#90a4ae", tickfont={"size": 11}, showgrid=True,
                     gridcolor="rgba(0,0,0,0.06)", automargin=True)
    if x_range is not None:
        fig.update_xaxes(range=[pd.Timestamp(v, unit="ms").isoformat() for v in x_range])
    fig.update_layout({bottom: {"title": {"text": f"time ({zone})", "font": {"size": 11}, "standoff": 4}}})


def _lane_axis(fig: go.Figure, lanes: Sequence[str], **where: Any) -> None:
    ys = _lane_y(lanes)
    fig.update_yaxes(tickmode="array", tickvals=[ys[lane] for lane in lanes], ticktext=list(lanes),
                     range=[-0.6, max(len(lanes) - 0.4, 0.6)], zeroline=False, title=None, **where)


def timeline_figure(instants: pd.DataFrame, markers: Sequence[Marker] = (),
                    replaced: Mapping[str, Sequence[str]] | None = None, *, highlight: Iterable[str] = (),
                    highlight_label: str = "highlighted", title: str | None = None,
                    aggregate_above: int = 50_000, max_buckets: int = 500, timezone: str = "UTC") -> go.Figure:
    """The timeline chart of an instants frame (see the module docstring).

    `replaced` maps a replacecommit's requested time to the file groups it replaced (shown on
    hover); `highlight` circles instants (e.g. the ones an archival would archive). Lanes are
    y positions labelled with the action (`yaxis.ticktext`, first lane at the top); x values are
    epoch milliseconds on a date axis, read as dates and times in the table's `timezone`.
    """
    df = prepare_instants(instants)
    fig = go.Figure()
    if not df.empty and df["start"].isna().any():  # no copy of a big frame when every instant has a time
        df = df[df["start"].notna()]
    lanes = lanes_in(df)
    lane_y = _lane_y(lanes)
    if df.empty:
        fig.add_annotation(text="no instants to show", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    else:
        end = _chart_end(df)
        _add_regions(fig, df, end, None)
        if len(df) > aggregate_above:
            _aggregate(fig, df, max_buckets, lane_y, None, True)
        else:
            _add_bars(fig, df, replaced or {}, end, lane_y, None, True)
            if (df["state"] == "COMPLETED").any():
                _phase_legend(fig)
        _add_highlight(fig, df, highlight, highlight_label, lane_y, None)
    x_range = _x_range([df], markers)
    label_rows = _add_markers(fig, markers, None, "", x_range)
    _marker_legend(fig, markers)
    _lane_axis(fig, lanes)
    _time_axis(fig, x_range, timezone)
    top = (30 if title else 8) + LABEL_ROW_PX * label_rows + 6
    fig.update_layout(title={"text": title, "y": 1, "yanchor": "top", "pad": {"t": 6}} if title else None,
                      height=max(420, 180 + 56 * len(lanes) + top), hovermode="closest",
                      margin={"l": 10, "r": 10, "t": top, "b": 10}, legend=LEGEND, uirevision="timeline")
    return fig


def duration_figure(instants: pd.DataFrame, *, max_points: int = 2000, buckets: int = 200,
                    timezone: str = "UTC") -> go.Figure:
    """Each action's completed instants' durations (requested -> completion) over their requested time, one
    series per action in its colour: every instant while an action has at most `max_points` of them, else the
    median (solid) and 95th percentile (dotted) of each of `buckets` time buckets. A logarithmic axis when
    the durations span more than two orders of magnitude."""
    df = prepare_instants(instants)
    fig = go.Figure()
    # Hover labels are templates over the values (the instant time as customdata): a label string per point was
    # most of the figure's bytes sent on every page load.
    if not df.empty:
        seconds = (pd.to_numeric(df["duration_ms"], errors="coerce") / 1000.0 if "duration_ms" in df
                   else df["duration_s"])
        # Only the columns drawn: a filtered copy of the whole frame was ~400 MB at once on L.
        shown = ((df["state"] == "COMPLETED").fillna(False) & seconds.notna() & df["start"].notna()).to_numpy(
            dtype=bool)
        df = df[["lane", "start", "end", "requested_time"]][shown].assign(seconds=seconds[shown])
    if df.empty:
        fig.add_annotation(text="no measured durations to show", showarrow=False, x=0.5, y=0.5, xref="paper",
                           yref="paper")
        fig.update_layout(height=260, margin={"l": 10, "r": 10, "t": 10, "b": 10})
        return fig
    span = (df["start"].max() - df["start"].min()) or pd.Timedelta(seconds=1)
    freq = max(span / max(buckets, 1), pd.Timedelta(milliseconds=1))
    for lane in lanes_in(df):
        part = df[df["lane"] == lane].sort_values("start")
        colour = action_colour(lane)
        if len(part) <= max_points:
            fig.add_trace(go.Scatter(
                x=to_ms(part["start"]), y=part["seconds"].to_numpy(dtype="float64"), mode="lines+markers", name=lane,
                line={"color": colour, "width": 1}, marker={"color": colour, "size": 5},
                customdata=part["requested_time"].astype(str).to_numpy(dtype=object),
                hovertemplate=f"{lane} %{{customdata}}<br>%{{y:.3f}} s<extra></extra>"))
            continue
        grouped = part.groupby(part["start"].dt.floor(freq))["seconds"]
        stats = pd.DataFrame({"median": grouped.median(), "p95": grouped.quantile(0.95), "n": grouped.size()})
        x = to_ms(stats.index.to_series())
        for column, dash, label in (("median", "solid", "median"), ("p95", "dot", "p95")):
            fig.add_trace(go.Scatter(
                x=x, y=stats[column].to_numpy(dtype="float64"), mode="lines", name=f"{lane} {label}",
                legendgroup=lane, line={"color": colour, "dash": dash, "width": 2},
                customdata=stats["n"].to_numpy(dtype="int64"),
                hovertemplate=f"{lane} {label} %{{y:.3f}} s of %{{customdata}} instants<extra></extra>"))
    low, high = float(df["seconds"][df["seconds"] > 0].min() or 0), float(df["seconds"].max())
    log = low > 0 and high / low > 100
    _time_axis(fig, _x_range([df]), timezone)
    fig.update_yaxes(title={"text": "duration (s)", "font": {"size": 11}}, type="log" if log else "linear",
                     rangemode="tozero" if not log else None, gridcolor="rgba(0,0,0,0.06)")
    fig.update_layout(height=340, hovermode="closest", margin={"l": 10, "r": 10, "t": 10, "b": 10}, legend=LEGEND)
    return fig


def before_after_figure(before: pd.DataFrame, after: pd.DataFrame, markers_before: Sequence[Marker] = (),
                        markers_after: Sequence[Marker] = (), *, highlight: Iterable[str] = (),
                        highlight_label: str = "changes", titles: tuple[str, str] = ("Before", "After"),
                        timezone: str = "UTC") -> go.Figure:
    """Two timelines on a shared time axis: before and after a dry-run (or a scenario step)."""
    b = prepare_instants(before)
    a = prepare_instants(after)
    b = b[b["start"].notna()] if not b.empty else b
    a = a[a["start"].notna()] if not a.empty else a
    x_range = _x_range([b, a], [*markers_before, *markers_after])
    rows_before = _label_rows(markers_before, x_range)
    rows_after = _label_rows(markers_after, x_range)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True)
    lanes = lanes_in(pd.concat([b, a])) if not (a.empty and b.empty) else []
    lane_y = _lane_y(lanes)
    end_candidates = [x for x in (_chart_end(b) if not b.empty else None, _chart_end(a) if not a.empty else None)
                      if x is not None]
    end = max(end_candidates) if end_candidates else None
    highlight = list(highlight)
    legend_done: set[str] = set()
    for row, df, marks in ((1, b, markers_before), (2, a, markers_after)):
        if not df.empty:
            _add_regions(fig, df, end, row)
            _add_bars(fig, df, {}, end, lane_y, row, row == 1)
            if _add_highlight(fig, df, highlight, highlight_label, lane_y, row,
                              show_legend=highlight_label not in legend_done):
                legend_done.add(highlight_label)
        _add_markers(fig, marks, row, "" if row == 1 else "2", x_range)
    _marker_legend(fig, [*markers_before, *markers_after])
    _lane_axis(fig, lanes)
    _time_axis(fig, x_range, timezone, "xaxis2")
    # Each plot gets its lanes plus room above for its marker labels; the titles sit on the y axes.
    plot_px = max(150, 30 + 42 * len(lanes))
    top = 10 + LABEL_ROW_PX * rows_before
    gap = 24 + LABEL_ROW_PX * rows_after
    height = top + 2 * plot_px + gap + 60
    inner = height - top - 10
    fig.update_layout(
        yaxis={"domain": [1 - plot_px / inner, 1], "title": {"text": f"<b>{titles[0]}</b>", "standoff": 6}},
        yaxis2={"domain": [0, plot_px / inner], "title": {"text": f"<b>{titles[1]}</b>", "standoff": 6}},
        height=height, hovermode="closest", margin={"l": 10, "r": 10, "t": top, "b": 10}, legend=LEGEND)
    return fig


def counts_figure(counts: pd.DataFrame) -> go.Figure:
    """Stacked bars of :func:`counts_by_action_and_state` (one colour per state)."""
    fig = go.Figure()
    for state, colour in STATE_COLOURS.items():
        if state in counts:
            fig.add_trace(go.Bar(x=counts["action"], y=counts[state], name=state.lower(), marker_color=colour))
    fig.update_layout(barmode="stack", height=260, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"})
    return fig


VERDICT_COLOURS = {"keep": "#2e7d32", "committed": "#2e7d32", "drop": "#c62828", "spurious": "#c62828",
                   "rolled_back": "#9e9e9e", "mixed": "#f9a825", "unknown": "#90a4ae"}


def log_block_rows(analysis: Sequence[InstantBlocks]) -> pd.DataFrame:
    """One row per block of an analysis (`services.duplicates.analyze_duplicates`) with the three verdicts."""
    rows = []
    for entry in analysis:
        for attempt in entry.attempts:
            for pos, block in enumerate(attempt.blocks):
                rows.append({
                    "partition": entry.partition, "file_id": entry.file_id, "instant_time": entry.instant_time,
                    "attempt": attempt.key, "position": pos, "seq": block.seq, "path": block.path,
                    "offset": block.block_offset, "type": block.block_type, "proposal": attempt.proposal,
                    "hudi_014": attempt.hudi_014, "commit_metadata": attempt.commit_metadata,
                    "rolled_back": attempt.rolled_back,
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
    xs = df["seq"].where(df["seq"].notna(), df["position"])
    fig.update_xaxes(title="sequence number (or position) in the attempt", dtick=1, tick0=0,
                     range=[-0.6, max(float(xs.max()), 0.0) + 0.6], zeroline=False)
    fig.update_yaxes(type="category", title=None, tickfont={"family": "monospace", "size": 11})
    # The legend sits above the plot: below it, it ran into the x-axis title.
    fig.update_layout(height=max(220, 110 + 30 * df["row"].nunique()), margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"})
    return fig


#: Bar colours of the concurrency chart: writes that ran at the same time, the completed write of a likely
#: conflict, and the rolled-back write it overlapped.
CONCURRENT_COLOUR = "#1565c0"
CONFLICT_WINNER_COLOUR = "#ef6c00"
ROLLED_BACK_COLOUR = "#c62828"


def concurrency_figure(instants: pd.DataFrame, concurrency: Concurrency) -> go.Figure | None:
    """The writes whose requested → completed spans overlapped, one row each on a shared time axis, so that what
    ran at the same time is seen at a glance: completed concurrent writes in blue; for each likely conflict, the
    completed write in orange and the rolled-back write it overlapped in red (dashed: its span runs from its
    requested time to the rollback's, the rolled-back instant's own files being gone). ``None`` when there is
    nothing concurrent. `instants` is the instants frame (`TableInspector.instants()` columns)."""
    if not concurrency.concurrent and not concurrency.likely_conflicts:
        return None
    roles: dict[str, tuple[str, str]] = {}  # requested time -> (colour, hover)
    for c in concurrency.concurrent:
        shared = ", ".join(c.shared_file_groups) or "no common file group"
        for me, other in ((c.first, c.second), (c.second, c.first)):
            roles.setdefault(me, (CONCURRENT_COLOUR, f"ran at the same time as {other} ({shared})"))
    spans: list[tuple[str, Any, Any, str, str, bool]] = []  # label, start, end, colour, hover, dashed
    for conflict in concurrency.likely_conflicts:
        groups = ", ".join(conflict.file_groups)
        roles[conflict.completed] = (CONFLICT_WINNER_COLOUR,
                                     f"committed on {groups} while {conflict.rolled_back} was pending")
        start, end = instant_datetimes([conflict.rolled_back, conflict.rollback])
        spans.append((f"{conflict.rolled_back} (rolled back)", start, end, ROLLED_BACK_COLOUR,
                      f"rolled back by {conflict.rollback}; was pending when {conflict.completed} committed on "
                      f"{groups}: a likely write conflict", True))
    rows = prepare_instants(instants[instants["requested_time"].isin(list(roles))])
    chart_end = _chart_end(rows) if not rows.empty else None
    for r in rows.itertuples(index=False):
        colour, hover = roles[str(r.requested_time)]
        end = r.end if pd.notna(r.end) else chart_end
        spans.append((f"{r.lane} {r.requested_time}", r.start, end, colour, hover, False))
    spans.sort(key=lambda s: (s[1], s[0]))
    fig = go.Figure()
    for label, start, end, colour, hover, dashed in spans:
        fig.add_trace(go.Scatter(
            x=[start, end], y=[label, label], mode="lines+markers", showlegend=False, hoverinfo="text",
            text=[f"{label}: {hover}"] * 2,
            line={"color": colour, "width": 10 if not dashed else 6, "dash": "dash" if dashed else "solid"},
            marker={"size": 8, "color": colour}))
    fig.update_yaxes(autorange="reversed", title=None, type="category")
    fig.update_xaxes(title=None)
    fig.update_layout(height=90 + 40 * len(spans), margin={"l": 10, "r": 10, "t": 10, "b": 10})
    return fig
