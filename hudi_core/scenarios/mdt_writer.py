"""Writing a data table's metadata table (`files` partition), as Hudi 1.1 lays it out: `MetadataTableWriter`.

Beside the engine (like the scenario builder and the scale generator): it writes through a
:class:`~hudi_core.scenarios.scratch.ScratchDir` only, and no format or table module imports it. What it
writes under ``.hoodie/metadata`` of a table version 8 or 9 data table, each detail taken from Hudi 1.1's
writer (`HoodieBackedTableMetadataWriter`, `HoodieTableMetadataUtil`, `HoodieMetadataPayload`) and checked
against the metadata tables of the fixture tables (``v9_txns_simple_meta`` and ``v9_nonpartitioned_rollback``,
written by Hudi 1.1.1; ``v8_trips_8i3u1d``, written by Hudi 1.0.x):

* ``.hoodie/hoodie.properties``: the keys, values and order of the fixtures' (``<table>_metadata``,
  ``MERGE_ON_READ``, base format ``HFILE``, record key ``key``, key generator ``HOODIE_TABLE_METADATA``,
  payload ``HoodieMetadataPayload``, merge mode ``CUSTOM``, no meta fields, timeline layout 2, table version
  and initial version = the data table's); the checksum is `HoodieTableConfig.generateChecksum` of
  ``"." + name`` (no database name);
* ``files/.hoodie_partition_metadata`` (``commitTime=00000000000000000``, ``partitionDepth=1``) and one file
  group, ``files-0000-0``;
* the **initialisation** delta commit ``00000000000000000`` (requested and inflight empty, completed
  ``BULK_INSERT_PREPPED`` naming the base file): a base HFile ``files-0000-0_<token>_00000000000000000.hfile``
  with the initial listing and the init log ``.files-0000-0_00000000000000000.log.1_0-0-0`` holding one empty
  DELETE block (header INSTANT_TIME only; 80 bytes, byte for byte the fixtures');
* one **delta commit per data-table instant** at the same requested time (inflight: an empty
  ``UPSERT_PREPPED`` commit metadata; completed: the log file it wrote with its size, `extraMetadata.schema`
  the record schema, `version` null, as the fixtures), writing one new log file
  ``.files-0000-0_<t>.log.1_<token>`` with one HFILE_DATA_BLOCK (headers SCHEMA then INSTANT_TIME; the inline
  HFile's file info carries ``schema``): a commit adds ``__all_partitions__`` (the partitions it wrote, size 0)
  and one record per partition mapping each written file to its size (`convertMetadataToFilesPartitionRecords`);
  nothing a commit replaces is deleted;
* a **clean** writes tombstones (size 0, ``isDeleted``) for the files it deleted, no partition list unless it
  deleted partitions, which get a partition-list tombstone and (1.1, HUDI-8449) a whole-record delete of their
  files record in a DELETE block after the data block;
* a data-table **rollback** of an instant the metadata table has a delta commit for (in any state) becomes a
  metadata-table ``rollback`` at the same time that deletes that delta commit's log file(s) and its timeline
  files (plan and metadata with absolute paths, file id and base instant empty, as ``v9_nonpartitioned_rollback``);
  a rollback of an instant the metadata table never saw leaves it untouched (no delta commit at the rollback's
  time, as that fixture). Rolling back a delta commit a compaction already folded in is refused, as Hudi's
  `validateRollback` refuses it;
* a data-table **restore** (`update(HoodieRestoreMetadata)`): a metadata-table ``restore`` at a new time rolling
  back every metadata-table instant after the savepoint, then a delta commit at another new time that brings the
  listing in line with storage (files added, files and partitions deleted; empty when nothing differs);
* **compaction** (`compactIfNecessary`, default after 10 delta commits since the last base file, run inside the
  delta commit that reaches it, as in both fixtures): at a new time, or one millisecond before the earliest
  data-table instant that is pending but completed on the metadata table; the plan (`HoodieCompactionPlan`
  version 2, one operation for ``files-0000-0`` with the fixtures' metrics) takes the latest base file and
  the log files of delta commits completed before it, the new base HFile holds their records merged by
  :func:`hudi_core.formats.mdt.payload.combine` (logs among themselves oldest first, then onto the base records, as
  the reader :mod:`hudi_core.table.listing.metadata` merges), and the ``commit`` names it with the fixture's stats.

Base HFiles are written by :func:`hudi_core.formats.hfile.write_hfile` with Hudi's file info (``schema``,
``bloomFilterTypeCode``, ``minRecordKey``, ``maxRecordKey``) and the ``bloomFilter`` meta block: Hudi's
`HoodieDynamicBoundedBloomFilter` (10,000 entries at 1e-9 as Hudi 1.1.1 writes it; the 1.0.x v8 fixture used
60,000) over its `MurmurHash`, whose tail bytes are taken from the end of the key (not Hadoop's newer order):
with the same records and creation time the fixtures' HFiles and log files are reproduced byte for byte. The
order of a record's file map is a `java.util.HashMap`'s (:func:`hudi_core.io.java.string_hashmap_order`); Hudi's
own order after a compaction also depends on how its maps were copied, which is not modelled.

Low-level steps build the incident states precisely: :meth:`MetadataTableWriter.begin_deltacommit`,
:meth:`~MetadataTableWriter.write_files_log` (any records, any INSTANT_TIME header),
:meth:`~MetadataTableWriter.write_rollback_log` (a v6-style rollback command block),
:meth:`~MetadataTableWriter.complete_deltacommit` (``data_pending=True``: the data-table instant stays
inflight after the metadata table committed) and :meth:`~MetadataTableWriter.schedule_compaction` (a
pending compaction).
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import io
import json
import math
import struct
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import fastavro

from hudi_core.formats.hfile import write_hfile
from hudi_core.formats.logfile.content import DeleteRecord, encode_delete_content
from hudi_core.formats.logfile.format import BlockType, CommandType, HeaderKey
from hudi_core.formats.logfile.writer import encode_block
from hudi_core.formats.mdt.payload import combine
from hudi_core.formats.mdt.records import (
    ALL_PARTITIONS_KEY,
    FILES_PARTITION,
    FileEntry,
    FilesRecord,
    MetadataRecordType,
    bundled_schema,
    partition_key,
)
from hudi_core.formats.timeline import encode
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import State
from hudi_core.io.java import string_hashmap_order
from hudi_core.scenarios.model import ScenarioError, epoch_ms_to_time, time_to_epoch_ms
from hudi_core.scenarios.scratch import ScratchDir

#: Where the metadata table lives under the data table.
METADATA_DIR = ".hoodie/metadata"
#: The `files` partition's one file group (`HoodieTableMetadataUtil.getFileIDForFileGroup(FILES, 0)`).
FILES_FILE_ID = "files-0000-0"
#: The initialisation instant of the `files` partition on table versions 8+ (`SOLO_COMMIT_TIMESTAMP` + 0 ms).
INIT_INSTANT = "00000000000000000"
#: The write token of the init log file (`HoodieBackedTableMetadataWriter.initializeFileGroups`).
INIT_LOG_TOKEN = "0-0-0"
#: `hoodie.metadata.compact.max.delta.commits` (HoodieMetadataConfig), Hudi's default.
COMPACT_MAX_DELTA_COMMITS = 10
#: Bloom filter of base HFiles: entries and false positive rate as the 1.1.1 fixtures' (DYNAMIC_V0).
BLOOM_ENTRIES = 10_000
BLOOM_FPP = 1e-9
#: Hudi's `Hash.MURMUR_HASH` type code, written in the bloom filter's header.
_MURMUR_HASH = 1

#: The data table's `hoodie.properties` keys once the `files` partition is built (`HoodieTableConfig`).
DATA_TABLE_PROPERTIES = {"hoodie.table.metadata.partitions": "files",
                         "hoodie.table.metadata.partitions.inflight": ""}

#: Operation types of metadata-table delta commits (`WriteOperationType`).
UPSERT_PREPPED = "UPSERT_PREPPED"
BULK_INSERT_PREPPED = "BULK_INSERT_PREPPED"


class MetadataTableError(ScenarioError):
    """A metadata-table step Hudi would refuse, or one that does not fit the table written so far."""


# -- records and their bytes ---------------------------------------------------------------------------


@functools.cache
def _parsed_record_schema() -> Any:
    return fastavro.parse_schema(json.loads(bundled_schema()))


@functools.cache
def record_schema_without_meta_fields() -> str:
    """`HoodieMetadataRecord`'s schema without the five meta fields, compact: what a metadata-table commit
    records as `extraMetadata.schema` (the 1.1.1 fixtures' value, character for character)."""
    schema = json.loads(bundled_schema())
    schema["fields"] = [f for f in schema["fields"] if not f["name"].startswith("_hoodie_")]
    return json.dumps(schema, separators=(",", ":"))


def encode_record(record: FilesRecord, file_name: str | None = None, map_order: str = "java") -> bytes:
    """The HFile cell value of a `files` record as Hudi writes it: the 1.1 writer schema, ``key`` empty, meta
    fields null except `_hoodie_file_name` in a compacted base file (the fixtures' base HFiles carry their own
    name there); the file map in `java.util.HashMap` order (``map_order="java"``) or as given."""
    names = list(record.entries)
    if map_order == "java":
        names = string_hashmap_order(names)
    datum = {
        "_hoodie_file_name": file_name, "key": "", "type": record.record_type,
        "filesystemMetadata": {n: {"size": record.entries[n].size, "isDeleted": record.entries[n].is_deleted}
                               for n in names},
    }
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _parsed_record_schema(), datum)
    return buf.getvalue()


