"""Synthetic Hudi tables of a chosen size, for benchmarks: `generate_table`.

A generated table is a real, well-formed table for this engine's readers (and, format-wise, for
Hudi's): ``hoodie.properties``; partitions with ``.hoodie_partition_metadata``; an active timeline
of K commits (COW) or deltacommits (MOR) whose metadata bodies are real (JSON for table version 6,
Avro for 8/9) and whose write stats name exactly the base and log files on disk; and an archive of
A older instants in the table's layout (layout 1 archive log files, layout 2 LSM history with
several levels).

How it stays fast (L = 1M files in minutes, not hours):

* **Base files** are one tiny valid parquet file (one row, Hudi meta columns) per partition,
  hard-linked under every base-file name of that partition (ext4 allows 65000 links per inode;
  a partition holds far fewer). Every base file is therefore a readable parquet file, but its
  rows do not match its name (``_hoodie_commit_time`` is the template's). Documented limitation.
* **Log files** are written one by one (each is a valid log file: one AVRO_DATA_BLOCK whose
  INSTANT_TIME header is the writing deltacommit), from a byte template with the instant patched
  in (same length), so no Avro encoding per file.
* **Archived instants** carry one write stat each (the files they wrote were cleaned long ago,
  so those names are not on disk); every 10th is a clean (plan + metadata) and, for MOR, every
  10th a compaction (plan + commit), so plan bytes and several actions are present. Layout 2 is
  written straight into a multi-level LSM state (files of levels 0-3, fewer than 10 per level,
  each a valid compaction result) with one manifest, instead of replaying every archiver run.

* **Metadata table** (table versions 8 and 9, on by default; ``--no-metadata-table`` skips it): the
  `files` partition of ``.hoodie/metadata`` as it stands at the end, written by
  :class:`hudi_core.scenarios.mdt_writer.MetadataTableWriter` from what the generator already knows, in one
  pass: the initialisation delta commit ``00000000000000000`` (empty listing, as a metadata table built with
  the table), a compaction run inside the delta commit of the fifth-last active instant (as Hudi runs it,
  fixtures ``v8_trips_8i3u1d`` / ``v9_txns_simple_meta``) whose base HFile lists every data file the earlier
  instants wrote with its real size, and one delta commit with one log file for each of the last five active
  instants. The metadata table's own earlier delta commits are not kept (as after its archival and cleaning).
  ``mdt_drift=N`` then makes the listing disagree with storage: N files the metadata table lists are deleted
  from storage (a hard-linked base file loses that name only) and N files on storage are left out of it,
  picked with a seeded generator from latest and older file slices alike; the report's ``mdt_drift`` names them.

Sizes (files = base + log files): S 10k, M 100k, L 1M (1k partitions, 10k active instants,
1M archived instants, 100k log files for MOR).
"""

from __future__ import annotations

import datetime as dt
import io
import os
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_core.errors import HudiInspectError
from hudi_core.formats.logfile.writer import avro_data_block
from hudi_core.formats.timeline import archive_encode as ae
from hudi_core.formats.timeline import encode as enc
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline import lsm_rules
from hudi_core.formats.timeline.instant import State
from hudi_core.scenarios import archive_writer as aw
from hudi_core.scenarios.scratch import ScratchDir

COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"

#: Records per layout-2 L0 file when the generator lays out the LSM history (one archiver run).
LSM_ROWS_PER_L0 = 700
#: Rows per parquet row group of generated LSM files (bounds the generator's memory).
LSM_ROWS_PER_GROUP = 20_000
#: Archive entries per layout-1 archive log file (rolls over like a writer without append).
ARCHIVE_ENTRIES_PER_FILE = 30000
#: `hoodie.commits.archival.batch` the generator uses: Hudi's default is 10, but every block repeats
#: the 17 KB entry schema in its header, so large generated archives use bigger blocks.
GENERATOR_ARCHIVAL_BATCH = 100
#: Every generated instant goes inflight this long after its requested time and completes this long after it (s).
INFLIGHT_AFTER_S = 0.25
COMPLETION_AFTER_S = 1.5


class ScaleError(HudiInspectError):
    """Invalid generator parameters."""


@dataclass(frozen=True)
class ScaleParams:
    """What to generate. `files` counts base + log files (log files only for MOR)."""

    partitions: int
    file_groups: int
    active_instants: int
    archived_instants: int
    log_files: int
    files: int

    def base_files(self, table_type: str) -> int:
        """Base files: all the files for COW; files minus log files for MOR."""
        return self.files - (self.log_files if table_type == MERGE_ON_READ else 0)


