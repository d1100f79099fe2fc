"""Where the emulated Hudi releases disagree on one table: the next clean and the next
archival planned under 1.1.x and 1.2.x from the same configuration, and every point where the two
plans differ, each with both values and the rule behind the difference.

The configuration is given as layers (as :meth:`ServiceConfig.from_layers` takes them) so each release
reads it as that release would: 1.2 keys are ignored by 1.1, metadata-table settings derive per release.
Both cleans plan against one file-system view and one planning time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.services.archive import ArchivePlan, plan_archive
from hudi_core.services.clean import CleanPlan, plan_clean
from hudi_core.services.config import HUDI_RELEASES, ServiceConfig

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

#: Files and partitions listed per side in a difference (the counts are always exact).
LISTED = 50


@dataclass(frozen=True)
class ListComparison:
    """One release's side of a compared list (files, partitions): its size and the items only it has
    (the first :data:`LISTED`; `only_here_count` is exact)."""

    count: int
    only_here_count: int
    only_here: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.count, "only_here_count": self.only_here_count, "only_here": list(self.only_here)}

    def describe(self, named: int) -> str:
        """``count (n only here: a, b …)`` naming at most `named` of the items only this release has."""
        first = ", ".join(self.only_here[:named]) + (" …" if self.only_here_count > named else "")
        return f"{self.count} ({self.only_here_count} only here{': ' + first if first else ''})"


@dataclass(frozen=True)
class ReleaseDifference:
    """One aspect of the plans that differs between the releases: `values` per release label (``"1.2.x"``;
    a plain value, or a :class:`ListComparison` for files and partitions), and why."""

    aspect: str
    values: dict[str, Any]
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"aspect": self.aspect, "why": self.why,
                "values": {k: v.to_dict() if isinstance(v, ListComparison) else v for k, v in self.values.items()}}


@dataclass
class ReleaseComparison:
    """The plans of each emulated release and their differences (empty when the releases agree)."""

    releases: tuple[str, ...]
    cleans: dict[str, CleanPlan]
    archives: dict[str, ArchivePlan]
    differences: list[ReleaseDifference] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict[str, Any]:
        """The `compare-releases` JSON: per release a summary of each plan, and the differences."""
        return {
            "releases": [f"{r}.x" for r in self.releases],
            "agree": self.agree,
            "differences": [d.to_dict() for d in self.differences],
            "summary": {f"{r}.x": _summary(self.cleans[r], self.archives[r]) for r in self.releases},
        }


def _summary(clean: CleanPlan, archive: ArchivePlan) -> dict[str, Any]:
    return {
        "clean": {"earliest_commit_to_retain": clean.ectr, "would_schedule": clean.would_schedule,
                  "not_scheduled_reason": clean.not_scheduled_reason.value if clean.not_scheduled_reason else None,
                  "partition_mode": clean.partition_mode, "partitions": len(clean.partitions),
                  "files_to_delete": len(clean.files_to_delete),
                  "partitions_to_delete": len(clean.partitions_to_delete),
                  "empty_clean": clean.writes_empty_clean},
        "archive": {"boundary": archive.boundary_instant,
                    "guard": archive.boundary_guard.value if archive.boundary_guard else None,
                    "min_to_keep": archive.min_to_keep, "max_to_keep": archive.max_to_keep,
                    "instants_to_archive": len(archive.to_archive),
                    "lsm_compactions": archive.lsm.compactions if archive.lsm else None,
                    "lsm_files_deleted": (len(archive.lsm.deletions) if archive.lsm else None)},
    }


def compare_releases(table: HudiTable, layers: Iterable[tuple[str, Mapping[str, Any]]], *,
                     now: dt.datetime | None = None) -> ReleaseComparison:
    """Plan the next clean and archival of `table` under every emulated release and list where they differ."""
    layers = list(layers)
    moment = now or dt.datetime.now(dt.UTC)
    view = table.fs_view()
    configs = {r: ServiceConfig.from_layers(layers, r) for r in HUDI_RELEASES}
    cleans = {r: plan_clean(table, c, now=moment, view=view) for r, c in configs.items()}
    archives = {r: plan_archive(table, c, check_safety=False) for r, c in configs.items()}
    comparison = ReleaseComparison(HUDI_RELEASES, cleans, archives)
    comparison.differences = _differences(cleans, archives, configs)
    return comparison


def _sets(old: str, xs: Sequence[str], new: str, ys: Sequence[str]) -> dict[str, ListComparison]:
    """Two lists compared: per release the count, how many only it has, and the first of those."""
    only_x, only_y = sorted(set(xs) - set(ys)), sorted(set(ys) - set(xs))
    return {f"{old}.x": ListComparison(len(xs), len(only_x), tuple(only_x[:LISTED])),
            f"{new}.x": ListComparison(len(ys), len(only_y), tuple(only_y[:LISTED]))}


def _why_ignored(configs: Mapping[str, ServiceConfig]) -> str:
    old = configs[HUDI_RELEASES[0]]
    keys = [k.key for k in old.ignored if k.read_from_release is not None]
    return f" (keys {HUDI_RELEASES[0]} does not read: {', '.join(keys)})" if keys else ""


def _differences(cleans: Mapping[str, CleanPlan], archives: Mapping[str, ArchivePlan],
                 configs: Mapping[str, ServiceConfig]) -> list[ReleaseDifference]:
    old, new = HUDI_RELEASES[0], HUDI_RELEASES[-1]
    a, b = cleans[old], cleans[new]
    out: list[ReleaseDifference] = []
    ignored = _why_ignored(configs)

    def differ(aspect: str, x: Any, y: Any, why: str) -> None:
        if x != y:
            out.append(ReleaseDifference(aspect, {f"{old}.x": x, f"{new}.x": y}, why))

    if a.metadata_table_config != b.metadata_table_config:
        differ("metadata_table_config", a.metadata_table_config, b.metadata_table_config,
               "the metadata table's settings derive from the data table's differently "
               "(HoodieMetadataWriteUtils.createMetadataWriteConfig)")
    differ("clean.earliest_commit_to_retain", a.ectr, b.ectr, f"{b.ectr_detail}{ignored}")
    differ("clean.planning_failure", a.planning_failure, b.planning_failure,
           "1.2's full-clean partition filter cannot be used with incremental cleaning")
    if a.partitions != b.partitions:
        out.append(ReleaseDifference("clean.partitions", _sets(old, a.partitions, new, b.partitions),
                                     f"{old}: {a.partition_detail}; {new}: {b.partition_detail}"))
    reasons = {r: (p.not_scheduled_reason.value if p.not_scheduled_reason else None) for r, p in cleans.items()}
    differ("clean.not_scheduled_reason", reasons[old], reasons[new],
           f"{old}: {a.not_scheduled_detail or 'scheduled'}; {new}: {b.not_scheduled_detail or 'scheduled'}")
    files = _sets(old, a.paths_to_delete(), new, b.paths_to_delete())
    if any(v.only_here_count for v in files.values()):
        out.append(ReleaseDifference("clean.files_to_delete", files,
                                     f"{files[f'{old}.x'].only_here_count} file(s) deleted only by {old}, "
                                     f"{files[f'{new}.x'].only_here_count} only by {new}"))
    differ("clean.partitions_to_delete", a.partitions_to_delete, b.partitions_to_delete,
           "1.1 persists a plan only when it has files to delete; 1.2 also with partitions only (PR #18337)")
    differ("clean.empty_clean", a.writes_empty_clean, b.writes_empty_clean,
           b.empty_clean.detail if b.empty_clean is not None else "hoodie.write.empty.clean.interval.hours is 1.2's")
    x, y = archives[old], archives[new]
    differ("archive.min_max_to_keep", [x.min_to_keep, x.max_to_keep], [y.min_to_keep, y.max_to_keep],
           f"{old}: {x.min_max_detail}; {new}: {y.min_max_detail}")
    differ("archive.boundary", x.boundary_instant, y.boundary_instant,
           f"{old}: guard {x.boundary_guard}; {new}: guard {y.boundary_guard}")
    differ("archive.instants_to_archive", [i.requested_time for i in x.to_archive][:LISTED],
           [i.requested_time for i in y.to_archive][:LISTED],
           f"{len(x.to_archive)} instant(s) under {old}, {len(y.to_archive)} under {new}")
    if x.lsm is not None and y.lsm is not None:
        differ("archive.lsm_compactions", [s.file_name for s in x.lsm.compaction_steps],
               [s.file_name for s in y.lsm.compaction_steps],
               "1.2 skips a leading file over hoodie.timeline.compaction.target.file.max.bytes instead of stalling "
               "the level (PR #17784)")
        differ("archive.lsm_failure", x.lsm.failure, y.lsm.failure,
               "1.2 deletes a manifest left by a failed write before writing it again")
        gone = _sets(old, [d.name for d in x.lsm.deletions], new, [d.name for d in y.lsm.deletions])
        if any(v.only_here_count for v in gone.values()):
            out.append(ReleaseDifference("archive.lsm_files_deleted", gone,
                                         f"{old}: {x.lsm.retained_rule}; {new}: {y.lsm.retained_rule}{ignored}"))
    return out