def commit_records(files_by_partition: Mapping[str, Mapping[str, int]]) -> list[FilesRecord]:
    """The records a commit writes (`convertMetadataToFilesPartitionRecords(HoodieCommitMetadata)`): the
    partition list naming every partition the commit wrote, and each partition's files with their sizes
    (Hudi asserts a size above 0)."""
    listing = FilesRecord(ALL_PARTITIONS_KEY, MetadataRecordType.ALL_PARTITIONS,
                          {partition_key(p): FileEntry(0) for p in files_by_partition})
    records = [listing]
    for partition, files in files_by_partition.items():
        for name, size in files.items():
            if size <= 0:
                raise MetadataTableError(f"file {partition}/{name} has size {size}: Hudi records added files with "
                                         "a size above 0 (createPartitionFilesRecord)")
        records.append(FilesRecord(partition_key(partition), MetadataRecordType.FILES,
                                   {n: FileEntry(int(s)) for n, s in files.items()}))
    return records


def clean_records(deleted_by_partition: Mapping[str, Iterable[str]],
                  deleted_partitions: Iterable[str] = ()) -> list[FilesRecord]:
    """The records a clean writes (`convertMetadataToFilesPartitionRecords(HoodieCleanMetadata)`, Hudi 1.1):
    a tombstone per deleted file; a deleted partition instead gets a whole-record delete (HUDI-8449), and the
    deleted partitions a partition-list tombstone."""
    gone = {partition_key(p) for p in deleted_partitions}
    records: list[FilesRecord] = []
    for partition, names in deleted_by_partition.items():
        key = partition_key(partition)
        if key in gone:
            records.append(FilesRecord.delete(key))
        else:
            records.append(FilesRecord(key, MetadataRecordType.FILES, {n: FileEntry(0, True) for n in names}))
    for key in sorted(gone - {partition_key(p) for p in deleted_by_partition}):
        records.append(FilesRecord.delete(key))
    if gone:
        records.append(FilesRecord(ALL_PARTITIONS_KEY, MetadataRecordType.ALL_PARTITIONS,
                                   {k: FileEntry(0, True) for k in sorted(gone)}))
    return records


