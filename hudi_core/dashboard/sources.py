"""Where a page's data comes from: the table as opened (a snapshot, the cached loaders) or the current state of a
followed table ("Follow live", :class:`hudi_core.dashboard.live.LiveSource`).

The Overview and the Cleaner & archival views (:mod:`hudi_core.dashboard.overview`,
:mod:`hudi_core.dashboard.cleaner`) draw from a :class:`TableSource`, so the snapshot and the live page are the
same render code on the same typed objects; only where they come from differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from hudi_core.dashboard import loaders

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from hudi_core.errors import Finding
    from hudi_core.io.table_config import TableConfiguration
    from hudi_core.services.markers import Marker
    from hudi_core.services.phase_summary import PhaseSummary
    from hudi_core.services.releases import ReleaseComparison
    from hudi_core.services.verdict import Verdict

#: A dry run's configuration as the loaders key it: sorted (key, value) pairs.
Conf = tuple[tuple[str, str], ...]


class TableSource(Protocol):
    """What the Overview and the Cleaner & archival views read (each answer the typed object of the loader of the
    same name in :mod:`hudi_core.dashboard.loaders`)."""

    uri: str

    def facts(self) -> tuple[dict[str, Any], list[Finding]]:
        """`describe()` and the findings of reading the timeline (`loaders.load_facts`)."""

    def instants(self) -> tuple[pd.DataFrame, str]:
        """Active and archived instants and a note on their source (`loaders.load_instants`)."""

    def verdict(self) -> Verdict:
        """The table's verdict (`services.verdict`)."""

    def table_config(self) -> TableConfiguration:
        """Every `hoodie.properties` key with its meaning (`loaders.load_table_config`)."""

    def lanes_and_counts(self) -> tuple[list[str], pd.DataFrame]:
        """The chart's lanes and the counts by action and state."""

    def phase_summary(self) -> PhaseSummary:
        """Instants per state and durations per action."""

    def duration_figure(self) -> go.Figure:
        """Each action's durations over time."""

    def counts_figure(self) -> go.Figure:
        """The counts by action and state as stacked bars."""

    def concurrency_figure(self) -> go.Figure | None:
        """Writes that ran at the same time (`charts.concurrency_figure`), ``None`` when there are none."""

    def markers(self) -> list[Marker]:
        """The timeline's markers under the table's own (scenario) configuration."""

    def timeline(self, timeline_filter: loaders.TimelineFilter) -> tuple[go.Figure, pd.DataFrame]:
        """The timeline chart for a filter and the instants it shows."""

    def instant_times(self, timeline_filter: loaders.TimelineFilter) -> frozenset[str]:
        """The requested times of the instants a filter shows (the instant picker accepts any of them)."""

    def dry_run(self, conf: Conf, savepoint_guard: bool, hudi_release: str) -> loaders.DryRun:
        """The cleaner and archiver dry runs of a configuration (`loaders.load_dry_run`)."""

    def before_after(self, conf: Conf, savepoint_guard: bool, hudi_release: str) -> loaders.BeforeAfter:
        """The timeline before and after the planned archival."""

    def release_comparison(self, conf: Conf) -> ReleaseComparison:
        """Where Hudi 1.1 and 1.2 plan differently."""


class SnapshotSource:
    """The table as opened, through the cached loaders (what every page showed before "Follow live")."""

    def __init__(self, uri: str, engine_name: str = "local") -> None:
        self.uri = uri
        self.engine_name = engine_name

    def facts(self) -> tuple[dict[str, Any], list[Finding]]:
        return loaders.load_facts(self.uri, self.engine_name)

    def instants(self) -> tuple[pd.DataFrame, str]:
        return loaders.load_instants(self.uri, self.engine_name)

    def verdict(self) -> Verdict:
        return loaders.load_verdict(self.uri, self.engine_name)

    def table_config(self) -> TableConfiguration:
        return loaders.load_table_config(self.uri, self.engine_name)

    def lanes_and_counts(self) -> tuple[list[str], pd.DataFrame]:
        return loaders.load_lanes_and_counts(self.uri, self.engine_name)

    def phase_summary(self) -> PhaseSummary:
        return loaders.load_phase_summary(self.uri, self.engine_name)

    def duration_figure(self) -> go.Figure:
        return loaders.load_duration_figure(self.uri, self.engine_name)

    def counts_figure(self) -> go.Figure:
        return loaders.load_counts_figure(self.uri, self.engine_name)

    def concurrency_figure(self) -> go.Figure | None:
        return loaders.load_concurrency_figure(self.uri, self.engine_name)

    def markers(self) -> list[Marker]:
        return loaders.load_markers(self.uri, self.engine_name)

    def timeline(self, timeline_filter: loaders.TimelineFilter) -> tuple[go.Figure, pd.DataFrame]:
        return loaders.load_timeline(self.uri, self.engine_name, *timeline_filter)

    def instant_times(self, timeline_filter: loaders.TimelineFilter) -> frozenset[str]:
        return loaders.load_instant_times(self.uri, self.engine_name, *timeline_filter)

    def dry_run(self, conf: Conf, savepoint_guard: bool, hudi_release: str) -> loaders.DryRun:
        return loaders.load_dry_run(self.uri, conf, savepoint_guard, self.engine_name, hudi_release)

    def before_after(self, conf: Conf, savepoint_guard: bool, hudi_release: str) -> loaders.BeforeAfter:
        return loaders.load_before_after(self.uri, conf, savepoint_guard, self.engine_name, hudi_release)

    def release_comparison(self, conf: Conf) -> ReleaseComparison:
        return loaders.load_release_comparison(self.uri, conf, self.engine_name)