SIZES: dict[str, ScaleParams] = {
    "S": ScaleParams(partitions=10, file_groups=1_000, active_instants=100, archived_instants=1_000,
                     log_files=1_000, files=10_000),
    "M": ScaleParams(partitions=100, file_groups=10_000, active_instants=1_000, archived_instants=100_000,
                     log_files=10_000, files=100_000),
    "L": ScaleParams(partitions=1_000, file_groups=100_000, active_instants=10_000, archived_instants=1_000_000,
                     log_files=100_000, files=1_000_000),
}


@dataclass
class GenerateReport:
    """What was built, how long each phase took (seconds) and the bytes on disk."""

    out_dir: str
    table_type: str
    table_version: int
    layout: int
    params: dict[str, int]
    base_files: int = 0
    log_files: int = 0
    active_instants: int = 0
    archived_instants: int = 0
    archive_files: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    disk_bytes: int = 0
    #: Whether the metadata table (`files` partition) was written.
    metadata_table: bool = False
    #: With a metadata table: the files made to disagree (``missing_on_storage``: listed by the metadata table,
    #: deleted from storage; ``missing_in_metadata``: on storage, never listed), root-relative paths, sorted.
    mdt_drift: dict[str, list[str]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


# -- names and times ------------------------------------------------------------------------------

_EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def instant_time(seconds: float) -> str:
    """The instant time `seconds` after 2024-01-01T00:00:00 UTC (`yyyyMMddHHmmssSSS`)."""
    return ia.format_instant_time(_EPOCH + dt.timedelta(seconds=seconds))


def file_id(group: int) -> str:
    """A deterministic UUID-shaped file id with Hudi's ``-0`` suffix."""
    return f"{group:08x}-0000-4000-8000-{group * 2654435761 % (1 << 48):012x}-0"


def partition_path(index: int) -> str:
    """Hive-style partition names (``part=00042``)."""
    return f"part={index:05d}"


WRITE_TOKEN = "0-1-1"


def base_file_name(fid: str, instant: str) -> str:
    """`<fileId>_<writeToken>_<instant>.parquet`."""
    return f"{fid}_{WRITE_TOKEN}_{instant}.parquet"


def log_file_name(fid: str, instant: str, version: int = 1) -> str:
    """`.<fileId>_<instant>.log.<version>_<writeToken>`."""
    return f".{fid}_{instant}.log.{version}_{WRITE_TOKEN}"


# -- templates ------------------------------------------------------------------------------------

_RECORD_SCHEMA = {
    "type": "record", "name": "scale_record", "namespace": "hoodie.scale",
    "fields": [
        {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
        {"name": "_hoodie_commit_seqno", "type": ["null", "string"], "default": None},
        {"name": "_hoodie_record_key", "type": ["null", "string"], "default": None},
        {"name": "_hoodie_partition_path", "type": ["null", "string"], "default": None},
        {"name": "_hoodie_file_name", "type": ["null", "string"], "default": None},
        {"name": "id", "type": ["null", "long"], "default": None},
        {"name": "ts", "type": ["null", "long"], "default": None},
    ],
}
_RECORD_SCHEMA_JSON = __import__("json").dumps(_RECORD_SCHEMA, separators=(",", ":"))
#: The table schema (commit `extraMetadata.schema`, `hoodie.table.create.schema`): the record schema plus
#: the partition field `part` named by `hoodie.table.partition.fields`, as a Hudi writer records it.
#: Readers such as hudi-rs refuse a table whose schema lacks a declared partition field.
_TABLE_SCHEMA = {**_RECORD_SCHEMA, "name": "scale_table_record",
                 "fields": [*_RECORD_SCHEMA["fields"], {"name": "part", "type": ["null", "string"], "default": None}]}
_TABLE_SCHEMA_JSON = __import__("json").dumps(_TABLE_SCHEMA, separators=(",", ":"))
_PLACEHOLDER = "99999999999999999"


def base_file_template(partition: str) -> bytes:
    """A one-row parquet file with the Hudi meta columns (the bytes every base file links to)."""
    table = pa.table({
        "_hoodie_commit_time": ["20240101000000000"], "_hoodie_commit_seqno": ["20240101000000000_0_0"],
        "_hoodie_record_key": ["key-0"], "_hoodie_partition_path": [partition],
        "_hoodie_file_name": ["template.parquet"], "id": pa.array([0], pa.int64()), "ts": pa.array([0], pa.int64()),
    })
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="snappy")
    return buf.getvalue()


def log_file_template() -> bytes:
    """One AVRO_DATA_BLOCK log file with a placeholder INSTANT_TIME (17 digits, patched per file)."""
    record = {"_hoodie_commit_time": _PLACEHOLDER, "_hoodie_commit_seqno": f"{_PLACEHOLDER}_0_1",
              "_hoodie_record_key": "key-0", "_hoodie_partition_path": "", "_hoodie_file_name": "",
              "id": 0, "ts": 1}
    return avro_data_block(_PLACEHOLDER, _RECORD_SCHEMA_JSON, [record], block_identifier=(0, 0))


# -- properties -----------------------------------------------------------------------------------


def properties_text(name: str, table_type: str, table_version: int, metadata_table: bool = False) -> str:
    """A `hoodie.properties` for the generated table (layout from the version); `metadata_table` names the
    metadata table's `files` partition."""
    layout = 2 if table_version >= 8 else 1
    lines = [
        "#Properties saved by hudi-inspect generate",
        f"hoodie.table.name={name}",
        f"hoodie.table.type={table_type}",
        f"hoodie.table.version={table_version}",
        f"hoodie.timeline.layout.version={layout}",
        "hoodie.table.partition.fields=part",
        "hoodie.table.recordkey.fields=id",
        "hoodie.archivelog.folder=archived",
        "hoodie.table.base.file.format=PARQUET",
        "hoodie.datasource.write.hive_style_partitioning=true",
        "hoodie.table.keygenerator.class=org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.table.timeline.timezone=UTC",
        "hoodie.database.name=default",
        "hoodie.table.create.schema=" + _TABLE_SCHEMA_JSON.replace(":", "\\:"),
    ]
    if table_version >= 8:
        lines += [f"hoodie.table.initial.version={table_version}", "hoodie.timeline.path=timeline",
                  "hoodie.timeline.history.path=history", "hoodie.table.ordering.fields=ts"]
        if metadata_table:
            lines += ["hoodie.table.metadata.partitions=files", "hoodie.table.metadata.partitions.inflight="]
        else:
            lines += ["hoodie.table.metadata.partitions="]
    else:
        lines += ["hoodie.table.precombine.field=ts"]
    return "\n".join(lines) + "\n"


# -- the plan of the active timeline --------------------------------------------------------------


@dataclass
class _Write:
    partition: str
    fid: str
    name: str
    size: int
    prev_commit: str
    base_file: str | None = None  # set for log writes


def _spread(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _resolve(size: str | ScaleParams | None, overrides: dict[str, int]) -> ScaleParams:
    if isinstance(size, ScaleParams):
        params = size
    else:
        key = (size or "S").upper()
        if key not in SIZES:
            raise ScaleError(f"unknown size {size!r}; choose one of {', '.join(SIZES)} or give parameters")
        params = SIZES[key]
    if overrides:
        params = replace(params, **overrides)
    for name, value in asdict(params).items():
        if value < 0:
            raise ScaleError(f"{name} must be >= 0, got {value}")
    if params.partitions < 1 or params.file_groups < 1 or params.active_instants < 1:
        raise ScaleError("partitions, file_groups and active_instants must be >= 1")
    return params


def generate_table(
    out_dir: str | os.PathLike[str],
    size: str | ScaleParams | None = "S",
    layout: int | None = None,
    table_type: str = COPY_ON_WRITE,
    table_version: int | None = None,
    *,
    partitions: int | None = None,
    file_groups: int | None = None,
    active_instants: int | None = None,
    archived_instants: int | None = None,
    log_files: int | None = None,
    files: int | None = None,
    lsm_codec: str = "zstd",
    progress: Callable[[str], None] | None = None,
    metadata_table: bool | None = None,
    mdt_drift: int = 0,
    mdt_drift_seed: int = 0,
    mdt_log_instants: int = 5,
) -> GenerateReport:
    """Build a synthetic table in the new directory `out_dir` and report what was built.

    `size` is ``"S"``, ``"M"``, ``"L"`` or a :class:`ScaleParams`; the keyword parameters override
    single counts. `layout` 1 pairs with table version 6, layout 2 with 8/9 (either may be given;
    the default is layout 2 / version 9). `lsm_codec` is the parquet codec of the LSM files (Hudi
    uses the table's ``hoodie.parquet.compression.codec``, gzip by default; zstd builds L faster).
    `metadata_table` (default: on for table versions 8 and 9, off for 6), `mdt_drift`, `mdt_drift_seed` and
    `mdt_log_instants` (delta commits with log files at the end): see the module doc.
    """
    overrides = {k: v for k, v in {
        "partitions": partitions, "file_groups": file_groups, "active_instants": active_instants,
        "archived_instants": archived_instants, "log_files": log_files, "files": files,
    }.items() if v is not None}
    params = _resolve(size, overrides)
    table_type = table_type.upper()
    if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise ScaleError(f"table type must be COPY_ON_WRITE or MERGE_ON_READ, got {table_type!r}")
    if table_version is None:
        table_version = 6 if layout == 1 else 9
    if table_version not in (6, 8, 9):
        raise ScaleError(f"table version must be 6, 8 or 9, got {table_version}")
    expected_layout = 2 if table_version >= 8 else 1
    if layout is None:
        layout = expected_layout
    if layout != expected_layout:
        raise ScaleError(f"table version {table_version} uses timeline layout {expected_layout}, not {layout}")
    if metadata_table is None:
        metadata_table = table_version >= 8
    if metadata_table and table_version < 8:
        raise ScaleError("the generator writes a metadata table for table versions 8 and 9 only")
    if mdt_drift < 0 or mdt_log_instants < 0:
        raise ScaleError("mdt_drift and mdt_log_instants must be >= 0")
    if mdt_drift and not metadata_table:
        raise ScaleError("mdt_drift needs the metadata table")
    if params.base_files(table_type) < 0:
        raise ScaleError(f"files ({params.files}) counts base and log files: fewer than the {params.log_files} log "
                         "files asked for")
    if mdt_drift * 2 > params.files:
        raise ScaleError(f"mdt_drift {mdt_drift} needs {2 * mdt_drift} files; the table has {params.files}")
    say = progress or (lambda _msg: None)
    scratch = ScratchDir.create(out_dir)
    report = GenerateReport(str(scratch.root), table_type, table_version, layout, asdict(params),
                            metadata_table=metadata_table)
    clock = time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        report.seconds[phase] = round(now - clock, 3)
        clock = now
        say(f"{phase}: {report.seconds[phase]:.1f}s")

    name = Path(scratch.root).name or "scale_table"
    scratch.write_text(".hoodie/hoodie.properties", properties_text(name, table_type, table_version, metadata_table))
    timeline_dir = ".hoodie/timeline" if layout == 2 else ".hoodie"
    scratch.mkdirs(timeline_dir)
    scratch.mkdirs(".hoodie/archived")
    if layout == 2:
        scratch.mkdirs(".hoodie/timeline/history")

    mor = table_type == MERGE_ON_READ
    n_base = params.base_files(table_type)
    n_logs = params.log_files if mor else 0
    n_active = params.active_instants
    # Instant times: archived first (one per 60 s), then active ones.
    archived_times = [instant_time(60.0 * i) for i in range(params.archived_instants)]
    start_active = 60.0 * params.archived_instants + 3600.0
    active_times = [instant_time(start_active + 60.0 * k) for k in range(n_active)]
    completion_times = [instant_time(start_active + 60.0 * k + COMPLETION_AFTER_S) for k in range(n_active)]
    parts = [partition_path(i) for i in range(params.partitions)]
    fids = [file_id(g) for g in range(params.file_groups)]
    lap("plan")

    # Partitions and the per-partition template of base files.
    template = {p: base_file_template(p) for p in parts[:1]}
    base_bytes = next(iter(template.values()))
    first_instant = active_times[0]
    for p in parts:
        scratch.write_text(f"{p}/.hoodie_partition_metadata",
                           f"#partition metadata\ncommitTime={first_instant}\npartitionDepth=1\n")
        scratch.write_bytes(f"{p}/.template.parquet.src", base_bytes)
    lap("partitions")

    # Active writes: base files round-robin over file groups, logs on groups that have a base.
    base_counts = _spread(n_base, n_active)
    log_counts = _spread(n_logs, n_active) if mor else [0] * n_active
    latest_base: dict[int, tuple[str, str]] = {}  # group -> (base instant, base name)
    latest_commit: dict[int, str] = {}
    log_versions: dict[tuple[int, str], int] = {}
    group_cursor = 0
    log_cursor = 0
    log_template = log_file_template()
    root = scratch.root
    action = ia.DELTA_COMMIT if mor else ia.COMMIT
    written: list[tuple[int, int, _Write]] = []  # (instant index, file group, write): the metadata table's input
    for k in range(n_active):
        t = active_times[k]
        writes: list[_Write] = []
        for _ in range(base_counts[k]):
            g = group_cursor % params.file_groups
            group_cursor += 1
            p = parts[g % params.partitions]
            fname = base_file_name(fids[g], t)
            src = root / p / ".template.parquet.src"
            os.link(src, root / p / fname)
            writes.append(_Write(p, fids[g], fname, len(base_bytes), latest_commit.get(g, "null")))
            if metadata_table:
                written.append((k, g, writes[-1]))
            latest_base[g] = (t, fname)
            latest_commit[g] = t
        for _ in range(log_counts[k]):
            if not latest_base:
                break
            g = log_cursor % max(1, min(group_cursor, params.file_groups))
            log_cursor += 1
            p = parts[g % params.partitions]
            base_instant, base_name = latest_base[g]
            # v6: logs are named after their slice's base instant; v8+: after the deltacommit.
            name_instant = base_instant if table_version < 8 else t
            key = (g, name_instant)
            version = log_versions.get(key, 0) + 1
            log_versions[key] = version
            lname = log_file_name(fids[g], name_instant, version)
            data = log_template.replace(_PLACEHOLDER.encode(), t.encode())
            with open(root / p / lname, "wb") as fh:
                fh.write(data)
            writes.append(_Write(p, fids[g], lname, len(data), latest_commit.get(g, "null"), base_file=base_name))
            if metadata_table:
                written.append((k, g, writes[-1]))
            latest_commit[g] = t
        report.base_files += base_counts[k]
        report.log_files += sum(1 for w in writes if w.base_file is not None)
        _write_active_instant(scratch, timeline_dir, table_version, action, t, completion_times[k], writes,
                              start_active + 60.0 * k + COMPLETION_AFTER_S)
    for p in parts:
        (root / p / ".template.parquet.src").unlink()
    report.active_instants = n_active
    lap("active")

    if metadata_table:
        report.mdt_drift = _write_metadata_table(
            scratch, name, table_version, written, latest_base, active_times, start_active, archived_times,
            mdt_drift, mdt_drift_seed, mdt_log_instants)
        lap("metadata_table")

    report.archive_files = _write_archive(scratch, table_version, layout, mor, archived_times, fids, parts,
                                          lsm_codec)
    report.archived_instants = len(archived_times)
    lap("archive")
    report.disk_bytes = _disk_usage(scratch.root)
    lap("measure")
    return report


# -- the metadata table -----------------------------------------------------------------------------------


def _pick_drift(written: Sequence[tuple[int, int, _Write]], latest_base: dict[int, tuple[str, str]], n: int,
                seed: int) -> tuple[set[int], set[int]]:
    """Indices into `written` of the files deleted from storage and of those left out of the metadata table:
    `n` each, drawn (seeded) half from latest file slices, half from older ones, as far as each pool goes."""
    if not n:
        return set(), set()
    latest = [i for i, (_, g, w) in enumerate(written) if (w.base_file or w.name) == latest_base[g][1]]
    in_latest = set(latest)
    older = [i for i in range(len(written)) if i not in in_latest]
    rng = random.Random(seed)
    from_latest = min(len(latest), max(n, 2 * n - len(older)))
    picks_latest = rng.sample(latest, from_latest)
    picks_older = rng.sample(older, 2 * n - from_latest)
    # Each kind of drift gets files of both pools (n each: ceil/floor halves of the two samples).
    gone = set(picks_latest[0::2]) | set(picks_older[1::2])
    unlisted = set(picks_latest[1::2]) | set(picks_older[0::2])
    return gone, unlisted


def _write_metadata_table(scratch: ScratchDir, name: str, table_version: int,
                          written: Sequence[tuple[int, int, _Write]], latest_base: dict[int, tuple[str, str]],
                          active_times: Sequence[str], start_active: float, archived_times: Sequence[str],
                          drift: int, seed: int, log_instants: int) -> dict[str, list[str]]:
    """Write the metadata table of the finished table (see the module doc); return the drift made."""
    from hudi_core.formats.mdt.records import FileEntry, FilesRecord, MetadataRecordType, partition_key
    from hudi_core.scenarios.mdt_writer import ALL_PARTITIONS_KEY, MetadataTableWriter, commit_records

    gone, unlisted = _pick_drift(written, latest_base, drift, seed)
    n_active = len(active_times)
    logs = min(log_instants, n_active)
    first_log = n_active - logs
    base: dict[str, dict[str, FileEntry]] = {}
    by_instant: dict[int, dict[str, dict[str, int]]] = {}
    for i, (k, _, w) in enumerate(written):
        if i in unlisted:
            continue
        if k < first_log:
            base.setdefault(w.partition, {})[w.name] = FileEntry(w.size)
        else:
            by_instant.setdefault(k, {}).setdefault(w.partition, {})[w.name] = w.size

    def at(seconds: float) -> str:
        return instant_time(seconds)

    mdt = MetadataTableWriter(scratch, name, table_version, compact_max_delta_commits=None, token=lambda: WRITE_TOKEN)
    mdt.initialize(completion=at(0.3) if archived_times else at(start_active - 1.0))
    for k in range(first_log, n_active):
        t = active_times[k]
        mdt.begin_deltacommit(t)
        mdt.write_files_log(t, commit_records(by_instant.get(k, {})))
        if k == first_log and first_log > 0:
            records = {ALL_PARTITIONS_KEY: FilesRecord(ALL_PARTITIONS_KEY, MetadataRecordType.ALL_PARTITIONS,
                                                       {partition_key(p): FileEntry(0) for p in base})}
            records.update({partition_key(p): FilesRecord(partition_key(p), MetadataRecordType.FILES, files)
                            for p, files in base.items()})
            mdt.compact(at(start_active + 60.0 * k + 0.5), at(start_active + 60.0 * k + 0.9), records)
        mdt.complete_deltacommit(t, at(start_active + 60.0 * k + 1.2))
    for i in gone:
        w = written[i][2]
        os.unlink(scratch.path(f"{w.partition}/{w.name}"))

    def paths(indices: set[int]) -> list[str]:
        return sorted(f"{written[i][2].partition}/{written[i][2].name}" for i in indices)

    return {"missing_on_storage": paths(gone), "missing_in_metadata": paths(unlisted)}


def _stat_dicts(writes: Sequence[_Write]) -> list[dict[str, Any]]:
    stats = []
    for w in writes:
        if w.base_file is None:
            stats.append(enc.write_stat(w.partition, w.fid, w.name, prev_commit=w.prev_commit, num_writes=1,
                                        num_inserts=1 if w.prev_commit == "null" else 0,
                                        num_updates=0 if w.prev_commit == "null" else 1, file_size=w.size))
        else:
            stats.append(enc.write_stat(w.partition, w.fid, w.name, prev_commit=w.prev_commit, num_writes=1,
                                        num_updates=1, file_size=w.size, base_file=w.base_file,
                                        log_files=[w.name], total_log_blocks=1))
    return stats


def _workload(writes: Sequence[_Write], operation: str) -> dict[str, Any]:
    """The inflight workload profile Hudi writes: per partition, one stat per file group touched."""
    stats = [{"fileId": w.fid, "path": None, "prevCommit": w.prev_commit, "partitionPath": w.partition,
              "numInserts": 1 if w.prev_commit == "null" else 0, "numUpdateWrites": 0 if w.prev_commit == "null"
              else 1} for w in writes]
    return enc.commit_metadata(stats, operation)


def _write_active_instant(scratch: ScratchDir, timeline_dir: str, table_version: int, action: str,
                          requested: str, completion: str, writes: Sequence[_Write], completion_seconds: float) -> None:
    layout = 2 if table_version >= 8 else 1
    operation = "UPSERT"
    record = enc.commit_metadata(_stat_dicts(writes), operation, extra_metadata={"schema": _TABLE_SCHEMA_JSON})
    for state, body_record in ((State.REQUESTED, None), (State.INFLIGHT, _workload(writes, operation)),
                               (State.COMPLETED, record)):
        fmt, record_type = enc.body_format_for(table_version, action, state)
        data = enc.encode_body(body_record, record_type, fmt, table_version, conform_first=False)
        fname = ia.instant_file_name(requested, action, state, layout, completion)
        # Each state file is last modified when the instant reached that state (the requested time, the
        # inflight transition, the completion): layout 1 reads its completion time from it, and inflight
        # times are read from it in both layouts.
        seconds = {State.REQUESTED: completion_seconds - COMPLETION_AFTER_S,
                   State.INFLIGHT: completion_seconds - COMPLETION_AFTER_S + INFLIGHT_AFTER_S}.get(
            state, completion_seconds)
        mtime = int((_EPOCH + dt.timedelta(seconds=seconds)).timestamp() * 1000)
        scratch.write_bytes(f"{timeline_dir}/{fname}", data, mtime_ms=mtime)


# -- archive --------------------------------------------------------------------------------------


_Spec = tuple[State, str, str | None, dict[str, Any] | None]  # state, file action, record type, record


def _archived_specs(i: int, t: str, mor: bool, fids: Sequence[str], parts: Sequence[str], prev: str) -> list[_Spec]:
    """The state files of archived instant number `i` as records: every 10th a clean, for MOR
    every 10th a compaction, otherwise a commit (COW) or deltacommit (MOR) with one write stat."""
    g = i % len(fids)
    p = parts[g % len(parts)]
    if i % 10 == 9:
        plan = enc.cleaner_plan({p: [f"{p}/{base_file_name(fids[g], prev)}"]},
                                earliest_instant_to_retain=(prev, ia.COMMIT, "COMPLETED"), last_completed_commit=prev)
        meta = enc.clean_metadata(t, {p: [base_file_name(fids[g], prev)]}, earliest_commit_to_retain=prev,
                                  last_completed_commit=prev)
        return [(State.REQUESTED, ia.CLEAN, "HoodieCleanerPlan", plan),
                (State.INFLIGHT, ia.CLEAN, "HoodieCleanerPlan", plan),
                (State.COMPLETED, ia.CLEAN, "HoodieCleanMetadata", meta)]
    if mor and i % 10 == 5:
        op = enc.compaction_operation(p, fids[g], prev, base_file_name(fids[g], prev), [log_file_name(fids[g], prev)])
        stat = enc.write_stat(p, fids[g], base_file_name(fids[g], t), prev_commit=prev, num_writes=1, num_updates=1,
                              file_size=1024)
        return [(State.REQUESTED, ia.COMPACTION, "HoodieCompactionPlan", enc.compaction_plan([op])),
                (State.INFLIGHT, ia.COMPACTION, None, None),
                (State.COMPLETED, ia.COMMIT, "HoodieCommitMetadata",
                 enc.commit_metadata([stat], "COMPACT", compacted=True))]
    action = ia.DELTA_COMMIT if mor else ia.COMMIT
    if mor:
        stat = enc.write_stat(p, fids[g], log_file_name(fids[g], t), prev_commit=prev, num_writes=1, num_updates=1,
                              file_size=700, base_file=base_file_name(fids[g], prev),
                              log_files=[log_file_name(fids[g], t)])
    else:
        stat = enc.write_stat(p, fids[g], base_file_name(fids[g], t), prev_commit=prev, num_writes=1, num_updates=1,
                              file_size=1024)
    return [(State.REQUESTED, action, None, None),
            (State.INFLIGHT, action, "HoodieCommitMetadata", enc.commit_metadata([], "UPSERT")),
            (State.COMPLETED, action, "HoodieCommitMetadata", enc.commit_metadata([stat], "UPSERT"))]


def _archived_instant(i: int, t: str, completion: str, mor: bool, fids: Sequence[str], parts: Sequence[str],
                      table_version: int, prev: str) -> ae.InstantBodies:
    """The state files of archived instant `i` encoded as the active timeline held them."""
    inst = ae.InstantBodies(t, completion)
    for state, action, record_type, record in _archived_specs(i, t, mor, fids, parts, prev):
        fmt, _ = enc.body_format_for(table_version, action, state)
        if record_type is None or fmt == "empty":
            inst.files[state] = (action, b"")
        else:
            inst.files[state] = (action, enc.encode_body(record, record_type, fmt, table_version, conform_first=False))
    return inst


_PAYLOAD = {
    ("HoodieCleanerPlan", False): "hoodieCleanerPlan", ("HoodieCleanMetadata", True): "hoodieCleanMetadata",
    ("HoodieCommitMetadata", False): "hoodieCommitMetadata", ("HoodieCommitMetadata", True): "hoodieCommitMetadata",
    ("HoodieCompactionPlan", False): "hoodieCompactionPlan",
}


def _fast_entries(specs: Sequence[_Spec], t: str, completion: str, inflight: str) -> list[dict[str, Any]]:
    """`archive_encode.archived_meta_entries` straight from the records (no encode/decode round):
    pending clean and compaction states carry the requested plan, as Hudi's archiver reads it; each
    record's stateTransitionTime is its state file's modification time (requested, `inflight`, completion)."""
    plan = specs[0][3] if specs[0][2] in ("HoodieCleanerPlan", "HoodieCompactionPlan") else None
    out = []
    times = {State.REQUESTED: t, State.INFLIGHT: inflight, State.COMPLETED: completion}
    for state, action, record_type, record in specs:
        done = state is State.COMPLETED
        entry: dict[str, Any] = {"commitTime": t, "actionType": action, "version": 1, "actionState": state.name,
                                 "stateTransitionTime": times[state]}
        if action in (ia.CLEAN, ia.COMPACTION) and not done:
            record_type, record = specs[0][2], plan
        if record is not None and record_type is not None:
            entry[_PAYLOAD[(record_type, done)]] = record
        out.append(entry)
    return out


def _write_archive(scratch: ScratchDir, table_version: int, layout: int, mor: bool, times: Sequence[str],
                   fids: Sequence[str], parts: Sequence[str], lsm_codec: str) -> list[str]:
    if not times:
        return []
    completions = [instant_time(60.0 * i + COMPLETION_AFTER_S) for i in range(len(times))]
    if layout == 2:
        return _write_lsm(scratch, table_version, mor, times, completions, fids, parts, lsm_codec)
    return _write_layout1(scratch, table_version, mor, times, completions, fids, parts)


def _write_layout1(scratch: ScratchDir, table_version: int, mor: bool, times: Sequence[str],
                   completions: Sequence[str], fids: Sequence[str], parts: Sequence[str]) -> list[str]:
    """Archive log files of `GENERATOR_ARCHIVAL_BATCH`-entry blocks, rolling over every
    `ARCHIVE_ENTRIES_PER_FILE` entries."""
    archive_dir = ".hoodie/archived"
    schema_json = enc.writer_schema_json("HoodieArchivedMetaEntry", table_version)
    written: list[str] = []
    blocks: list[bytes] = []
    batch: list[bytes] = []
    in_file = 0

    def flush_file() -> None:
        if batch:
            blocks.append(ae.archive_block_of_datums(batch, schema_json))
            batch.clear()
        if blocks:
            rel = f"{archive_dir}/{ae.archive_file_name(len(written) + 1)}"
            scratch.write_bytes(rel, b"".join(blocks))
            written.append(rel)
            blocks.clear()

    for i, t in enumerate(times):
        prev = times[i - 1] if i else "null"
        inflight = instant_time(60.0 * i + INFLIGHT_AFTER_S)
        for entry in _fast_entries(_archived_specs(i, t, mor, fids, parts, prev), t, completions[i], inflight):
            batch.append(enc.encode_datum(entry, "HoodieArchivedMetaEntry", table_version))
            in_file += 1
            if len(batch) >= GENERATOR_ARCHIVAL_BATCH:
                blocks.append(ae.archive_block_of_datums(batch, schema_json))
                batch.clear()
        if in_file >= ARCHIVE_ENTRIES_PER_FILE:
            flush_file()
            in_file = 0
    flush_file()
    return written


def _write_lsm(scratch: ScratchDir, table_version: int, mor: bool, times: Sequence[str], completions: Sequence[str],
               fids: Sequence[str], parts: Sequence[str], codec: str) -> list[str]:
    """Lay out the history as an LSM state of several levels: newest rows in L0 files of
    `LSM_ROWS_PER_L0`, older ones merged 10-to-1 into L1, L2, L3 (each level < 10 files)."""
    n = len(times)
    runs = (n + LSM_ROWS_PER_L0 - 1) // LSM_ROWS_PER_L0
    # Decompose the number of archiver runs in base 10 (one digit per level, oldest = highest).
    plan: list[tuple[int, int]] = []  # (level, runs covered)
    remaining = runs
    level = 0
    digits = []
    while remaining:
        digits.append(remaining % 10)
        remaining //= 10
        level += 1
    for lvl in range(len(digits) - 1, -1, -1):
        plan.extend([(lvl, 10 ** lvl)] * digits[lvl])
    writer = aw.LSMTimelineWriter(scratch, ".hoodie/timeline/history", codec=codec)
    entries: list[ae.LsmFile] = []
    written: list[str] = []
    start = 0
    def batches(lo: int, hi: int) -> Iterator[list[dict[str, Any]]]:
        for b in range(lo, hi, LSM_ROWS_PER_GROUP):
            yield [ae.lsm_instant_row(_archived_instant(i, times[i], completions[i], mor, fids, parts, table_version,
                                                        times[i - 1] if i else "null"))
                   for i in range(b, min(hi, b + LSM_ROWS_PER_GROUP))]

    for lvl, covered in plan:
        end = min(n, start + covered * LSM_ROWS_PER_L0)
        name = lsm_rules.data_file_name(times[start], times[end - 1], lvl)
        entries.append(writer.write_batches(name, batches(start, end)))
        written.append(f"{writer.history_dir}/{name}")
        start = end
        if start >= n:
            break
    # Snapshot number as if every run and compaction had been its own snapshot.
    version = runs + sum(runs // 10 ** lvl for lvl in range(1, len(digits)))
    scratch.write_text(f"{writer.history_dir}/manifest_{version}", ae.manifest_json(entries))
    scratch.write_text(f"{writer.history_dir}/{ae.VERSION_FILE}", str(version))
    written += [f"{writer.history_dir}/manifest_{version}", f"{writer.history_dir}/{ae.VERSION_FILE}"]
    return written


def _disk_usage(root: Path) -> int:
    """Bytes on disk under `root`, each hard-linked inode counted once."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            st = os.lstat(os.path.join(dirpath, n))
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue
            seen.add(key)
            total += st.st_blocks * 512
    return total


# -- CLI ------------------------------------------------------------------------------------------


def cmd_generate(args: Any) -> int:
    """`hudi-inspect generate OUT_DIR --size S --layout 2 --table-type MERGE_ON_READ --table-version 9`."""
    import json
    import sys

    overrides = {k: getattr(args, k) for k in ("partitions", "file_groups", "active_instants", "archived_instants",
                                               "log_files", "files") if getattr(args, k) is not None}

    def progress(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr)

    metadata = False if getattr(args, "no_metadata_table", False) else None
    report = generate_table(args.out_dir, args.size, layout=args.layout, table_type=args.table_type,
                            table_version=args.table_version, lsm_codec=args.lsm_codec, progress=progress,
                            metadata_table=metadata, mdt_drift=getattr(args, "mdt_drift", 0) or 0,
                            mdt_drift_seed=getattr(args, "mdt_drift_seed", 0) or 0, **overrides)
    summary = report.to_dict()
    summary["archive_files"] = len(report.archive_files)
    if args.format == "json":
        print(json.dumps(summary, indent=2))
    else:
        for key in ("out_dir", "table_type", "table_version", "layout", "base_files", "log_files",
                    "active_instants", "archived_instants", "archive_files", "disk_bytes", "metadata_table"):
            print(f"{key:18} {summary[key]}")
        drift = summary.get("mdt_drift") or {}
        for key in ("missing_on_storage", "missing_in_metadata"):
            for path in drift.get(key, []):
                print(f"{key:18} {path}")
        print(f"{'seconds':18} {json.dumps(summary['seconds'])}")
    return 0