def base_hfile(records: Mapping[str, FilesRecord], file_name: str | None, create_time_ms: int,
               map_order: str = "java", bloom_entries: int = BLOOM_ENTRIES) -> bytes:
    """A base HFile of the `files` partition (`HoodieAvroHFileWriter` over Hudi 1.1's native HFile writer):
    the records sorted by key (whole-record deletes left out), each stamped with `file_name` (``None`` for the
    initialisation's file, as the fixtures), file info ``schema``, ``bloomFilterTypeCode``, ``minRecordKey``,
    ``maxRecordKey`` and the ``bloomFilter`` meta block of the keys."""
    keys = sorted((k for k, r in records.items() if not r.deleted), key=lambda k: k.encode("utf-8"))
    entries = [(k, encode_record(records[k], file_name, map_order)) for k in keys]
    info = {"schema": bundled_schema().encode(), "bloomFilterTypeCode": b"DYNAMIC_V0"}
    if keys:
        info["minRecordKey"] = keys[0].encode()
        info["maxRecordKey"] = keys[-1].encode()
    return write_hfile(entries, file_info=info, meta_blocks={"bloomFilter": bloom_filter(keys, bloom_entries)},
                       create_time_ms=create_time_ms)


def log_block(block: MdtBlock, create_time_ms: int, map_order: str = "java") -> bytes:
    """One block of a `files` log file: an HFILE_DATA_BLOCK (headers SCHEMA then INSTANT_TIME, as the header
    map of `HoodieAppendHandle` comes out in the fixtures; the inline HFile's file info holds ``schema``), a
    DELETE_BLOCK with the same headers, or a ROLLBACK command block."""
    if block.kind == "rollback":
        header = [(HeaderKey.INSTANT_TIME, block.instant),
                  (HeaderKey.COMMAND_BLOCK_TYPE, str(int(CommandType.ROLLBACK_BLOCK))),
                  (HeaderKey.TARGET_INSTANT_TIME, block.target or "")]
        return encode_block(BlockType.COMMAND_BLOCK, header, b"")
    header = [(HeaderKey.SCHEMA, bundled_schema()), (HeaderKey.INSTANT_TIME, block.instant)]
    if block.kind == "delete":
        deletes = [DeleteRecord(r.key, FILES_PARTITION) for r in block.records]
        return encode_block(BlockType.DELETE_BLOCK, header, encode_delete_content(deletes))
    keys = sorted((r.key for r in block.records), key=lambda k: k.encode("utf-8"))
    by_key = {r.key: r for r in block.records}
    entries = [(k, encode_record(by_key[k], None, map_order)) for k in keys]
    inner = write_hfile(entries, file_info={"schema": bundled_schema().encode()}, create_time_ms=create_time_ms)
    return encode_block(BlockType.HFILE_DATA_BLOCK, header, inner)


def init_log_file(at: str = INIT_INSTANT) -> bytes:
    """The init log file: one DELETE_BLOCK, header INSTANT_TIME only, no records (80 bytes)."""
    return encode_block(BlockType.DELETE_BLOCK, [(HeaderKey.INSTANT_TIME, at)], encode_delete_content([]))


# -- Hudi's bloom filter ----------------------------------------------------------------------------------


