"""Input completeness of the dry runs: which inputs a plan could not read, and what depends on them.

A plan computed without some input must say so: the cleaner's trigger and incremental partitions
depend on the last completed clean's metadata, the archiver's guards A3/A6/A7 and min/max on the
last clean's plan and metadata, replaced file groups on replacecommit metadata, savepoint
protection on savepoint metadata, and so on. Hudi itself fails in these cases (its readers throw on
a body they cannot deserialize); the dry run answers what it can, marks the rest, and the archiver
refuses to plan past a clean it cannot read (archiving then could defeat the HUDI-7779 guard).
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_core.errors import Finding, Severity
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import ActiveTimeline
from hudi_core.formats.timeline.instant import Instant, State

#: What each unreadable body takes away from the plans, by the action of the instant.
AFFECTS: dict[str, tuple[str, ...]] = {
    ia.CLEAN: ("clean trigger (commits since the last clean)", "incremental clean partitions",
               "earliest commit to retain recorded by the clean", "archiver guards A3/A6/A7 and the archival boundary"),
    ia.REPLACE_COMMIT: ("replaced file groups (status unknown, never shown live or deleted)",
                        "archival safety check (exposed file groups)"),
    ia.CLUSTERING: ("replaced file groups (status unknown, never shown live or deleted)",),
    ia.SAVEPOINT: ("files pinned by the savepoint (clean decisions on them)",),
    ia.COMPACTION: ("file slices needed by the pending compaction",),
    ia.LOG_COMPACTION: ("file slices needed by the pending log compaction",),
    ia.COMMIT: ("partitions written (incremental clean partitions)",),
    ia.DELTA_COMMIT: ("partitions written (incremental clean partitions)",),
    ia.ROLLBACK: ("what the rollback undid",),
    ia.RESTORE: ("what the restore undid",),
    ia.INDEXING: ("metadata-table index state",),
}


@dataclass(frozen=True)
class MissingInput:
    """One instant file a plan needed and could not use, and the conclusions that depend on it."""

    path: str
    requested_time: str
    action: str
    state: str
    reason: str
    affects: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "requested_time": self.requested_time, "action": self.action,
                "state": self.state, "reason": self.reason, "affects": list(self.affects)}


def _file_problem(timeline: ActiveTimeline, inst: Instant, state: State) -> Finding | None:
    """Why one state file of `inst` cannot be used (decoded on demand), or ``None``."""
    f = inst.file(state)
    if f is None:
        return None
    body = timeline.body_of_file(f)
    for err in timeline.body_error(inst):
        if err.path.endswith("/" + f.name) or err.path == f.name:
            return err
    if state is State.COMPLETED and body is not None and body.record is None and inst.action == ia.CLEAN:
        # An empty completed clean: Hudi's deserializer throws on it (no HoodieCleanMetadata).
        return Finding(Severity.ERROR, "empty_completed_instant", timeline.storage.uri_of(f.path),
                       f"{f.name} is a completed clean with a zero-byte body")
    return None


def _missing(timeline: ActiveTimeline, inst: Instant, state: State, finding: Finding) -> MissingInput:
    return MissingInput(finding.path, inst.requested_time, inst.action, state.name, finding.message,
                        AFFECTS.get(inst.action, AFFECTS.get(inst.completed_action, ())))


def last_clean_inputs(timeline: ActiveTimeline) -> list[MissingInput]:
    """The last completed clean's plan and metadata, when either cannot be used."""
    cleans = [i for i in timeline if i.action == ia.CLEAN and i.is_completed]
    if not cleans:
        return []
    last = cleans[-1]
    out = []
    meta = _file_problem(timeline, last, State.COMPLETED)
    if meta is not None:
        out.append(_missing(timeline, last, State.COMPLETED, meta))
    # `CleanerUtils.getCleanerPlan` reads the requested file: when it exists but cannot be used, Hudi
    # throws (no fallback to the 0.x copy in `.clean.inflight`, which serves only a missing requested file).
    state = State.REQUESTED if last.file(State.REQUESTED) is not None else State.INFLIGHT
    plan = _file_problem(timeline, last, state)
    if plan is not None:
        out.append(_missing(timeline, last, state, plan))
    return out


def missing_inputs(timeline: ActiveTimeline, also: list[MissingInput] | None = None) -> list[MissingInput]:
    """Every instant file that failed to decode while planning (plus `also`), with what it affects."""
    out: dict[str, MissingInput] = {m.path: m for m in also or []}
    failed = [f for f in timeline.findings if f.code in ("body_decode_failed", "empty_completed_instant")
              and f.path not in out and f.severity is Severity.ERROR]
    if not failed:
        return sorted(out.values(), key=lambda m: (m.requested_time, m.path))
    by_name = {f.name: (inst, f) for inst in timeline.all_instants for f in inst.files}
    for finding in failed:
        if finding.path in out:
            continue
        name = finding.path.rsplit("/", 1)[-1]
        hit = by_name.get(name)
        if hit is None:
            continue
        inst, f = hit
        out[finding.path] = _missing(timeline, inst, f.state, finding)
    return sorted(out.values(), key=lambda m: (m.requested_time, m.path))


def unknown_groups_input(view: object) -> list[MissingInput]:
    """The replacecommits whose replaced groups the file-system view could not establish."""
    out = []
    for finding in getattr(view, "findings", []):
        if finding.code == "replaced_groups_unknown":
            name = finding.path.rsplit("/", 1)[-1]
            out.append(MissingInput(finding.path, name.split("_")[0].split(".")[0], ia.REPLACE_COMMIT,
                                    State.COMPLETED.name, finding.message, AFFECTS[ia.REPLACE_COMMIT]))
    return out
