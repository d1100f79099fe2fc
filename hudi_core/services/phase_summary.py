"""A summary of the timeline's phase timings: instants per state, the time the timeline spans, the
median and 95th percentile duration per action, and the slowest instants.

Works on an instants table with the phase columns (`TableInspector.instants()`, the `timeline --all` listing):
column-wise, so a million archived instants summarise in well under a second. Instants are grouped as the
timeline chart's lanes group them: table services by what they were planned as (compaction, clustering,
logcompaction, indexing), everything else by the action it completes as.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.phase_columns import instant_epoch_ms
from hudi_core.io.memory import as_array

#: Actions grouped by what they were planned as (a compaction completes as a commit).
PLANNED_GROUPS = ("compaction", "clustering", "logcompaction", "indexing")


@dataclass(frozen=True)
class ActionDurations:
    """Durations of one action's completed instants (ms); `measured` of `completed` have a duration."""

    action: str
    completed: int
    measured: int
    median_ms: float | None
    p95_ms: float | None
    max_ms: int | None
    median_requested_to_inflight_ms: float | None
    median_inflight_to_completed_ms: float | None
    median_mdt_ms: float | None


@dataclass(frozen=True)
class PhaseSummary:
    """Counts per state, the span from the first requested time to the last completion (or request), the
    durations per action (most instants first) and the slowest instants (rows of the input, longest first)."""

    total: int
    states: dict[str, int]
    first_requested: str | None
    last_time: str | None
    span_ms: int | None
    by_action: list[ActionDurations] = field(default_factory=list)
    slowest: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def action_groups(instants: pa.Table) -> pa.Array:
    """The group of every instant: its planned action for table services, else its completed action."""
    pending = instants["pending_action"]
    done = pc.coalesce(instants["completed_action"], pending)
    planned = pc.fill_null(pc.is_in(pending, value_set=pa.array(PLANNED_GROUPS)), False)
    out = pc.if_else(planned, pending, done)
    return as_array(out)


def _quantile(values: pa.Array, q: float) -> float | None:
    valid = pc.drop_null(values)
    if len(valid) == 0:
        return None
    return round(float(pc.quantile(valid, q=q, interpolation="linear")[0].as_py()), 1)


def phase_summary(instants: pa.Table, slowest: int = 10) -> PhaseSummary:
    """The summary of an instants table with `requested_time`, `state`, `pending_action`, `completed_action`,
    `completion_time`, `duration_ms`, `requested_to_inflight_ms`, `inflight_to_completed_ms`, `mdt_duration_ms`
    (and `source`, `action`, kept in the slowest rows)."""
    n = instants.num_rows
    states = {s.name: 0 for s in (State.COMPLETED, State.INFLIGHT, State.REQUESTED)}
    if n == 0:
        return PhaseSummary(0, states, None, None, None)
    for row in instants.group_by("state").aggregate([("state", "count")]).to_pylist():
        states[row["state"]] = row["state_count"]
    first = pc.min(instants["requested_time"]).as_py()
    last = max(v for v in (pc.max(instants["requested_time"]).as_py(), pc.max(instants["completion_time"]).as_py())
               if v is not None)
    start_ms, end_ms = instant_epoch_ms(pa.array([first, last], pa.string())).to_pylist()
    span = end_ms - start_ms if start_ms is not None and end_ms is not None else None
    groups = action_groups(instants)
    completed = pc.equal(instants["state"], State.COMPLETED.name)
    # Filtered per action: only the four timing columns (the whole table is ~1 GB on L).
    timings = instants.select(["duration_ms", "requested_to_inflight_ms", "inflight_to_completed_ms",
                               "mdt_duration_ms"])
    by_action = []
    for name in pc.unique(groups).to_pylist():
        if name is None:
            continue
        mask = pc.and_(pc.fill_null(pc.equal(groups, name), False), pc.fill_null(completed, False))
        part = timings.filter(mask)
        durations = part["duration_ms"].combine_chunks()
        by_action.append(ActionDurations(
            action=name, completed=part.num_rows, measured=len(durations) - durations.null_count,
            median_ms=_quantile(durations, 0.5), p95_ms=_quantile(durations, 0.95),
            max_ms=pc.max(durations).as_py() if len(durations) else None,
            median_requested_to_inflight_ms=_quantile(part["requested_to_inflight_ms"].combine_chunks(), 0.5),
            median_inflight_to_completed_ms=_quantile(part["inflight_to_completed_ms"].combine_chunks(), 0.5),
            median_mdt_ms=_quantile(part["mdt_duration_ms"].combine_chunks(), 0.5)))
    by_action.sort(key=lambda a: (-a.completed, a.action))
    rows = []
    if slowest:
        keep = [c for c in ("requested_time", "action", "state", "source", "completion_time", "duration_ms",
                            "requested_to_inflight_ms", "inflight_to_completed_ms", "mdt_duration_ms")
                if c in instants.column_names]
        measured = instants.select(keep).append_column("group", groups).filter(pc.is_valid(instants["duration_ms"]))
        if measured.num_rows:
            top = pc.select_k_unstable(measured, k=min(slowest, measured.num_rows),
                                       sort_keys=[("duration_ms", "descending")])
            picked = measured.take(top).select(["group", *keep])
            rows = sorted(picked.to_pylist(), key=lambda r: (-r["duration_ms"], r["requested_time"]))
    return PhaseSummary(n, states, first, last, span, by_action, rows)
