"""What an archival does to the LSM timeline (layout 2): the L0 file, compactions, and the files it deletes.

Emulates `TimelineArchiverV2.archiveIfRequired` after it has chosen the instants: `LSMTimelineWriter.write`
puts them in one L0 file ``<first>_<last>_0.parquet`` and commits a new snapshot (manifest + `_version_`),
then `compactAndClean` merges full levels and deletes the manifests and data files no kept snapshot needs
(rules in :mod:`hudi_core.formats.timeline.lsm_rules`; release differences there). Nothing runs when nothing is
archived. Nothing is written: :class:`LsmArchivalPlan` is a report.

Where Hudi's archiver would throw (a manifest it must read is missing or not JSON, a manifest name without a
number, a data file name outside the pattern chosen for compaction), the plan stops at that step with
`failure` naming the file: the steps before it happen, the rest does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from hudi_core.errors import StorageError
from hudi_core.formats.timeline import lsm_rules
from hudi_core.services.config import ServiceConfig

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

VERSION_FILE = lsm_rules.VERSION_FILE


class LsmStepKind(StrEnum):
    """One thing the LSM writer does in an archival run."""

    WRITE_L0 = "write_l0"
    #: The L0 file exists and the latest manifest names it: a previous run committed it (`isFileCommitted`).
    ALREADY_COMMITTED = "already_committed"
    #: The L0 file exists but no manifest names it (a failed write): deleted and written again.
    REWRITE_L0 = "rewrite_l0"
    COMPACT = "compact"


@dataclass(frozen=True)
class LsmStep:
    """A file the run writes (or finds committed) and the snapshot version it commits (``None``: none)."""

    kind: LsmStepKind
    level: int
    file_name: str
    version: int | None
    inputs: tuple[str, ...] = ()
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "level": self.level, "file": self.file_name, "version": self.version,
                "inputs": list(self.inputs), "detail": self.detail}


@dataclass(frozen=True)
class LsmDeletion:
    """A file of the history folder the run deletes: a `manifest` or a `data` file, with why."""

    name: str
    kind: str
    size: int | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.name, "kind": self.kind, "size": self.size, "reason": self.reason}


@dataclass
class LsmArchivalPlan:
    """The LSM side of the next archival: steps, the snapshot versions kept, and the files deleted."""

    history_dir: str
    latest_version: int
    version_source: str
    steps: list[LsmStep] = field(default_factory=list)
    compactions: int = 0
    retained_versions: int = lsm_rules.RETAINED_VERSIONS
    retained_rule: str = ""
    #: Snapshot versions (manifest files) when cleaning runs, the new ones included.
    snapshot_count: int = 0
    #: Snapshot versions kept by cleaning, newest first; ``None`` when there are too few to clean.
    versions_kept: list[int] | None = None
    deletions: list[LsmDeletion] = field(default_factory=list)
    final_version: int = -1
    #: Where Hudi's archiver would throw (file and reason); ``None`` when the run completes.
    failure: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def most_versions_kept(self) -> int:
        """How many snapshot versions cleaning keeps at most (`LSMTimelineWriter.clean`)."""
        return self.retained_versions + self.compactions

    @property
    def compaction_steps(self) -> list[LsmStep]:
        return [s for s in self.steps if s.kind is LsmStepKind.COMPACT]

    @property
    def manifests_deleted(self) -> list[LsmDeletion]:
        return [d for d in self.deletions if d.kind == "manifest"]

    @property
    def data_files_deleted(self) -> list[LsmDeletion]:
        return [d for d in self.deletions if d.kind == "data"]

    def to_dict(self) -> dict[str, Any]:
        """The `lsm_timeline` object of the `plan-archive` JSON."""
        return {
            "history_dir": self.history_dir,
            "latest_version": self.latest_version,
            "version_source": self.version_source,
            "steps": [s.to_dict() for s in self.steps],
            "compactions": self.compactions,
            "retained_versions": self.retained_versions,
            "retained_rule": self.retained_rule,
            "snapshot_count": self.snapshot_count,
            "versions_kept": self.versions_kept,
            "final_version": self.final_version,
            "manifests_deleted": [d.to_dict() for d in self.manifests_deleted],
            "data_files_deleted": [d.to_dict() for d in self.data_files_deleted],
            "failure": self.failure,
            "notes": list(self.notes),
        }


class _Failure(Exception):
    """Hudi's archiver throws here."""


