"""View code of the Overview's phase timings and table configuration: the summary cards, the
slowest instants and the filterable configuration table, from the engine's typed results
(`services.phases.PhaseSummary`, `table_config.TableConfiguration`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from hudi_core.dashboard.render import Fact
from hudi_core.io.table_config import TableConfiguration
from hudi_core.services.phase_summary import PhaseSummary

#: Columns of the configuration table, in order.
CONFIG_COLUMNS = ["key", "value", "meaning", "default", "known", "differs_from_backup"]


def human_duration(ms: float | None) -> str:
    """A duration for people: ``850 ms``, ``1.50 s``, ``4 min 10 s``, ``3 h 20 min``, ``12 d 4 h``."""
    if ms is None or pd.isna(ms):
        return "–"
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, sec = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {sec} s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def _when(instant_time: str | None) -> str:
    t = instant_time or ""
    return f"{t[0:4]}-{t[4:6]}-{t[6:8]} {t[8:10]}:{t[10:12]}" if len(t) >= 12 and t.isdigit() else t


def state_facts(summary: PhaseSummary) -> list[Fact]:
    """Cards: instants per state and the time the timeline spans."""
    states = summary.states
    return [
        Fact("Completed", f"{states.get('COMPLETED', 0):,}", mono=False),
        Fact("Inflight", f"{states.get('INFLIGHT', 0):,}", tone="warn" if states.get("INFLIGHT") else "", mono=False),
        Fact("Requested", f"{states.get('REQUESTED', 0):,}", tone="warn" if states.get("REQUESTED") else "",
             mono=False),
        Fact("Time span", human_duration(summary.span_ms), mono=False,
             sub=f"{_when(summary.first_requested)} → {_when(summary.last_time)}",
             help="From the first requested time to the last requested or completion time"),
        Fact("Measured", f"{sum(a.measured for a in summary.by_action):,}", mono=False,
             help="Completed instants with a duration (completion - requested time)"),
    ]


def action_facts(summary: PhaseSummary) -> list[Fact]:
    """Cards: the median and 95th percentile duration of each action's completed instants."""
    out = []
    for a in summary.by_action:
        phases = [f"p95 {human_duration(a.p95_ms)}", f"max {human_duration(a.max_ms)}", f"n {a.measured:,}"]
        if a.median_mdt_ms is not None:
            phases.append(f"mdt {human_duration(a.median_mdt_ms)}")
        out.append(Fact(a.action, f"median {human_duration(a.median_ms)}", mono=False, sub=" · ".join(phases),
                        help=(f"{a.completed} completed, {a.measured} with a duration; median requested → inflight "
                              f"{human_duration(a.median_requested_to_inflight_ms)}, inflight → completed "
                              f"{human_duration(a.median_inflight_to_completed_ms)}; metadata table delta commit "
                              f"{human_duration(a.median_mdt_ms)}")))
    return out


def durations_frame(summary: PhaseSummary) -> pd.DataFrame:
    """One row per action: completed, measured, median / p95 / max duration and median phases (ms)."""
    return pd.DataFrame([{
        "action": a.action, "completed": a.completed, "measured": a.measured, "median_ms": a.median_ms,
        "p95_ms": a.p95_ms, "max_ms": a.max_ms, "median_requested_to_inflight_ms": a.median_requested_to_inflight_ms,
        "median_inflight_to_completed_ms": a.median_inflight_to_completed_ms, "median_mdt_ms": a.median_mdt_ms,
    } for a in summary.by_action], columns=["action", "completed", "measured", "median_ms", "p95_ms", "max_ms",
                                            "median_requested_to_inflight_ms", "median_inflight_to_completed_ms",
                                            "median_mdt_ms"])


def slowest_frame(summary: PhaseSummary) -> pd.DataFrame:
    """The slowest instants, longest first, with their phases."""
    frame = pd.DataFrame(summary.slowest)
    if frame.empty:
        return frame
    frame.insert(0, "duration", frame["duration_ms"].map(human_duration))
    return frame.rename(columns={"group": "lane"})


def config_frame(config: TableConfiguration, text: str = "", unknown_only: bool = False,
                 differs_only: bool = False) -> pd.DataFrame:
    """The configuration entries, filtered: `text` in the key, value or meaning (case-insensitive), only
    keys the inspector does not know, only keys that differ from the backup."""
    rows: list[dict[str, Any]] = [e.to_dict() for e in config.entries]
    needle = text.strip().lower()
    if needle:
        rows = [r for r in rows if any(needle in str(r[c] or "").lower() for c in ("key", "value", "meaning"))]
    if unknown_only:
        rows = [r for r in rows if not r["known"]]
    if differs_only:
        rows = [r for r in rows if r["differs_from_backup"]]
    return pd.DataFrame(rows, columns=CONFIG_COLUMNS)


def backup_frame(config: TableConfiguration) -> pd.DataFrame:
    """The differences from `hoodie.properties.backup`."""
    return pd.DataFrame([d.to_dict() for d in config.backup_differences],
                        columns=["key", "change", "value", "backup_value"])
