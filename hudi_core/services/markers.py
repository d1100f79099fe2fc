"""The markers that decide what a clean may delete and what an archival may take (HUDI-7779).

* the earliest commit to retain (ECTR) as the latest completed clean recorded it, and as the next
  clean would compute it with the given config;
* EarliestCommitToNotArchive in two definitions side by side: as the seed proposes it (Option C:
  the first savepoint before ECTR, else ECTR) and as Hudi computes its replacecommit guard's lower
  bound (`ClusteringUtils.getEarliestInstantToRetainForClustering`, spec `02` §3);
* any `EARLIEST_COMMIT_TO_NOT_ARCHIVE` key in clean extra metadata (only an unmerged revision of
  PR #11440 wrote it; released Hudi never does, so it is reported, never relied on);
* savepoints (and the ones the latest clean recorded but that are gone now);
* replaced file groups and whether their files are still on storage.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.services import timelines as tls
from hudi_core.services.clean import next_clean_ectr, proposed_ectna
from hudi_core.services.config import ServiceConfig
from hudi_core.timeline import instant as ia
from hudi_core.timeline.instant import State
from hudi_core.timeline.records import CleanerPlan, CleanMetadata, SavepointMetadata

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

#: Extra-metadata keys an intermediate HUDI-7779 revision may have written (matched case-insensitively).
ECTNA_KEYS = ("earliest_commit_to_not_archive", "earliestcommittonotarchive")


@dataclass(frozen=True)
class ExtraMetadataMarker:
    """An EarliestCommitToNotArchive-like key found in a clean's plan or metadata."""

    clean_time: str
    source: str
    key: str
    value: str

    def to_dict(self) -> dict[str, str]:
        return {"clean_time": self.clean_time, "source": self.source, "key": self.key, "value": self.value}


@dataclass
class Markers:
    """ECTR, EarliestCommitToNotArchive (proposed and Hudi's), savepoints and replaced groups."""

    latest_clean: str | None
    ectr_recorded: str | None
    ectr_next: str | None
    ectr_next_detail: str
    recorded_savepoints: list[str]
    savepoints: list[dict[str, Any]]
    deleted_savepoints: list[str]
    ectna_proposed: str | None
    ectna_proposed_next: str | None
    ectna_hudi_lower_bound: str | None
    ectna_hudi_guard_instant: str | None
    ectna_hudi_detail: str
    extra_metadata: list[ExtraMetadataMarker] = field(default_factory=list)
    replaced_groups: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The `markers` JSON."""
        return {
            "latest_completed_clean": self.latest_clean,
            "earliest_commit_to_retain": {"recorded": self.ectr_recorded, "next_clean": self.ectr_next,
                                          "next_clean_detail": self.ectr_next_detail},
            "earliest_commit_to_not_archive": {
                "proposed": self.ectna_proposed,
                "proposed_next_clean": self.ectna_proposed_next,
                "hudi": self.ectna_hudi_lower_bound,
                "hudi_guard_instant": self.ectna_hudi_guard_instant,
                "hudi_detail": self.ectna_hudi_detail,
            },
            "extra_metadata_earliest_commit_to_not_archive": [m.to_dict() for m in self.extra_metadata],
            "savepointed_timestamps_recorded": list(self.recorded_savepoints),
            "savepoints": list(self.savepoints),
            "savepoints_deleted_since_latest_clean": list(self.deleted_savepoints),
            "replaced_file_groups": list(self.replaced_groups),
        }


def _ectna_keys(extra: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in extra.items() if k.lower() in ECTNA_KEYS]


def compute_markers(table: HudiTable, conf: Mapping[str, Any] | ServiceConfig | None = None, *,
                    now: dt.datetime | None = None) -> Markers:
    """Compute every marker of `table` (`conf` as for :func:`hudi_core.services.clean.plan_clean`)."""
    config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
    timeline = table.timeline
    clean = tls.latest_completed_clean(timeline)
    meta = tls.clean_metadata(timeline, clean) if clean else None
    plan = tls.clean_plan(timeline, clean) if clean else None
    ectr_recorded = meta.earliest_commit_to_retain if meta else None
    if ectr_recorded is None and plan is not None and plan.earliest_instant_to_retain:
        ectr_recorded = plan.earliest_instant_to_retain.timestamp or None
    recorded_sps = meta.savepointed_timestamps if meta else (plan.savepointed_timestamps if plan else [])

    nxt_instant, nxt_detail = next_clean_ectr(timeline, config, now or dt.datetime.now(dt.UTC),
                                              table.properties.timezone,
                                              ((meta.earliest_commit_to_retain or "") if meta else "").strip())
    nxt_time = nxt_instant.requested_time if nxt_instant else None
    current_sps = tls.savepoint_times(timeline)
    guard = tls.clustering_guard(timeline, config.cleaner_policy, savepoint_guard=True)

    extra: list[ExtraMetadataMarker] = []
    for inst in timeline:
        if inst.action != ia.CLEAN:
            continue
        for state, label in ((State.REQUESTED, "cleaner_plan"), (State.COMPLETED, "clean_metadata")):
            rec = timeline.record(inst, state)
            if isinstance(rec, (CleanerPlan, CleanMetadata)):
                extra.extend(ExtraMetadataMarker(inst.requested_time, label, k, v)
                             for k, v in _ectna_keys(rec.extra_metadata))

    savepoints = []
    for inst in timeline.filter([ia.SAVEPOINT]):
        rec = timeline.record(inst, State.COMPLETED) if inst.is_completed else None
        pinned = sum(len(v) for v in rec.partition_files.values()) if isinstance(rec, SavepointMetadata) else 0
        savepoints.append({"savepoint_time": inst.requested_time, "state": inst.state.name,
                           "pinned_files": pinned, "recorded_by_latest_clean": inst.requested_time in recorded_sps})

    view = table.fs_view()
    replaced = [
        {"partition": r.partition, "file_id": r.file_id, "replaced_by": r.replace_instant,
         "operation_type": r.operation_type, "files_exist": r.files_exist, "file_names": list(r.file_names),
         "replaced_before_recorded_ectr": bool(ectr_recorded and r.replace_instant < ectr_recorded)}
        for r in view.replaced_file_groups()
    ]
    return Markers(
        latest_clean=clean.requested_time if clean else None,
        ectr_recorded=ectr_recorded,
        ectr_next=nxt_time,
        ectr_next_detail=nxt_detail,
        recorded_savepoints=list(recorded_sps),
        savepoints=savepoints,
        deleted_savepoints=[s for s in recorded_sps if s not in current_sps],
        ectna_proposed=proposed_ectna(ectr_recorded, list(recorded_sps)),
        ectna_proposed_next=proposed_ectna(nxt_time, current_sps),
        ectna_hudi_lower_bound=guard.lower_bound,
        ectna_hudi_guard_instant=guard.instant.requested_time if guard.instant else None,
        ectna_hudi_detail=guard.detail,
        extra_metadata=extra,
        replaced_groups=replaced,
    )