def hudi_murmur_hash(data: bytes, seed: int) -> int:
    """`org.apache.hudi.common.util.hash.MurmurHash.hash(data, seed)` as a signed 32-bit int: MurmurHash2 with
    the last 1-3 bytes folded in from the end of the key (``data[length - 3] << 16`` ...), the order Hudi's copy
    keeps (Hadoop's later one indexes them from the last whole word; keys of 2 or 3 tail bytes then differ)."""
    m = 0x5BD1E995
    length = len(data)
    h = (seed ^ length) & 0xFFFFFFFF
    whole = length >> 2
    for (k,) in struct.iter_unpack("<I", data[: whole * 4]):
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    left = length - whole * 4
    if left:
        tail = struct.unpack(f"{left}b", data[length - left:])  # Java bytes are signed
        if left >= 3:
            h ^= (tail[-3] << 16) & 0xFFFFFFFF
        if left >= 2:
            h ^= (tail[-2] << 8) & 0xFFFFFFFF
        h ^= tail[-1] & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def bloom_filter(keys: Sequence[str], num_entries: int = BLOOM_ENTRIES, fpp: float = BLOOM_FPP) -> bytes:
    """The ``bloomFilter`` meta block of a base HFile: `HoodieDynamicBoundedBloomFilter.serializeToString()`
    (Base64 of `InternalDynamicBloomFilter.write`: the filter header, rows of `num_entries` keys, then each
    row as a Hadoop `BloomFilter` whose bits are packed low bit first), for `keys` added in this order."""
    bits = math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2))))
    hashes = math.ceil(math.log(2) * bits / num_entries)
    rows: list[bytearray] = [bytearray((bits + 7) // 8)]
    in_row = 0
    for key in keys:
        if in_row >= num_entries:
            rows.append(bytearray((bits + 7) // 8))
            in_row = 0
        vector = rows[-1]
        data = key.encode("utf-8")
        value = 0
        for _ in range(hashes):
            value = hudi_murmur_hash(data, value)
            bit = abs(int(math.fmod(value, bits)))  # Java: Math.abs(initval % maxValue)
            vector[bit >> 3] |= 1 << (bit & 7)
        in_row += 1
    header = struct.pack(">iiBi", -1, hashes, _MURMUR_HASH, bits)
    out = [header, struct.pack(">iii", num_entries, in_row, len(rows))]
    for vector in rows:
        out += [header, bytes(vector)]
    return base64.b64encode(b"".join(out))


# -- the writer's model ------------------------------------------------------------------------------------


@dataclass
class MdtBlock:
    """One block of a metadata-table log file: ``data`` (HFILE_DATA_BLOCK), ``delete`` or ``rollback``."""

    kind: str
    instant: str
    records: list[FilesRecord] = field(default_factory=list)
    target: str | None = None


@dataclass
class MdtLogFile:
    """A log file of `files-0000-0`: name, the delta commit in its name, its blocks and size."""

    name: str
    deltacommit: str
    version: int
    blocks: list[MdtBlock]
    size: int
    compacted_by: str | None = None


@dataclass
class MdtBaseFile:
    """A base HFile of `files-0000-0` and the records it holds."""

    instant: str
    name: str
    records: dict[str, FilesRecord]
    size: int


@dataclass
class MdtInstant:
    """An instant of the metadata table's timeline and what it wrote."""

    time: str
    action: str
    state: State
    completion: str | None = None
    timeline_files: list[str] = field(default_factory=list)
    log_files: list[str] = field(default_factory=list)
    base_file: str | None = None
    operation: str = UPSERT_PREPPED
    #: A delta commit completed on the metadata table while its data-table instant is still pending.
    data_pending: bool = False
    plan: dict[str, Any] | None = None


class _Clock:
    """The default clock: epoch ms from 2024-01-01, strictly increasing, never before a given instant."""

    def __init__(self) -> None:
        self.ms = 1_704_067_200_000

    def __call__(self, not_before: str | None = None) -> int:
        floor = time_to_epoch_ms(not_before) + 1 if not_before and not not_before.startswith("00000") else 0
        self.ms = max(self.ms + 1, floor)
        return self.ms


class _Tokens:
    """Write tokens ``<task>-<stage>-<attempt>``, deterministic."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"{self.n % 16}-{self.n * 7}-{self.n * 19}"


# -- the writer ------------------------------------------------------------------------------------------


class MetadataTableWriter:
    """Keeps the metadata table (`files` partition) of a table version 8 or 9 data table in `scratch`.

    `table_name` is the data table's (the metadata table is ``<name>_metadata``). `clock(not_before)` gives the
    epoch milliseconds of the next write, never before the instant `not_before` (the scenario builder passes
    its own clock, so metadata-table instants interleave with the data table's); `token()` gives write tokens.
    `compact_max_delta_commits` (``None``: never by itself) compacts inside the delta commit that reaches that
    many delta commits since the last base file. `map_order`: see :func:`encode_record`.
    """

    def __init__(self, scratch: ScratchDir, table_name: str, data_table_version: int, *,
                 clock: Callable[[str | None], int] | None = None, token: Callable[[], str] | None = None,
                 compact_max_delta_commits: int | None = COMPACT_MAX_DELTA_COMMITS, map_order: str = "java",
                 bloom_entries: int = BLOOM_ENTRIES) -> None:
        if data_table_version not in (8, 9):
            raise MetadataTableError(f"the metadata-table writer writes table versions 8 and 9, not "
                                     f"{data_table_version} (a version-6 metadata table is laid out otherwise)")
        self.scratch = scratch
        self.table_name = table_name
        self.version = data_table_version
        self.clock: Callable[[str | None], int] = clock or _Clock()
        self.token: Callable[[], str] = token or _Tokens()
        self.compact_max_delta_commits = compact_max_delta_commits
        self.map_order = map_order
        self.bloom_entries = bloom_entries
        self.instants: dict[tuple[str, str], MdtInstant] = {}
        self.logs: list[MdtLogFile] = []
        self.bases: list[MdtBaseFile] = []
        self.initialized = False

    # -- paths ---------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The metadata table's `hoodie.table.name`."""
        return f"{self.table_name}_metadata"

    @property
    def timeline_dir(self) -> str:
        """Root-relative folder of the metadata table's timeline."""
        return f"{METADATA_DIR}/.hoodie/timeline"

    def files_path(self, name: str) -> str:
        """Root-relative path of a file of the `files` partition."""
        return f"{METADATA_DIR}/{FILES_PARTITION}/{name}"

    def absolute(self, name: str) -> str:
        """A `files` partition file as Hudi's rollback plans name it (the absolute path without scheme)."""
        return f"{self.scratch.uri}/{self.files_path(name)}"

    def data_table_properties(self) -> dict[str, str]:
        """The keys the data table's `hoodie.properties` gets once the `files` partition is built."""
        return dict(DATA_TABLE_PROPERTIES)

    def _now(self, not_before: str | None = None) -> tuple[int, str]:
        ms = self.clock(not_before)
        return ms, epoch_ms_to_time(ms)

    # -- timeline files --------------------------------------------------------------------------------

    def _instant(self, time: str, action: str) -> MdtInstant | None:
        return self.instants.get((time, action))

    def _write_state(self, inst: MdtInstant, state: State, record: Mapping[str, Any] | None,
                     raw: bytes | None = None, completion: str | None = None) -> str:
        action = inst.action
        if state is State.COMPLETED:
            action = ia.COMMIT if inst.action == ia.COMPACTION else inst.action
            inst.completion = completion or self._now(inst.time if not inst.time.startswith("0000") else None)[1]
        if raw is None:
            fmt, record_type = encode.body_format_for(self.version, action, state)
            raw = encode.encode_body(record, record_type, fmt, self.version) if record is not None else b""
        name = ia.instant_file_name(inst.time, action, state, 2, inst.completion)
        self.scratch.write_bytes(f"{self.timeline_dir}/{name}", raw)
        inst.timeline_files.append(name)
        inst.state = state
        return name

    def _remove_instant(self, inst: MdtInstant) -> None:
        for name in inst.timeline_files:
            self.scratch.delete(f"{self.timeline_dir}/{name}")
        inst.timeline_files = []
        self.instants.pop((inst.time, inst.action), None)

    # -- table creation and initialisation --------------------------------------------------------------

    def _properties_text(self, ms: int) -> str:
        # Key order of the fixtures' file (a java.util.Properties written from its Hashtable).
        props = [
            ("hoodie.compaction.payload.class", "org.apache.hudi.metadata.HoodieMetadataPayload"),
            ("hoodie.table.initial.version", str(self.version)),
            ("hoodie.table.keygenerator.type", "HOODIE_TABLE_METADATA"),
            ("hoodie.table.type", "MERGE_ON_READ"),
            ("hoodie.archivelog.folder", "history"),
            ("hoodie.timeline.layout.version", "2"),
            ("hoodie.timeline.history.path", "history"),
            ("hoodie.table.checksum", str(zlib.crc32(f".{self.name}".encode()))),  # generateChecksum, no database
            ("hoodie.datasource.write.drop.partition.columns", "false"),
            ("hoodie.record.merge.strategy.id", "00000000-0000-0000-0000-000000000000"),
            ("hoodie.table.recordkey.fields", "key"),
            ("hoodie.table.name", self.name),
            ("hoodie.timeline.path", "timeline"),
            ("hoodie.populate.meta.fields", "false"),
            ("hoodie.table.base.file.format", "HFILE"),
            ("hoodie.record.merge.mode", "CUSTOM"),
            ("hoodie.table.version", str(self.version)),
        ]
        moment = dt.datetime.fromtimestamp(ms / 1000.0, tz=dt.UTC)
        lines = [f"#Properties saved on {moment.strftime('%Y-%m-%dT%H:%M:%S.%f')}Z",
                 f"#{moment.strftime('%a %b %d %H:%M:%S UTC %Y')}"]
        lines += [f"{k}={v.replace(':', chr(92) + ':').replace('=', chr(92) + '=')}" for k, v in props]
        return "\n".join(lines) + "\n"

    def initialize(self, listing: Mapping[str, Mapping[str, int]] | None = None, at: str = INIT_INSTANT,
                   completion: str | None = None) -> MdtInstant:
        """Create the metadata table and its `files` partition (`initializeFromFilesystem`): properties,
        folders, the init delta commit `at` with a base HFile holding `listing` (partition -> file -> size)
        and the init log with its empty DELETE block."""
        if self.initialized:
            raise MetadataTableError("the metadata table is initialised already")
        ms, _ = self._now()
        self.scratch.write_text(f"{METADATA_DIR}/.hoodie/hoodie.properties", self._properties_text(ms))
        for folder in ("timeline/history", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids", ".schema",
                       ".temp", ".heartbeat"):
            self.scratch.mkdirs(f"{METADATA_DIR}/.hoodie/{folder}")
        moment = dt.datetime.fromtimestamp(ms / 1000.0, tz=dt.UTC)
        self.scratch.write_text(self.files_path(".hoodie_partition_metadata"),
                                f"#partition metadata\n#{moment.strftime('%a %b %d %H:%M:%S UTC %Y')}\n"
                                f"commitTime={INIT_INSTANT}\npartitionDepth=1\n")
        inst = MdtInstant(at, ia.DELTA_COMMIT, State.REQUESTED, operation=BULK_INSERT_PREPPED)
        self.instants[(at, ia.DELTA_COMMIT)] = inst
        self._write_state(inst, State.REQUESTED, None, raw=b"")
        self._write_state(inst, State.INFLIGHT, None, raw=b"")  # a bulk insert writes no workload profile
        records = commit_records(listing or {}) if listing else [
            FilesRecord(ALL_PARTITIONS_KEY, MetadataRecordType.ALL_PARTITIONS, {})]
        base = self._write_base(at, {r.key: r for r in records}, stamp_name=False)
        init_log = f".{FILES_FILE_ID}_{at}.log.1_{INIT_LOG_TOKEN}"
        data = init_log_file(at)
        self.scratch.write_bytes(self.files_path(init_log), data)
        self.logs.append(MdtLogFile(init_log, at, 1, [MdtBlock("delete", at)], len(data)))
        inst.base_file = base.name
        stat = encode.write_stat(FILES_PARTITION, FILES_FILE_ID, base.name, prev_commit="null",
                                 num_writes=len(base.records), num_inserts=len(base.records), file_size=base.size)
        stat.update(self._stat_extras())
        self._write_state(inst, State.COMPLETED, self._commit_metadata([stat], BULK_INSERT_PREPPED),
                          completion=completion)
        self.initialized = True
        return inst

    # -- HFiles and log files ----------------------------------------------------------------------------

    def _write_base(self, instant: str, records: Mapping[str, FilesRecord], stamp_name: bool = True,
                    create_time_ms: int | None = None) -> MdtBaseFile:
        name = f"{FILES_FILE_ID}_{self.token()}_{instant}.hfile"
        created = create_time_ms if create_time_ms is not None else self.clock(None)
        data = base_hfile(records, name if stamp_name else None, created, self.map_order, self.bloom_entries)
        self.scratch.write_bytes(self.files_path(name), data)
        base = MdtBaseFile(instant, name, {k: r for k, r in records.items() if not r.deleted}, len(data))
        self.bases.append(base)
        return base

    def _log_name(self, deltacommit: str) -> tuple[str, int]:
        prefix = f".{FILES_FILE_ID}_{deltacommit}.log."
        version = max((lf.version for lf in self.logs if lf.name.startswith(prefix)), default=0) + 1
        return f"{prefix}{version}_{self.token()}", version

    def _write_log(self, deltacommit: str, blocks: list[MdtBlock]) -> MdtLogFile:
        inst = self._instant(deltacommit, ia.DELTA_COMMIT)
        if inst is None or inst.state is State.COMPLETED:
            raise MetadataTableError(f"no inflight metadata-table delta commit {deltacommit} to write a log file for")
        name, version = self._log_name(deltacommit)
        data = b"".join(log_block(b, self.clock(None), self.map_order) for b in blocks)
        self.scratch.write_bytes(self.files_path(name), data)
        log = MdtLogFile(name, deltacommit, version, blocks, len(data))
        self.logs.append(log)
        inst.log_files.append(name)
        return log

    # -- low-level delta commit steps ------------------------------------------------------------------

    def begin_deltacommit(self, t: str, operation: str = UPSERT_PREPPED) -> MdtInstant:
        """Write the requested (empty) and inflight (an empty commit metadata of `operation`) files of the
        metadata-table delta commit `t`."""
        self._require_initialized()
        if self._instant(t, ia.DELTA_COMMIT) is not None:
            raise MetadataTableError(f"the metadata table has a delta commit {t} already")
        inst = MdtInstant(t, ia.DELTA_COMMIT, State.REQUESTED, operation=operation)
        self.instants[(t, ia.DELTA_COMMIT)] = inst
        self._now(t)
        self._write_state(inst, State.REQUESTED, None, raw=b"")
        workload = self._commit_metadata([], operation, schema=False)
        self._write_state(inst, State.INFLIGHT, workload)
        return inst

    def write_files_log(self, t: str, records: Sequence[FilesRecord], *, instant_time: str | None = None) -> MdtLogFile:
        """Write the log file of delta commit `t`: one HFILE_DATA_BLOCK with `records` (whole-record deletes go
        to a DELETE block after it), its INSTANT_TIME header `instant_time` (default `t`; another value builds
        a block of an instant that is not valid)."""
        header_time = instant_time or t
        live = [r for r in records if not r.deleted]
        deletes = [r for r in records if r.deleted]
        blocks = []
        if live or not deletes:
            blocks.append(MdtBlock("data", header_time, live))
        if deletes:
            blocks.append(MdtBlock("delete", header_time, deletes))
        return self._write_log(t, blocks)

    def write_rollback_log(self, t: str, target: str, *, instant_time: str | None = None) -> MdtLogFile:
        """Write a log file of delta commit `t` holding one ROLLBACK command block whose target is `target`
        (how table version 6 rolled back a metadata-table delta commit; 1.x deletes log files instead)."""
        return self._write_log(t, [MdtBlock("rollback", instant_time or t, target=target)])

    def complete_deltacommit(self, t: str, completion: str | None = None, data_pending: bool = False) -> MdtInstant:
        """Write the completed file of delta commit `t`, naming the log files it wrote. `data_pending`: the data
        table's instant `t` stays pending (the data write failed after the metadata table committed)."""
        inst = self._instant(t, ia.DELTA_COMMIT)
        if inst is None or inst.state is not State.INFLIGHT:
            raise MetadataTableError(f"no inflight metadata-table delta commit {t}")
        stats = []
        for name in inst.log_files:
            log = next(lf for lf in self.logs if lf.name == name)
            count = sum(len(b.records) for b in log.blocks if b.kind == "data")
            deletes = sum(len(b.records) for b in log.blocks if b.kind == "delete")
            stat = encode.write_stat(FILES_PARTITION, FILES_FILE_ID, name, prev_commit=t, num_writes=count,
                                     num_updates=count, num_deletes=deletes, file_size=log.size, base_file="",
                                     log_files=[name], log_version=log.version)
            stat.update(self._stat_extras())
            stats.append(stat)
        inst.data_pending = data_pending
        self._write_state(inst, State.COMPLETED, self._commit_metadata(stats, inst.operation), completion=completion)
        return inst

    @staticmethod
    def _stat_extras() -> dict[str, Any]:
        return {"totalLogFiles": None, "cdcStats": None, "prevBaseFile": None, "minEventTime": None,
                "maxEventTime": None, "totalLogReadTimeMs": 0, "tempPath": None, "numUpdates": 0}

    @staticmethod
    def _commit_metadata(stats: Sequence[Mapping[str, Any]], operation: str, schema: bool = True,
                         compacted: bool = False) -> dict[str, Any]:
        extra = {"schema": record_schema_without_meta_fields()} if schema else {}
        record = encode.commit_metadata(stats, operation, extra_metadata=extra, compacted=compacted)
        record["version"] = None  # the metadata table's commits leave it unset (fixtures)
        return record

    def _require_initialized(self) -> None:
        if not self.initialized:
            raise MetadataTableError("the metadata table is not initialised (call initialize first)")

    # -- what a data-table instant does ----------------------------------------------------------------

    def _deltacommit(self, t: str, records: Sequence[FilesRecord] | None, completion: str | None,
                     data_pending: bool = False, operation: str = UPSERT_PREPPED) -> MdtInstant:
        self.begin_deltacommit(t, operation)
        if records is not None:
            self.write_files_log(t, records)
        if self.compact_max_delta_commits is not None and \
                self.delta_commits_since_compaction() >= self.compact_max_delta_commits:
            self.compact()
        return self.complete_deltacommit(t, completion, data_pending)

    def apply_commit(self, t: str, files_by_partition: Mapping[str, Mapping[str, int]],
                     completion: str | None = None, data_pending: bool = False) -> MdtInstant:
        """A data-table commit, delta commit, replace commit, clustering or compaction `t` that wrote these
        files (partition -> file name -> size): the delta commit `t` with its log file (and a compaction when
        due, run before the delta commit completes as Hudi does)."""
        return self._deltacommit(t, commit_records(files_by_partition), completion, data_pending)

    def apply_clean(self, t: str, deleted_by_partition: Mapping[str, Iterable[str]],
                    deleted_partitions: Iterable[str] = (), completion: str | None = None) -> MdtInstant:
        """A data-table clean `t` that deleted these files (partition -> names) and partitions."""
        return self._deltacommit(t, clean_records(deleted_by_partition, deleted_partitions), completion)

    def apply_rollback(self, t: str, rolled_back: str, completion: str | None = None) -> MdtInstant | None:
        """A data-table rollback `t` of `rolled_back`: when the metadata table has a delta commit `rolled_back`
        (in any state), the metadata-table rollback `t` deleting its log files; otherwise nothing (``None``)."""
        self._require_initialized()
        target = self._instant(rolled_back, ia.DELTA_COMMIT)
        if target is None:
            return None
        folded = [lf for lf in self.logs if lf.name in target.log_files and lf.compacted_by]
        if folded:
            raise MetadataTableError(
                f"metadata-table delta commit {rolled_back} was compacted by {folded[0].compacted_by}: Hudi refuses "
                "to roll it back (validateRollback: the commit is earlier than the latest compaction)")
        inst = MdtInstant(t, ia.ROLLBACK, State.REQUESTED)
        self.instants[(t, ia.ROLLBACK)] = inst
        self._now(t)
        paths = [self.absolute(n) for n in target.log_files]
        requests = [encode.rollback_request(FILES_PARTITION, "", "", [p]) for p in paths]
        self._write_state(inst, State.REQUESTED, encode.rollback_plan((rolled_back, ia.DELTA_COMMIT), requests))
        self._write_state(inst, State.INFLIGHT, None, raw=b"")
        self._delete_logs(target.log_files)
        self._remove_instant(target)
        meta = encode.rollback_metadata(t, [(rolled_back, ia.DELTA_COMMIT)], {FILES_PARTITION: paths} if paths else {})
        self._write_state(inst, State.COMPLETED, meta, completion=completion)
        return inst

    def _delete_logs(self, names: Iterable[str]) -> None:
        gone = set(names)
        for name in gone:
            self.scratch.delete(self.files_path(name))
        self.logs = [lf for lf in self.logs if lf.name not in gone]

    def apply_restore(self, t: str, savepoint: str, listing: Mapping[str, Mapping[str, int]],
                      completion: str | None = None) -> tuple[MdtInstant, MdtInstant]:
        """A data-table restore `t` to `savepoint`, after which storage holds `listing` (partition -> file ->
        size, committed files): the metadata-table restore (a new time) of every metadata-table instant after
        the savepoint, then the delta commit (another new time) that syncs the listing with storage."""
        self._require_initialized()
        first_base = min((b.instant for b in self.bases if b.instant != INIT_INSTANT), default=None)
        if first_base is not None and savepoint <= first_base:
            raise MetadataTableError(f"the metadata table cannot be restored to {savepoint}: its oldest compaction "
                                     f"{first_base} is not before it (Hudi refuses the restore)")
        victims = sorted((i for i in self.instants.values() if i.time > savepoint
                          and not i.time.startswith(INIT_INSTANT[:14])), key=lambda i: i.time, reverse=True)
        _, rt = self._now(t)
        inst = MdtInstant(rt, ia.RESTORE, State.REQUESTED)
        self.instants[(rt, ia.RESTORE)] = inst
        done = [(v.time, ia.COMMIT if v.action == ia.COMPACTION and v.state is State.COMPLETED else v.action)
                for v in victims]
        self._write_state(inst, State.REQUESTED, encode.restore_plan(done, savepoint))
        self._write_state(inst, State.INFLIGHT, None, raw=b"")
        rollbacks: dict[str, list[dict[str, Any]]] = {}
        for victim, (vt, action) in zip(victims, done, strict=True):
            names = list(victim.log_files)
            if victim.action == ia.COMPACTION and victim.base_file:
                names.append(victim.base_file)
                self.scratch.delete(self.files_path(victim.base_file))
                self.bases = [b for b in self.bases if b.name != victim.base_file]
                for lf in self.logs:
                    if lf.compacted_by == victim.time:
                        lf.compacted_by = None
            self._delete_logs(victim.log_files)
            self._remove_instant(victim)
            paths = [self.absolute(n) for n in names]
            rollbacks[vt] = [encode.rollback_metadata(rt, [(vt, action)], {FILES_PARTITION: paths} if paths else {})]
        self._write_state(inst, State.COMPLETED, encode.restore_metadata(rt, rollbacks, done))
        # The sync delta commit (fetchOutofSyncFilesRecordsFromMetadataTable), always written.
        state = self.merged_records()
        records = _sync_records(state, listing)
        _, st = self._now(t)
        sync = self._deltacommit(st, records or None, completion)
        return inst, sync

    # -- compaction -----------------------------------------------------------------------------------

    def delta_commits_since_compaction(self) -> int:
        """Completed delta commits after the latest base file's instant (what the compaction trigger counts)."""
        latest = self.latest_base().instant if self.bases else INIT_INSTANT
        return sum(1 for i in self.instants.values() if i.action == ia.DELTA_COMMIT
                   and i.state is State.COMPLETED and i.time > latest)

    def latest_base(self) -> MdtBaseFile:
        """The base file of the latest completed slice."""
        self._require_initialized()
        return self.bases[-1]

    def compaction_time(self) -> str:
        """`compactIfNecessary`'s instant: one millisecond before the earliest data-table instant that is
        pending but completed on the metadata table, else a new time."""
        pending = sorted(i.time for i in self.instants.values() if i.data_pending)
        if pending:
            return epoch_ms_to_time(time_to_epoch_ms(pending[0]) - 1)
        return self._now()[1]

    def _plan(self, c: str) -> tuple[MdtBaseFile, list[MdtLogFile]]:
        base = self.latest_base()
        done = {i.time: i for i in self.instants.values() if i.action == ia.DELTA_COMMIT and i.state is State.COMPLETED}
        logs = [lf for lf in self.logs if lf.compacted_by is None and lf.deltacommit in done
                and (done[lf.deltacommit].completion or "") < c]
        return base, sorted(logs, key=_log_order)

    def schedule_compaction(self, at: str | None = None) -> MdtInstant:
        """Write the requested plan of a metadata-table compaction (left pending; :meth:`run_compaction` runs it)."""
        self._require_initialized()
        c = at or self.compaction_time()
        base, logs = self._plan(c)
        op = encode.compaction_operation(FILES_PARTITION, FILES_FILE_ID, base.instant, base.name,
                                         [lf.name for lf in logs])
        op["metrics"] = {"TOTAL_LOG_FILES": float(len(logs)), "TOTAL_IO_MB": 0.0, "TOTAL_IO_READ_MB": 0.0,
                         "TOTAL_LOG_FILES_SIZE": float(sum(lf.size for lf in logs)), "TOTAL_IO_WRITE_MB": 0.0}
        plan = encode.compaction_plan([op])
        plan["missingSchedulePartitions"] = []
        inst = MdtInstant(c, ia.COMPACTION, State.REQUESTED, plan=plan, operation="COMPACT")
        self.instants[(c, ia.COMPACTION)] = inst
        self._write_state(inst, State.REQUESTED, plan)
        return inst

    def run_compaction(self, at: str, completion: str | None = None,
                       records: Mapping[str, FilesRecord] | None = None) -> MdtInstant:
        """Run the pending compaction `at`: the new base HFile with the planned files' records merged
        (`records`, when given, is written instead: the generator's state in one pass)."""
        inst = self._instant(at, ia.COMPACTION)
        if inst is None or inst.state is State.COMPLETED or inst.plan is None:
            raise MetadataTableError(f"no pending metadata-table compaction {at}")
        if inst.state is State.REQUESTED:
            self._write_state(inst, State.INFLIGHT, None, raw=b"")
        op = inst.plan["operations"][0]
        base = next(b for b in self.bases if b.name == op["dataFilePath"])
        logs = sorted((lf for lf in self.logs if lf.name in op["deltaFilePaths"]), key=_log_order)
        valid = {i.time for i in self.instants.values() if i.action == ia.DELTA_COMMIT
                 and i.state is State.COMPLETED and not i.data_pending}
        merged = dict(records) if records is not None else _merge(base.records, logs, at, valid)
        new = self._write_base(at, merged)
        for lf in logs:
            lf.compacted_by = at
        inst.base_file = new.name
        log_records = sum(len(b.records) for lf in logs for b in lf.blocks if b.kind != "rollback")
        updated = len(set(new.records) & set(base.records))
        stat = encode.write_stat(FILES_PARTITION, FILES_FILE_ID, new.name, prev_commit=base.instant,
                                 num_writes=len(new.records), num_inserts=len(new.records) - updated,
                                 num_updates=updated, file_size=new.size)
        stat.update(self._stat_extras())
        stat.update({"totalLogRecords": log_records, "totalUpdatedRecordsCompacted": len(new.records),
                     "totalLogBlocks": sum(len(lf.blocks) for lf in logs), "totalLogFilesCompacted": len(logs),
                     "totalLogSizeCompacted": sum(lf.size for lf in logs), "prevBaseFile": base.name})
        self._write_state(inst, State.COMPLETED, self._commit_metadata([stat], "COMPACT", compacted=True),
                          completion=completion)
        return inst

    def compact(self, at: str | None = None, completion: str | None = None,
                records: Mapping[str, FilesRecord] | None = None) -> MdtInstant:
        """Schedule and run a metadata-table compaction (requested plan, inflight, ``<c>_<completion>.commit``)."""
        inst = self.schedule_compaction(at)
        return self.run_compaction(inst.time, completion, records)

    # -- the state a reader sees -------------------------------------------------------------------------

    def merged_records(self) -> dict[str, FilesRecord]:
        """The records of the latest slice merged as the reader merges them: the latest base, and the log
        files of completed delta commits (not yet compacted), blocks of valid instants only."""
        base = self.latest_base()
        done = {i.time for i in self.instants.values() if i.action == ia.DELTA_COMMIT
                and i.state is State.COMPLETED and not i.data_pending}
        logs = sorted((lf for lf in self.logs if lf.compacted_by is None and lf.deltacommit in done), key=_log_order)
        return _merge(base.records, logs, None, valid=done)

    def listing(self) -> dict[str, dict[str, int]]:
        """The data table's partitions and files (name -> size) the metadata table lists now."""
        merged = self.merged_records()
        parts = merged.get(ALL_PARTITIONS_KEY)
        out: dict[str, dict[str, int]] = {}
        for key in parts.live_names() if parts else []:
            record = merged.get(key)
            partition = "" if key == "." else key
            out[partition] = {n: record.entries[n].size for n in record.live_names()} if record else {}
        return out


def _log_order(lf: MdtLogFile) -> tuple[str, int, str]:
    """`HoodieLogFile.getLogFileComparator`: the instant in the name, the version, the write token."""
    return lf.deltacommit, lf.version, lf.name.rsplit("_", 1)[-1]


def _merge(base: Mapping[str, FilesRecord], logs: Sequence[MdtLogFile], upto: str | None,
           valid: set[str] | None = None) -> dict[str, FilesRecord]:
    """Log records merged among themselves oldest first (a rollback block drops the queued blocks of its
    target), then each merged log record onto the base record (`HoodieMetadataPayload` rules)."""
    queued: list[MdtBlock] = []
    for lf in logs:
        for block in lf.blocks:
            if block.kind == "rollback":
                queued = [b for b in queued if b.instant != block.target]
                continue
            if upto is not None and block.instant > upto:
                continue
            if valid is not None and block.instant not in valid and not block.instant.startswith(INIT_INSTANT[:14]):
                continue
            queued.append(block)
    from_logs: dict[str, FilesRecord] = {}
    for block in queued:
        for record in block.records:
            from_logs[record.key] = combine(from_logs.get(record.key), record)
    out = dict(base)
    for key, record in from_logs.items():
        merged = combine(out.get(key), record)
        if merged.deleted:
            out.pop(key, None)
        else:
            out[key] = merged
    return out


def _sync_records(state: Mapping[str, FilesRecord], listing: Mapping[str, Mapping[str, int]]) -> list[FilesRecord]:
    """`fetchOutofSyncFilesRecordsFromMetadataTable`: files on storage the metadata table lacks (added with
    their sizes), files it lists that storage lacks (tombstones), partitions it lists that storage lacks."""
    parts = state.get(ALL_PARTITIONS_KEY)
    listed = {("" if k == "." else k) for k in (parts.live_names() if parts else [])}
    records: list[FilesRecord] = []
    added_partitions: list[str] = []
    for partition, files in listing.items():
        record = state.get(partition_key(partition))
        have = {n: record.entries[n].size for n in record.live_names()} if record else {}
        entries = {n: FileEntry(int(s)) for n, s in files.items() if have.get(n) != s}
        entries.update({n: FileEntry(0, True) for n in have if n not in files})
        if partition not in listed:
            added_partitions.append(partition)
        if entries:
            records.append(FilesRecord(partition_key(partition), MetadataRecordType.FILES, entries))
    gone = sorted(listed - set(listing))
    records += [FilesRecord.delete(partition_key(p)) for p in gone]
    if added_partitions or gone:
        entries = {partition_key(p): FileEntry(0) for p in added_partitions}
        entries.update({partition_key(p): FileEntry(0, True) for p in gone})
        records.append(FilesRecord(ALL_PARTITIONS_KEY, MetadataRecordType.ALL_PARTITIONS, entries))
    return records


__all__ = [
    "COMPACT_MAX_DELTA_COMMITS", "DATA_TABLE_PROPERTIES", "FILES_FILE_ID", "INIT_INSTANT", "METADATA_DIR",
    "MdtBaseFile", "MdtBlock", "MdtInstant", "MdtLogFile", "MetadataTableError", "MetadataTableWriter",
    "base_hfile", "bloom_filter", "clean_records", "commit_records", "encode_record", "hudi_murmur_hash",
    "init_log_file", "log_block", "record_schema_without_meta_fields",
]
