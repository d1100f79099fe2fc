"""Writers of both archived-timeline layouts into a scenario table, as Hudi 1.1's archiver writes them.

Write only into a :class:`~hudi_core.scenarios.scratch.ScratchDir`; never into an inspected table. The
records, blocks, LSM rows and manifests come from the format's encoders
(:mod:`hudi_core.formats.timeline.archive_encode`); this module appends and rewrites files.

**Layout 1** (`TimelineArchiverV1`, tables v6): ``.hoodie/archived/.commits_.archive.N_1-0-1`` log
files of AVRO_DATA_BLOCKs, a block every ``hoodie.commits.archival.batch`` (10) records.

**Layout 2** (`LSMTimelineWriter`, tables v8/v9): ``.hoodie/timeline/history`` holds
``<min>_<max>_<level>.parquet`` files, ``manifest_N`` and ``_version_``. Each write adds an L0 file and a
new snapshot; then levels holding >= 10 files are compacted into the next level and old snapshots cleaned
(keeping 3 + the number of compactions just done).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_core.formats.timeline import lsm_rules
from hudi_core.formats.timeline.archive_encode import (
    LSM_ARROW_SCHEMA,
    VERSION_FILE,
    InstantBodies,
    LsmFile,
    archive_block,
    archive_file_name,
    archived_meta_entries,
    lsm_instant_row,
    lsm_table,
    manifest_json,
)
from hudi_core.formats.timeline.instant import Instant, State, epoch_ms_to_instant_times
from hudi_core.io.properties import TableProperties
from hudi_core.scenarios.scratch import ScratchDir

#: `hoodie.commits.archival.batch` default: records per archive log block.
ARCHIVAL_BATCH = 10
#: `hoodie.timeline.compaction.batch.size` default: files of a level merged into the next one.
LSM_COMPACTION_BATCH = lsm_rules.COMPACTION_BATCH
#: Upper bound of the total input size of one LSM compaction (`hoodie.timeline.compaction.target.file.max.bytes`).
LSM_MAX_FILE_BYTES = lsm_rules.MAX_FILE_BYTES

ARCHIVE_FILE_RE = re.compile(r"^\.commits_\.archive\.([0-9]+).*")


# -- layout 1 -------------------------------------------------------------------------------------


class ArchiveLogWriter:
    """Appends `HoodieArchivedMetaEntry` blocks to layout-1 archive log files in a scratch table."""

    def __init__(self, scratch: ScratchDir, archive_dir: str = ".hoodie/archived", table_version: int = 6,
                 batch_size: int = ARCHIVAL_BATCH) -> None:
        self.scratch = scratch
        self.archive_dir = archive_dir
        self.table_version = table_version
        self.batch_size = max(1, batch_size)

    def existing_files(self) -> list[tuple[int, str]]:
        """``(N, name)`` of the archive files present, by N."""
        folder = self.scratch.path(self.archive_dir)
        if not folder.is_dir():
            return []
        found = []
        for p in folder.iterdir():
            m = ARCHIVE_FILE_RE.match(p.name)
            if m and p.is_file():
                found.append((int(m.group(1)), p.name))
        return sorted(found)

    def append(self, entries: Sequence[Mapping[str, Any]], new_file: bool = False) -> str:
        """Append `entries` in blocks of `batch_size` to the newest archive file (or to a new
        file N+1 when `new_file`, as a writer on storage without append rolls over). Returns the
        root-relative path written."""
        files = self.existing_files()
        name = files[-1][1] if files and not new_file else archive_file_name(files[-1][0] + 1 if files else 1)
        rel = f"{self.archive_dir}/{name}"
        blocks = [
            archive_block(entries[i:i + self.batch_size], self.table_version)
            for i in range(0, len(entries), self.batch_size)
        ]
        self.scratch.mkdirs(self.archive_dir)
        self.scratch.append_bytes(rel, b"".join(blocks))
        return rel


# -- layout 2 -------------------------------------------------------------------------------------


class LSMTimelineWriter:
    """Writes the layout-2 LSM history of a scratch table (`LSMTimelineWriter`)."""

    def __init__(self, scratch: ScratchDir, history_dir: str = ".hoodie/timeline/history",
                 compaction_batch: int = LSM_COMPACTION_BATCH, codec: str = "gzip",
                 max_file_bytes: int = LSM_MAX_FILE_BYTES, clean: bool = True) -> None:
        self.scratch = scratch
        self.history_dir = history_dir
        self.compaction_batch = max(2, compaction_batch)
        self.codec = codec
        self.max_file_bytes = max_file_bytes
        self.clean_enabled = clean

    # snapshot state
    def latest_version(self) -> int:
        """The `_version_` value, else the highest manifest number, else 0 (no history)."""
        vf = self.scratch.path(f"{self.history_dir}/{VERSION_FILE}")
        if vf.is_file():
            try:
                return lsm_rules.parse_version_file(vf.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, ValueError):
                pass
        versions = self.manifest_versions()
        return versions[-1] if versions else 0

    def manifest_versions(self) -> list[int]:
        """Every manifest number present, ascending (``.tmp`` files excluded)."""
        folder = self.scratch.path(self.history_dir)
        if not folder.is_dir():
            return []
        names = [p.name for p in folder.iterdir()]
        return sorted(lsm_rules.manifest_version(n) for n in names if lsm_rules.is_manifest_name(n))

    def read_manifest(self, version: int) -> list[LsmFile]:
        """The files of snapshot `version` (empty for version 0)."""
        if version <= 0:
            return []
        data = self.scratch.path(f"{self.history_dir}/{lsm_rules.manifest_name(version)}").read_bytes()
        return [LsmFile(name, length or 0) for name, length in lsm_rules.parse_manifest(data)]

    def _commit_snapshot(self, files: Sequence[LsmFile]) -> int:
        version = self.latest_version() + 1
        self.scratch.write_text(f"{self.history_dir}/{lsm_rules.manifest_name(version)}", manifest_json(files))
        # Hudi deletes and re-creates `_version_` (no newline).
        self.scratch.delete(f"{self.history_dir}/{VERSION_FILE}")
        self.scratch.write_text(f"{self.history_dir}/{VERSION_FILE}", str(version))
        return version

    def _write_parquet(self, name: str, table: pa.Table) -> LsmFile:
        with self.scratch.writing(f"{self.history_dir}/{name}") as path:
            pq.write_table(table, str(path), compression=self.codec, use_dictionary=["action"],
                           write_statistics=["instantTime", "completionTime", "action"])
        return LsmFile(name, path.stat().st_size)

    def write_batches(self, name: str, batches: Iterable[Sequence[Mapping[str, Any]]]) -> LsmFile:
        """Write one LSM data file from row batches (one parquet row group each), streaming, so a
        file of a million instants never sits in memory at once. Does not touch the manifest."""
        with self.scratch.writing(f"{self.history_dir}/{name}") as path, \
                pq.ParquetWriter(str(path), LSM_ARROW_SCHEMA, compression=self.codec, use_dictionary=["action"],
                                 write_statistics=["instantTime", "completionTime", "action"]) as writer:
            for batch in batches:
                if batch:
                    writer.write_table(lsm_table(batch))
        return LsmFile(name, path.stat().st_size)

    def write_l0(self, rows: Sequence[Mapping[str, Any]]) -> str:
        """Write one archival batch as an L0 file and a new snapshot; returns its relative path."""
        if not rows:
            raise ValueError("an LSM write needs at least one instant")
        ordered = sorted(rows, key=lambda r: (str(r["instantTime"]), str(r.get("action") or "")))
        name = lsm_rules.data_file_name(str(ordered[0]["instantTime"]), str(ordered[-1]["instantTime"]), 0)
        entry = self._write_parquet(name, lsm_table(ordered))
        files = [f for f in self.read_manifest(self.latest_version()) if f.file_name != name]
        self._commit_snapshot([*files, entry])
        return f"{self.history_dir}/{name}"

    def compact(self) -> list[str]:
        """Compact level by level (`LSMTimelineWriter.compactAndClean`): while level L holds >=
        `compaction_batch` files, merge its oldest ones (up to the batch, at least 2, total input
        size bounded) into one file of level L+1 — a new snapshot — and go on with L+1; stop at the
        first level that needs nothing. Returns the written relative paths."""
        written: list[str] = []
        for level in range(9):  # the name pattern allows one digit
            files = self.read_manifest(self.latest_version())
            at_level = sorted((f for f in files if f.level == level), key=lambda f: f.file_name)
            if len(at_level) < self.compaction_batch:
                break
            by_name = {f.file_name: f for f in at_level}
            chosen = lsm_rules.compaction_candidates([(f.file_name, f.file_len) for f in at_level],
                                                     self.compaction_batch, self.max_file_bytes, "1.2")
            if len(chosen) < 2:
                break
            candidates = [by_name[n] for n in chosen]
            tables = [pq.read_table(str(self.scratch.path(f"{self.history_dir}/{f.file_name}"))) for f in candidates]
            merged = pa.concat_tables([t.cast(LSM_ARROW_SCHEMA) for t in tables])
            name = lsm_rules.compacted_file_name(chosen)
            entry = self._write_parquet(name, merged)
            gone = {f.file_name for f in candidates}
            remaining = [f for f in files if f.file_name not in gone and f.file_name != name]
            self._commit_snapshot([*remaining, entry])
            written.append(f"{self.history_dir}/{name}")
        return written

    def clean(self, compactions: int = 0) -> list[str]:
        """Keep the newest ``3 + compactions`` snapshots; delete older manifests and the data files
        no kept manifest names. Returns the deleted relative paths."""
        versions = self.manifest_versions()
        kept = lsm_rules.versions_to_keep(versions, lsm_rules.RETAINED_VERSIONS, compactions)
        keep = versions if kept is None else kept
        live: set[str] = set()
        for v in keep:
            live.update(f.file_name for f in self.read_manifest(v))
        deleted: list[str] = []
        folder = self.scratch.path(self.history_dir)
        for p in sorted(folder.iterdir()):
            stale_manifest = lsm_rules.is_manifest_name(p.name) and lsm_rules.manifest_version(p.name) not in keep
            if stale_manifest or (lsm_rules.is_data_file_name(p.name) and p.name not in live):
                rel = f"{self.history_dir}/{p.name}"
                self.scratch.delete(rel)
                deleted.append(rel)
        return deleted

    def append(self, rows: Sequence[Mapping[str, Any]], after_write: Callable[[], None] | None = None) -> list[str]:
        """What one archiver run does: write L0 (and its snapshot), then compact and clean. `after_write`
        runs in between, where `TimelineArchiverV2.archiveIfRequired` deletes the archived active files.
        Returns written paths (data files, manifests, `_version_`)."""
        before = set(self.manifest_versions())
        written = [self.write_l0(rows)]
        if after_write is not None:
            after_write()
        written.extend(self.compact())
        new_versions = [v for v in self.manifest_versions() if v not in before]
        if self.clean_enabled:
            self.clean(compactions=max(0, len(new_versions) - 1))
        written.extend(f"{self.history_dir}/{lsm_rules.manifest_name(v)}" for v in new_versions)
        written.append(f"{self.history_dir}/{VERSION_FILE}")
        return [w for w in written if self.scratch.exists(w)]


# -- the high-level entry -------------------------------------------------------------------------


def collect_instant_bodies(scratch: ScratchDir, properties: TableProperties,
                           instants: Iterable[Instant]) -> list[InstantBodies]:
    """Read every state file of `instants` from the scratch table's active timeline."""
    out: list[InstantBodies] = []
    for inst in sorted(instants, key=Instant.sort_key):
        bodies = InstantBodies(inst.requested_time, inst.completion_time)
        times = epoch_ms_to_instant_times([f.mtime_ms for f in inst.files], properties.timezone)
        for f, when in zip(inst.files, times, strict=True):
            rel = f"{properties.timeline_dir}/{f.name}"
            bodies.files[f.state] = (f.action, scratch.path(rel).read_bytes())
            if when is not None and f.state is not State.COMPLETED:
                bodies.state_times[f.state] = when
        out.append(bodies)
    return out