class _History:
    """The history folder as the LSM writer sees it: one listing, manifests read on demand (each once)."""

    def __init__(self, table: HudiTable) -> None:
        self.storage = table.storage
        self.folder = table.properties.archive_dir
        self.sizes = {i.name: i.size for i in self.storage.list(self.folder) if not i.is_dir}
        self.manifests: dict[int, list[tuple[str, int]]] = {}

    def uri(self, name: str) -> str:
        return self.storage.uri_of(f"{self.folder}/{name}")

    def versions(self) -> list[tuple[str, int]]:
        """`LSMTimeline.allSnapshotVersions` as (file name, version); throws on a name without a number."""
        out = []
        for name in sorted(self.sizes):
            if lsm_rules.is_manifest_name(name):
                try:
                    out.append((name, lsm_rules.manifest_version(name)))
                except ValueError as exc:
                    raise _Failure(f"{self.uri(name)}: {exc} (NumberFormatException in "
                                   "LSMTimeline.getManifestVersion)") from exc
        return out

    def latest_version(self) -> tuple[int, str]:
        """`LSMTimeline.latestSnapshotVersion`: `_version_`, else the highest manifest, else -1."""
        if VERSION_FILE in self.sizes:
            try:
                text = self.storage.read(f"{self.folder}/{VERSION_FILE}").decode("utf-8")
                return lsm_rules.parse_version_file(text), VERSION_FILE
            except (StorageError, UnicodeDecodeError, ValueError) as exc:
                reason = f"{VERSION_FILE} unreadable ({exc}); the highest manifest"
        else:
            reason = f"no {VERSION_FILE}; the highest manifest"
        versions = [v for _, v in self.versions()]
        return (max(versions), reason) if versions else (-1, "no snapshot yet")

    def manifest(self, version: int) -> list[tuple[str, int]]:
        """`LSMTimeline.latestSnapshotManifest(version)`: empty below 0; throws when missing or not JSON."""
        if version < 0:
            return []
        if version not in self.manifests:
            name = lsm_rules.manifest_name(version)
            try:
                # a missing (or non-integer) fileLen counts as 0, the Java long's default
                entries = lsm_rules.parse_manifest(self.storage.read(f"{self.folder}/{name}"))
                self.manifests[version] = [(n, length or 0) for n, length in entries]
            except StorageError as exc:
                raise _Failure(f"{self.uri(name)}: cannot be read ({exc})") from exc
            except ValueError as exc:
                raise _Failure(f"{self.uri(name)}: {exc} (HoodieException: Error deserializing manifest "
                               "entries)") from exc
        return self.manifests[version]


def plan_lsm_archival(table: HudiTable, requested_times: list[str], config: ServiceConfig) -> LsmArchivalPlan:
    """What archiving `requested_times` (non-empty) does to `table`'s LSM history, as `config`'s release."""
    history = _History(table)
    release = config.hudi_release
    if release == "1.1":
        retained, max_bytes = lsm_rules.RETAINED_VERSIONS, lsm_rules.MAX_FILE_BYTES
        rule = "1.1 keeps 3 snapshot versions (fixed)"
    else:
        retained, max_bytes = config.timeline_manifest_retained_versions, config.timeline_compaction_max_bytes
        rule = f"hoodie.timeline.manifest.retained.versions={retained}"
    plan = LsmArchivalPlan(history.storage.uri_of(history.folder), -1, "", retained_versions=retained)
    try:
        latest, plan.version_source = history.latest_version()
        plan.latest_version = plan.final_version = latest
        _write_l0(plan, history, sorted(requested_times), release)
        _compact(plan, history, config.timeline_compaction_batch, max_bytes, release)
        plan.retained_rule = f"{rule} + {plan.compactions} compaction(s) this run"
        _clean(plan, history)
    except _Failure as exc:
        plan.failure = str(exc)
    return plan


