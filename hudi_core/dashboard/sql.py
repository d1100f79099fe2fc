"""View code of the SQL page: example postmortem queries, the cached query runner, the chart.

Queries run through :func:`hudi_core.inspect.sql.run_query` on the table the dashboard opened; the views that depend
on the table alone are kept per table between queries (`st.cache_resource`), so a second query over
`write_stats` does not decode the timeline again. Results are cached per (table, engine, query, dry-run
configuration). :func:`result_figure` is pure (unit-tested): a time column (instant times read in the table's
timezone, or DuckDB timestamps and dates) against a numeric or category column, else a category against a
number, else no chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from hudi_core.dashboard import charts, loaders
from hudi_core.errors import Finding, HudiInspectError

TTL_SECONDS = loaders.TTL_SECONDS

#: Example postmortem queries: label → SQL (every one runs on any table).
EXAMPLES: dict[str, str] = {
    "Instants per action and state": (
        "SELECT action, state, source, count(*) AS instants\n"
        "FROM instants\n"
        "GROUP BY ALL\n"
        "ORDER BY instants DESC"),
    "Which commits touched partition P last Tuesday": (
        "-- P: the busiest partition here; put yours. Times are in the table's timezone.\n"
        "WITH tuesday AS (\n"
        "  SELECT current_date - CAST((dayofweek(current_date) + 4) % 7 + 1 AS INTEGER) AS day\n"
        ")\n"
        "SELECT requested_time, completion_time, action, source, count(*) AS files, sum(num_writes) AS records\n"
        "FROM write_stats, tuesday\n"
        "WHERE partition = (SELECT partition FROM write_stats GROUP BY 1 ORDER BY count(*) DESC LIMIT 1)\n"
        "  AND instant_ts(requested_time) >= day AND instant_ts(requested_time) < day + 1\n"
        "GROUP BY ALL\n"
        "ORDER BY requested_time"),
    "Writes per day and action": (
        "SELECT CAST(instant_ts(requested_time) AS DATE) AS day, action,\n"
        "       count(DISTINCT requested_time) AS instants, sum(num_writes) AS records\n"
        "FROM write_stats\n"
        "GROUP BY ALL\n"
        "ORDER BY day, action"),
    "File groups rewritten most": (
        "SELECT partition, file_id, count(DISTINCT requested_time) AS rewrites,\n"
        "       sum(num_update_writes) AS updated_records, sum(total_write_bytes) AS bytes\n"
        "FROM write_stats\n"
        "WHERE prev_commit IS NOT NULL AND prev_commit <> 'null'\n"
        "GROUP BY ALL\n"
        "ORDER BY rewrites DESC, bytes DESC\n"
        "LIMIT 20"),
    "Largest deltacommits": (
        "SELECT requested_time, completion_time, source, count(*) AS files,\n"
        "       sum(num_writes) AS records, sum(total_write_bytes) AS bytes\n"
        "FROM write_stats\n"
        "WHERE action = 'deltacommit'\n"
        "GROUP BY ALL\n"
        "ORDER BY bytes DESC\n"
        "LIMIT 20"),
    "Files the next clean deletes, by partition": (
        "SELECT partition, decision, count(*) AS files\n"
        "FROM clean_plan\n"
        "WHERE decision <> 'keep'\n"
        "GROUP BY ALL\n"
        "ORDER BY files DESC"),
    "What the next archival does": (
        "SELECT decision, action, count(*) AS instants, min(requested_time) AS first, max(requested_time) AS last\n"
        "FROM archive_plan\n"
        "GROUP BY ALL\n"
        "ORDER BY decision, action"),
    "Instants over time": (
        "SELECT requested_time, action, state, source\n"
        "FROM instants\n"
        "ORDER BY requested_time"),
    "Log blocks per instant and type": (
        "SELECT instant_time, block_type, count(*) AS blocks, sum(block_size) AS bytes\n"
        "FROM log_blocks\n"
        "GROUP BY ALL\n"
        "ORDER BY instant_time"),
    "Findings": (
        "SELECT severity, code, count(*) AS n, any_value(path) AS example\n"
        "FROM findings\n"
        "GROUP BY ALL\n"
        "ORDER BY n DESC"),
}
DEFAULT_QUERY = EXAMPLES["Instants per action and state"]


@dataclass
class SqlAnswer:
    """A query's answer for the page: the rows (Arrow), the views computed, what was noticed, or the error."""

    table: pa.Table | None
    views: list[str]
    findings: list[Finding]
    incomplete: bool
    error: str | None = None