def _parquet_codec(properties: TableProperties) -> str:
    """`hoodie.parquet.compression.codec` (default gzip) as a pyarrow codec name."""
    name = (properties.raw.get("hoodie.parquet.compression.codec") or "gzip").strip().lower()
    return {"uncompressed": "none", "lzo": "gzip"}.get(name, name)


def archive_instants(
    scratch: ScratchDir,
    properties: TableProperties,
    instants: Sequence[Instant],
    *,
    new_file: bool = False,
    batch_size: int = ARCHIVAL_BATCH,
    compaction_batch: int = LSM_COMPACTION_BATCH,
    codec: str | None = None,
) -> list[str]:
    """Archive completed active instants of a scratch table the way Hudi 1.1's archiver does.

    Reads the instants' state files, appends them to the archive of the table's layout (layout 1:
    archive log `HoodieArchivedMetaEntry` blocks, `new_file` to roll over to a new log file;
    layout 2: one L0 parquet file and its snapshot), then deletes the archived active files, then (layout 2)
    compacts and cleans the LSM history, in the order of Hudi 1.1's `TimelineArchiverV1/V2.archiveIfRequired`.
    The active files go pending states of every instant first, then the completed files in ascending order
    (`deleteArchivedInstants` / `deleteArchivedActions`: a completed file removed before its pending ones would
    make a pending instant appear; HUDI-7207). Returns the root-relative paths written.
    """
    if not instants:
        return []
    pending = [i for i in instants if not i.is_completed]
    if pending:
        raise ValueError(f"only completed instants are archived; {pending[0]} is pending")
    bodies = collect_instant_bodies(scratch, properties, instants)
    if properties.timeline_layout_version >= 2:
        writer = LSMTimelineWriter(scratch, properties.archive_dir, compaction_batch,
                                   codec or _parquet_codec(properties))
        return writer.append([lsm_instant_row(b) for b in bodies],
                             after_write=lambda: _delete_archived(scratch, properties, instants))
    log_writer = ArchiveLogWriter(scratch, properties.archive_dir, properties.version, batch_size)
    entries = [e for b in bodies for e in archived_meta_entries(b, properties.version)]
    written = [log_writer.append(entries, new_file=new_file)]
    _delete_archived(scratch, properties, instants)
    return written


def _delete_archived(scratch: ScratchDir, properties: TableProperties, instants: Sequence[Instant]) -> None:
    """Delete the archived instants' active files: every pending state file, then the completed files, ascending."""
    ordered = sorted(instants, key=Instant.sort_key)
    by_state = [sorted(inst.files, key=lambda f: int(f.state)) for inst in ordered]
    files = [f for inst_files in by_state for f in inst_files if f.state is not State.COMPLETED]
    files += [f for inst_files in by_state for f in inst_files if f.state is State.COMPLETED]
    for f in files:
        scratch.delete(f"{properties.timeline_dir}/{f.name}")