def _write_l0(plan: LsmArchivalPlan, history: _History, times: list[str], release: str) -> None:
    name = lsm_rules.data_file_name(times[0], times[-1], 0)
    new_version = 1 if plan.latest_version < 0 else plan.latest_version + 1
    latest_files = history.manifest(plan.latest_version)
    if name in history.sizes:
        if name in {n for n, _ in latest_files}:
            plan.steps.append(LsmStep(LsmStepKind.ALREADY_COMMITTED, 0, name, None, detail=(
                f"{lsm_rules.manifest_name(plan.latest_version)} already names it: the write returns early (a "
                "previous run failed after committing it); compaction and cleaning still run")))
            return
        kind, detail = LsmStepKind.REWRITE_L0, "left by a failed write and named by no manifest: deleted, written again"
    else:
        kind, detail = LsmStepKind.WRITE_L0, f"{len(times)} instant(s)"
    manifest_name = lsm_rules.manifest_name(new_version)
    if manifest_name in history.sizes:
        # A write that failed between the manifest and `_version_`. 1.2's createManifestFile deletes it first;
        # 1.1 creates it with createImmutableFileInPath, which does not overwrite.
        if release == "1.1":
            raise _Failure(f"{history.uri(manifest_name)}: exists (left by a failed write) and 1.1 does not delete "
                           "it before creating it again: the archival fails after writing the L0 file")
        detail += f"; {manifest_name} left by a failed write is deleted before the new one is written"
    history.manifests[new_version] = [*latest_files, (name, 0)]
    plan.steps.append(LsmStep(kind, 0, name, new_version, detail=detail))
    plan.final_version = new_version


def _compact(plan: LsmArchivalPlan, history: _History, batch: int, max_bytes: int, release: str) -> None:
    """`compactAndClean`'s loop: level by level while a level is full and yields at least two candidates."""
    working = list(history.manifest(plan.final_version))
    level = 0
    while True:
        at_level = sorted((f for f in working if lsm_rules.file_level(f[0]) == level), key=lambda f: f[0])
        if len(at_level) < batch:
            break
        chosen = lsm_rules.compaction_candidates(at_level, batch, max_bytes, release)
        if level == 0 and any(s.kind is not LsmStepKind.ALREADY_COMMITTED for s in plan.steps):
            plan.notes.append(f"the new L0 file {plan.steps[0].file_name} does not exist yet: its length is "
                              "counted as 0 bytes against the compaction size cap")
        if len(chosen) < 2:
            plan.notes.append(f"level {level} holds {len(at_level)} files (≥ batch {batch}) but its oldest "
                              f"file exceeds the {max_bytes:,}-byte cap: no compaction")
            break
        try:
            merged = lsm_rules.compacted_file_name(chosen)
        except ValueError as exc:
            raise _Failure(f"{history.uri(chosen[0])}: {exc} (HoodieException in LSMTimeline)") from exc
        lengths = dict(at_level)
        size = sum(lengths[n] for n in chosen)
        version = plan.final_version + 1
        current = history.manifest(plan.final_version)
        history.manifests[version] = [f for f in current if f[0] not in set(chosen)] + [(merged, size)]
        plan.steps.append(LsmStep(LsmStepKind.COMPACT, level + 1, merged, version, tuple(chosen),
                                  f"{len(chosen)} level-{level} files, {size:,} bytes in"))
        plan.final_version = version
        working.append((merged, size))
        level += 1
    plan.compactions = level
    if level:
        plan.notes.append("a compacted file's length is taken as the sum of its inputs (parquet re-encoding "
                          "changes it)")


def _clean(plan: LsmArchivalPlan, history: _History) -> None:
    """`LSMTimelineWriter.clean`: keep the newest retained + compactions versions; delete the rest."""
    listed = history.versions()
    new_versions = [s.version for s in plan.steps if s.version is not None]
    names_listed = {n for n, _ in listed}
    versions = [v for _, v in listed] + [v for v in new_versions if lsm_rules.manifest_name(v) not in names_listed]
    keep = lsm_rules.versions_to_keep(versions, plan.retained_versions, plan.compactions)
    plan.snapshot_count, plan.versions_kept = len(versions), keep
    if keep is None:
        return
    kept = set(keep)
    live: set[str] = set()
    for version in sorted(kept, reverse=True):
        live.update(n for n, _ in history.manifest(version))
    for name, version in listed:
        if version not in kept:
            plan.deletions.append(LsmDeletion(name, "manifest", history.sizes.get(name),
                                              f"version {version} is older than the {len(keep)} kept"))
    kept_names = ", ".join(lsm_rules.manifest_name(v) for v in keep)
    for name in sorted(history.sizes):
        if lsm_rules.is_data_file_name(name) and name not in live:
            plan.deletions.append(LsmDeletion(name, "data", history.sizes[name], f"named by none of {kept_names}"))