#: The page's default time limit per query (seconds), and the most a user may set.
QUERY_TIMEOUT_S = 60.0
MAX_QUERY_TIMEOUT_S = 600.0


@st.cache_resource(show_spinner=False, max_entries=16, ttl=TTL_SECONDS)
def _view_store(uri: str, engine_name: str) -> dict[str, Any]:
    """The table-only views computed so far for one table (shared by every session)."""
    return {}


class _Interrupted(Exception):
    """A query stopped at its time limit: an answer, but not one to cache (a busy moment is no property of the
    query)."""

    def __init__(self, answer: SqlAnswer) -> None:
        super().__init__(answer.error)
        self.answer = answer


def run(uri: str, engine_name: str, query: str, conf: tuple[tuple[str, str], ...] = (),
        release: str | None = None, timeout: float = QUERY_TIMEOUT_S) -> SqlAnswer:
    """`query` over the table's views; a query that does not run is an answer with `error` (one line), and so
    is one interrupted after `timeout` seconds (the query comes from the URL: a link must not hold a server
    thread forever). DuckDB runs without the GIL, so other sessions stay served while a query runs. Answers
    are cached, but for an interrupted query: running it again tries again."""
    try:
        return _run(uri, engine_name, query, conf, release, timeout)
    except _Interrupted as stopped:
        return stopped.answer


@st.cache_data(show_spinner="Running the query…", max_entries=32, ttl=TTL_SECONDS)
def _run(uri: str, engine_name: str, query: str, conf: tuple[tuple[str, str], ...], release: str | None,
         timeout: float) -> SqlAnswer:
    from hudi_core.inspect.sql import SqlTimeout, run_query
    from hudi_core.services.config import DEFAULT_HUDI_RELEASE, ServiceConfig

    try:
        config = ServiceConfig.from_layers([("the SQL page", dict(conf))], release or DEFAULT_HUDI_RELEASE)
        table = loaders.get_table(uri, engine_name)
        result = run_query(table, query, config, cache=_view_store(uri, engine_name), timeout=timeout)
    except SqlTimeout as exc:
        raise _Interrupted(SqlAnswer(None, [], [], False, " ".join(str(exc).split()))) from exc
    except HudiInspectError as exc:
        return SqlAnswer(None, [], [], False, " ".join(str(exc).split()))
    return SqlAnswer(result.table, result.views_computed, result.findings, result.incomplete)


def parse_conf(text: str) -> tuple[tuple[str, str], ...]:
    """``KEY=VALUE`` lines (blank lines and ``#`` comments skipped) as pairs; raises ValueError naming a bad line."""
    pairs = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"line {n}: expected KEY=VALUE, got {line!r}")
        pairs.append((key.strip(), value.strip()))
    return tuple(pairs)


def to_frame(table: pa.Table, limit: int | None = None) -> pd.DataFrame:
    """The rows as a pandas frame for display (the first `limit` rows)."""
    from hudi_core.inspect.sql import plain_numbers

    shown = table if limit is None else table.slice(0, limit)
    return plain_numbers(shown).to_pandas()


# -- the chart ------------------------------------------------------------------------------------------------

_MAX_CATEGORIES = 30
_MAX_BARS = 60


def _time_column(df: pd.DataFrame) -> tuple[str, pd.Series] | None:
    """The first column that is a time: a datetime or date column, or instant times (14/17 digits)."""
    for col in df.columns:
        series = df[col]
        if pd.api.types.is_datetime64_any_dtype(series):
            return str(col), series
        values = series.dropna()
        if values.empty:
            continue
        if series.dtype == object and all(type(v).__name__ == "date" for v in values.head(50)):
            return str(col), pd.to_datetime(series)
        if series.dtype == object and isinstance(values.iloc[0], str):
            sample = values.head(200)
            if not all(isinstance(v, str) and v.isdigit() and len(v) in (14, 17) for v in sample):
                continue
            parsed = charts.instant_datetimes(series.where(series.notna(), "").tolist())
            if parsed.notna().sum() >= max(1, int(0.9 * len(values))):
                return str(col), parsed
    return None


def _numeric(df: pd.DataFrame, exclude: set[str]) -> list[str]:
    return [str(c) for c in df.columns if str(c) not in exclude and pd.api.types.is_numeric_dtype(df[c])
            and not pd.api.types.is_bool_dtype(df[c])]


def _categories(df: pd.DataFrame, exclude: set[str]) -> list[str]:
    out = []
    for c in df.columns:
        if str(c) in exclude or df[c].dtype != object:
            continue
        values = df[c].dropna()
        if values.empty or not all(isinstance(v, str) for v in values.head(200)):
            continue
        if values.nunique() <= _MAX_CATEGORIES:
            out.append(str(c))
    return out


def result_figure(df: pd.DataFrame, timezone: str = "UTC") -> go.Figure | None:
    """A chart of a query's result, or ``None`` when nothing in it charts.

    * a time column and a number: one line (markers) per category of the first category column;
    * a time column without a number: one point per row, on a lane per category (or a single lane);
    * no time column, a category and a number: bars (the first rows, at most 60).
    Instant times are wall-clock times in the table's `timezone` (the axis says which)."""
    if df.empty:
        return None
    time = _time_column(df)
    if time is not None:
        name, x = time
        numbers = _numeric(df, {name})
        cats = _categories(df, {name})
        fig = go.Figure()
        groups = [(None, np.ones(len(df), dtype=bool))] if not cats else [
            (value, (df[cats[0]] == value).to_numpy()) for value in pd.unique(df[cats[0]].dropna())]
        for label, mask in groups:
            if numbers:
                y = df[numbers[0]][mask]
            elif cats:
                y = df[cats[0]][mask]
            else:
                y = pd.Series(["rows"] * int(mask.sum()))
            fig.add_trace(go.Scattergl(x=x[mask], y=y, mode="lines+markers" if numbers else "markers",
                                       name=str(label) if label is not None else (numbers[0] if numbers else name),
                                       marker={"size": 6}))
        fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend_title_text=cats[0] if cats
                          else None, yaxis_title=numbers[0] if numbers else (cats[0] if cats else None))
        charts._time_axis(fig, None, timezone)
        fig.update_xaxes(title_text=f"{name} · " + fig.layout.xaxis.title.text)
        return fig
    numbers = _numeric(df, set())
    cats = _categories(df, set())
    if not numbers or not cats:
        return None
    part = df.head(_MAX_BARS)
    x, y = cats[0], numbers[0]
    fig = go.Figure()
    if len(cats) > 1:
        for value in pd.unique(part[cats[1]].dropna()):
            sub = part[part[cats[1]] == value]
            fig.add_trace(go.Bar(x=sub[x], y=sub[y], name=str(value)))
        fig.update_layout(barmode="stack", legend_title_text=cats[1])
    else:
        fig.add_trace(go.Bar(x=part[x], y=part[y], name=y))
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 30, "b": 10}, xaxis_title=x, yaxis_title=y)
    return fig


__all__ = ["DEFAULT_QUERY", "EXAMPLES", "SqlAnswer", "parse_conf", "result_figure", "run", "to_frame"]
