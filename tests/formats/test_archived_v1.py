"""Layout-1 archived timeline (`.commits_.archive.N_<token>` log files): archive bytes built here by
hand per spec `04` §4.1, damaged archives, Hudi's early stop, and round trips through the project's
archive writer for table version 6."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest
from archived_tables import ScratchTable, instant_time, new_table

from hudi_core import open_table
from hudi_core.errors import Severity
from hudi_core.formats.logfile.content import encode_avro_content
from hudi_core.formats.logfile.format import BlockType, HeaderKey
from hudi_core.formats.logfile.writer import encode_block
from hudi_core.formats.timeline import encode
from hudi_core.formats.timeline.archived_v1 import list_archive_log_files, order_archive_files, payload_field
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import CleanMetadata, CommitMetadata, CompactionPlan
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.scenarios.archive_writer import archive_instants

ARCHIVED = ".hoodie/archived"
ENTRY_SCHEMA = encode.writer_schema_json("HoodieArchivedMetaEntry", 6)


def entry(rt: str, action: str, state: str | None, completion: str | None = None, **payload: Any) -> dict[str, Any]:
    """One `HoodieArchivedMetaEntry` record (Avro-shaped)."""
    record = {"commitTime": rt, "actionType": action, "actionState": state, "stateTransitionTime": completion,
              "version": 1, **payload}
    return encode.conform_record(record, "HoodieArchivedMetaEntry", 6)


def archive_block(records: list[dict[str, Any]], schema: str = ENTRY_SCHEMA) -> bytes:
    """An AVRO_DATA_BLOCK whose header holds only SCHEMA, as `TimelineArchiverV1` writes."""
    return encode_block(BlockType.AVRO_DATA_BLOCK, [(HeaderKey.SCHEMA, schema)], encode_avro_content(records, schema))


def _commit_meta(rt: str, n: int, operation: str = "UPSERT") -> dict[str, Any]:
    return encode.commit_metadata([encode.write_stat("p1", f"fg{n}", f"fg{n}_0-1-1_{rt}.parquet", num_writes=n)],
                                  operation)


def commit_entries(rt: str, ct: str | None, n: int) -> list[dict[str, Any]]:
    """The three state records of a completed commit."""
    return [
        entry(rt, "commit", "REQUESTED"),
        entry(rt, "commit", "INFLIGHT", hoodieCommitMetadata=encode.commit_metadata([], "UPSERT")),
        entry(rt, "commit", "COMPLETED", ct, hoodieCommitMetadata=_commit_meta(rt, n)),
    ]


T = [instant_time(i * 10) for i in range(40)]


@pytest.fixture
def v6_table(tmp_path: Path) -> ScratchTable:
    return new_table(tmp_path / "t", 6)


def _write(t: ScratchTable, n: int, data: bytes) -> str:
    name = f".commits_.archive.{n}_1-0-1"
    t.scratch.write_bytes(f"{ARCHIVED}/{name}", data)
    return name


def test_one_record_per_state_grouped_into_instants(v6_table: ScratchTable) -> None:
    plan = encode.compaction_plan([encode.compaction_operation("p1", "fgC", T[0], f"fgC_0-1-1_{T[0]}.parquet", [])])
    clean_plan = encode.cleaner_plan({"p1": ["/t/p1/old.parquet"]}, earliest_instant_to_retain=(T[1], "commit",
                                                                                               "COMPLETED"))
    clean_meta = encode.clean_metadata(T[4], {"p1": ["old.parquet"]}, earliest_commit_to_retain=T[1])
    block1 = archive_block([
        # very old archives: no actionState, no stateTransitionTime
        entry(T[0], "commit", None, hoodieCommitMetadata=_commit_meta(T[0], 1)),
        *commit_entries(T[1], instant_time(15), 2),
    ])
    block2 = archive_block([
        entry(T[2], "compaction", "REQUESTED", hoodieCompactionPlan=plan),
        # Hudi's archiver copies each state file's modification time into stateTransitionTime (1.x:
        # `createMetaWrapper` sets it from `getCompletionTime()`, which `InstantGeneratorV1` takes from the mtime).
        entry(T[2], "compaction", "INFLIGHT", instant_time(21)),
        entry(T[2], "commit", "COMPLETED", instant_time(25), hoodieCommitMetadata=_commit_meta(T[2], 3, "COMPACT")),
        entry(T[4], "clean", "REQUESTED", hoodieCleanerPlan=clean_plan),
        entry(T[4], "clean", "INFLIGHT", hoodieCleanerPlan=clean_plan),
        entry(T[4], "clean", "COMPLETED", instant_time(41), hoodieCleanMetadata=clean_meta),
    ])
    _write(v6_table, 1, block1 + block2)
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    assert arch.findings == []
    got = [(i.requested_time, i.action, i.pending_action, i.state, i.completion_time) for i in arch.instants]
    assert got == [
        (T[0], "commit", "commit", State.COMPLETED, T[0]),  # completion = requested (CompletionTimeQueryViewV1)
        (T[1], "commit", "commit", State.COMPLETED, instant_time(15)),
        (T[2], "commit", "compaction", State.COMPLETED, instant_time(25)),
        (T[4], "clean", "clean", State.COMPLETED, instant_time(41)),
    ]
    assert all(i.source == "archived" for i in arch.instants)
    # The old record without stateTransitionTime says so: its completion time is the requested time.
    assert [i.completion_time_source for i in arch.instants] == ["requested_time", "archive", "archive", "archive"]
    # The inflight time is the INFLIGHT record's stateTransitionTime, where it has one.
    assert [(i.inflight_time, i.inflight_time_source) for i in arch.instants] == [
        (None, None), (None, None), (instant_time(21), "archive"), (None, None)]
    listing = arch.listing.select(["requested_time", "completion_time_source", "inflight_time", "inflight_time_source"])
    assert listing.to_pylist()[:3] == [
        {"requested_time": T[0], "completion_time_source": "requested_time", "inflight_time": None,
         "inflight_time_source": None},
        {"requested_time": T[1], "completion_time_source": "archive", "inflight_time": None,
         "inflight_time_source": None},
        {"requested_time": T[2], "completion_time_source": "archive", "inflight_time": instant_time(21),
         "inflight_time_source": "archive"}]
    assert [f.name for f in arch.instants[1].files] == [f"{T[1]}.commit.requested", f"{T[1]}.inflight",
                                                        f"{T[1]}.commit"]
    assert arch.instants[1].files[0].path == f"{ARCHIVED}/.commits_.archive.1_1-0-1"
    meta = arch.commit_metadata(arch.instants[1])
    assert isinstance(meta, CommitMetadata)
    assert [(s.file_id, s.path, s.num_writes) for s in meta.write_stats()] == [
        ("fg2", f"p1/fg2_0-1-1_{T[1]}.parquet", 2)]
    assert arch.record(arch.instants[1], State.INFLIGHT).write_stats() == []
    assert arch.record(arch.instants[1], State.REQUESTED) is None
    compaction = arch.instants[2]
    assert isinstance(arch.plan(compaction), CompactionPlan)
    assert [op.file_id for op in arch.plan(compaction).operations] == ["fgC"]
    assert arch.commit_metadata(compaction).operation_type == "COMPACT"
    clean = arch.record(arch.instants[3])
    assert isinstance(clean, CleanMetadata) and clean.earliest_commit_to_retain == T[1]
    assert arch.plan(arch.instants[3]).earliest_instant_to_retain.timestamp == T[1]
    assert arch.body_error(arch.instants[3]) == []
    assert arch.listing.column("state").to_pylist() == ["COMPLETED"] * 4


def test_payload_field_by_action_and_state() -> None:
    assert payload_field("clean", State.REQUESTED) == "hoodieCleanerPlan"
    assert payload_field("clean", State.COMPLETED) == "hoodieCleanMetadata"
    assert payload_field("replacecommit", State.REQUESTED) == "hoodieRequestedReplaceMetadata"
    assert payload_field("replacecommit", State.INFLIGHT) == "HoodieInflightReplaceMetadata"
    assert payload_field("clustering", State.COMPLETED) == "hoodieReplaceCommitMetadata"
    assert payload_field("logcompaction", State.REQUESTED) == "hoodieCompactionPlan"
    assert payload_field("savepoint", State.COMPLETED) == "hoodieSavePointMetadata"
    assert payload_field("indexing", State.COMPLETED) == "hoodieIndexCommitMetadata"


def test_commit_metadata_as_json_string(v6_table: ScratchTable) -> None:
    """Old archive schemas carried commit metadata as the JSON text of the active file."""
    schema_json = json.dumps({
        "type": "record", "name": "HoodieArchivedMetaEntry", "namespace": "org.apache.hudi.avro.model",
        "fields": [{"name": "hoodieCommitMetadata", "type": ["null", "string"], "default": None},
                   {"name": "commitTime", "type": ["null", "string"], "default": None},
                   {"name": "actionType", "type": ["null", "string"], "default": None},
                   {"name": "version", "type": ["int", "null"], "default": 1},
                   {"name": "actionState", "type": ["null", "string"], "default": None}],
    })
    text = encode.encode_json(_commit_meta(T[5], 9), "HoodieCommitMetadata").decode()
    record = {"commitTime": T[5], "actionType": "commit", "actionState": "COMPLETED", "version": 1,
              "hoodieCommitMetadata": text}
    _write(v6_table, 1, archive_block([record], schema_json))
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    body = arch.body(arch.instants[0])
    assert body.format.value == "json"
    assert [(s.file_id, s.num_writes) for s in body.record.write_stats()] == [("fg9", 9)]


def _four_files(t: ScratchTable) -> None:
    for n in range(1, 6):  # .archive.1 holds the oldest instants, .archive.5 the newest
        _write(t, n, archive_block([e for k in range(2) for e in commit_entries(T[(n - 1) * 2 + k], None, n)]))


def test_files_read_newest_first_and_time_range_stops_early(v6_table: ScratchTable) -> None:
    _four_files(v6_table)
    storage = ReadOnlyStorage(v6_table.scratch.uri)
    names = [i.path for i in storage.list(ARCHIVED)]
    assert [n.rsplit(".", 1)[1] for n in order_archive_files(names)] == [f"{n}_1-0-1" for n in range(5, 0, -1)]
    table = open_table(v6_table.scratch.uri)
    assert [i.requested_time for i in table.archived_timeline().instants] == T[:10]
    # T[4]..T[7] live in files 3 and 4: files 5 (nothing yet), 4, 3 are read, 2 adds nothing: stop.
    ranged = table.archived_timeline(since=T[4], until=T[7])
    assert [i.requested_time for i in ranged.instants] == T[4:8]
    assert [p.rsplit(".", 1)[1] for p in ranged.archive_files] == ["5_1-0-1", "4_1-0-1", "3_1-0-1", "2_1-0-1"]


def test_truncated_archive_keeps_everything_before_the_damage(v6_table: ScratchTable) -> None:
    blocks = [archive_block(commit_entries(T[k], instant_time(k * 10 + 3), k)) for k in range(3)]
    data = b"".join(blocks)
    cut = len(blocks[0]) + len(blocks[1]) + len(blocks[2]) // 2
    name = _write(v6_table, 1, data[:cut])
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    assert [i.requested_time for i in arch.instants] == T[:2]
    assert arch.commit_metadata(arch.instants[1]).write_stats()[0].num_writes == 1
    assert len(arch.findings) == 1
    finding = arch.findings[0]
    assert finding.severity is Severity.ERROR and finding.path.endswith(name)
    assert finding.code == "archive_block_corrupt" and f"byte {len(blocks[0]) + len(blocks[1])}" in finding.message


def test_garbage_after_a_block_makes_it_corrupt(v6_table: ScratchTable) -> None:
    """A block not followed by `#HUDI#` or EOF is corrupt (`HoodieLogFileReader.isBlockCorrupted`)."""
    first = archive_block(commit_entries(T[0], None, 1))
    name = _write(v6_table, 1, first + archive_block(commit_entries(T[1], None, 2)) + b"GARBAGE")
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    assert [i.requested_time for i in arch.instants] == T[:1]
    assert [(f.code, f.path.endswith(name)) for f in arch.findings] == [("archive_block_corrupt", True)]
    assert f"byte {len(first)}" in arch.findings[0].message


def test_file_without_magic_is_damaged_and_the_rest_loads(v6_table: ScratchTable) -> None:
    name = _write(v6_table, 2, b"NOT-A-LOG-FILE" + archive_block(commit_entries(T[1], None, 2)))
    _write(v6_table, 1, archive_block(commit_entries(T[0], None, 1)))
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    assert [i.requested_time for i in arch.instants] == T[:1]
    assert [(f.code, f.path.endswith(name)) for f in arch.findings] == [("archive_file_damaged", True)]


def test_damaged_merge_target_is_tolerated(v6_table: ScratchTable) -> None:
    name = _write(v6_table, 2, archive_block(commit_entries(T[1], None, 2))[:40])
    _write(v6_table, 1, archive_block(commit_entries(T[0], None, 1)))
    plan_schema = {"type": "record", "name": "HoodieMergeArchiveFilePlan", "namespace": "org.apache.hudi.avro.model",
                   "fields": [{"name": "version", "type": ["int", "null"], "default": 1},
                              {"name": "candidate", "type": ["null", {"type": "array", "items": "string"}],
                               "default": None},
                              {"name": "mergedArchiveFileName", "type": ["null", "string"], "default": None}]}
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(plan_schema),
                    [{"version": 1, "candidate": [".commits_.archive.1_1-0-1"], "mergedArchiveFileName": name}])
    v6_table.scratch.write_bytes(f"{ARCHIVED}/mergeArchivePlan", buf.getvalue())
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    assert [i.requested_time for i in arch.instants] == [T[0]]
    assert [(f.code, f.severity) for f in arch.findings] == [("archive_merge_incomplete", Severity.INFO)]


def test_duplicate_state_records_are_reported(v6_table: ScratchTable) -> None:
    _write(v6_table, 1, archive_block(commit_entries(T[0], None, 1)))
    _write(v6_table, 2, archive_block(commit_entries(T[0], None, 5)))
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    assert len(arch.instants) == 1
    assert arch.commit_metadata(arch.instants[0]).write_stats()[0].num_writes == 5  # newest file's copy
    assert [f.code for f in arch.findings] == ["duplicate_archived_state"]


def test_duplicates_across_files_name_each_copy_and_keep_the_newest(v6_table: ScratchTable) -> None:
    _write(v6_table, 1, archive_block([*commit_entries(T[0], None, 1), *commit_entries(T[1], None, 2)]))
    _write(v6_table, 2, archive_block(commit_entries(T[0], None, 3)))
    _write(v6_table, 3, archive_block([*commit_entries(T[1], None, 4), *commit_entries(T[0], None, 5)]))
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    assert [i.requested_time for i in arch.instants] == [T[0], T[1]]
    assert [arch.commit_metadata(i).write_stats()[0].num_writes for i in arch.instants] == [5, 4]
    (finding,) = arch.findings
    # The copies in the order the files were read (newest first), as the loader meets them.
    assert finding.message == (
        "9 archived state record(s) appear more than once (the newest file's copy is used): "
        f"{T[0]} commit REQUESTED, {T[0]} commit INFLIGHT, {T[0]} commit COMPLETED, {T[0]} commit REQUESTED, "
        f"{T[0]} commit INFLIGHT …")


def test_batch_function_returns_error_rows(v6_table: ScratchTable) -> None:
    good = _write(v6_table, 1, archive_block(commit_entries(T[0], None, 1)))
    storage = ReadOnlyStorage(v6_table.scratch.uri)
    rows = list_archive_log_files(storage.spec, [f"{ARCHIVED}/{good}", f"{ARCHIVED}/.commits_.archive.9_1-0-1"])
    assert rows.column("state").to_pylist() == ["REQUESTED", "INFLIGHT", "COMPLETED", None]
    assert rows.column("error_code").to_pylist()[-1] == "archive_file_unreadable"


# -- round trip through the project's archive writer ------------------------------------------


def test_round_trip_v6(tmp_path: Path) -> None:
    t = new_table(tmp_path / "t", 6, "MERGE_ON_READ")
    for i in range(12):
        t.commit(T[i], instant_time(i * 10 + 4), action="deltacommit")
    t.compaction(T[20], instant_time(205))
    t.clean(T[21], instant_time(211), T[0])
    t.replace(T[22], instant_time(225))
    t.commit(T[30], instant_time(305), action="deltacommit")
    active = t.active()
    written = active.instants
    expected = {}
    for inst in written:
        for f in inst.files:
            expected[(inst.requested_time, f.action, f.state)] = active.record(inst, f.state)
    archive_instants(t.scratch, t.props, written[:8])
    archive_instants(t.scratch, t.props, written[8:15], new_file=True)
    arch = open_table(t.scratch.uri).archived_timeline()
    assert len(arch.archive_files) == 2
    assert [(i.requested_time, i.action, i.pending_action, i.state, i.completion_time) for i in arch.instants] == [
        (i.requested_time, i.action, i.pending_action, i.state, i.completion_time) for i in written[:15]]
    assert [[f.name for f in i.files] for i in arch.instants] == [[f.name for f in i.files] for i in written[:15]]
    for inst in arch.instants:
        for f in inst.files:
            got = arch.record(inst, f.state)
            want = expected[(inst.requested_time, f.action, f.state)]
            if isinstance(want, CommitMetadata):
                # JSON commit metadata is converted to the Avro record when archived
                assert got.operation_type == want.operation_type
                assert [(s.file_id, s.path, s.num_writes) for s in got.write_stats()] == [
                    (s.file_id, s.path, s.num_writes) for s in want.write_stats()]
                assert got.partition_to_replace_file_ids == want.partition_to_replace_file_ids
            elif want is None and f.action == "compaction":
                # pending compaction states carry the plan of the requested file
                plan = expected[(inst.requested_time, "compaction", State.REQUESTED)]
                assert got is None or got.raw == plan.raw
            elif want is None:
                assert got is None
            else:
                assert got.raw == want.raw, (inst, f.state)
    assert arch.findings == []


def test_listing_never_decodes_payloads(v6_table: ScratchTable, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(v6_table, 1, archive_block(commit_entries(T[0], instant_time(3), 4)))
    import hudi_core.formats.timeline.archived_v1 as v1

    calls: list[int] = []
    original = v1.decode_full_datum

    def counting(schema_json: str, datum: bytes) -> dict[str, Any]:
        calls.append(len(datum))
        return original(schema_json, datum)

    monkeypatch.setattr(v1, "decode_full_datum", counting)
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    assert len(arch.instants) == 1 and calls == []
    assert arch.commit_metadata(arch.instants[0]).write_stats()[0].num_writes == 4
    assert len(calls) == 1


def test_legacy_v0_block_is_corrupt_for_a_1x_reader(v6_table: ScratchTable) -> None:
    """Very old archives used format version 0 (no trailing block length). Hudi 1.x validates every
    block by that trailing length (`isBlockCorrupted`), so such a block reads as corrupt: the same
    here, with a finding naming the file and the valid files still loading."""
    import struct
    import zlib

    records = commit_entries(T[0], instant_time(3), 6)
    modern = encode_avro_content(records, ENTRY_SCHEMA)
    schema_z = zlib.compress(ENTRY_SCHEMA.encode())
    content = struct.pack(">i", len(schema_z)) + schema_z + modern[4:]  # drop the i32 content version
    name = _write(v6_table, 1, encode_block(BlockType.AVRO_DATA_BLOCK, (), content, format_version=0))
    _write(v6_table, 2, archive_block(commit_entries(T[1], instant_time(13), 7)))
    arch = open_table(v6_table.scratch.uri).archived_timeline()
    assert [i.requested_time for i in arch.instants] == [T[1]]
    assert [(f.code, f.path.endswith(name)) for f in arch.findings] == [("archive_block_corrupt", True)]


# -- the column-wise key reader ----------------------------------------------------------------


def _record_datums(records: list[dict[str, Any]]) -> list[bytes]:
    parsed = fastavro.parse_schema(json.loads(ENTRY_SCHEMA))
    out = []
    for r in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, r)
        out.append(buf.getvalue())
    return out


def _block_of_datums(datums: list[bytes], schema: str = ENTRY_SCHEMA) -> bytes:
    """An AVRO_DATA_BLOCK (framing version 1) of the given raw datums, damaged ones included."""
    content = (1).to_bytes(4, "big") + len(datums).to_bytes(4, "big") + b"".join(
        len(d).to_bytes(4, "big") + d for d in datums)
    return encode_block(BlockType.AVRO_DATA_BLOCK, [(HeaderKey.SCHEMA, schema)], content)


def _damaged_archives() -> dict[str, bytes]:
    """Archive files whose damage the block framing does not see: it is inside records (or none at all)."""
    good = _record_datums([e for k in range(3) for e in commit_entries(T[k], instant_time(k * 10 + 3), k)])
    non_utf8 = _record_datums([entry(T[5], "commit", "COMPLETED", instant_time(53))])[0].replace(
        T[5].encode(), b"\xff" + T[5].encode()[1:])
    other_schema = json.loads(ENTRY_SCHEMA)
    other_schema["fields"] = [f for f in other_schema["fields"] if f["name"] != "stateTransitionTime"]
    other = fastavro.parse_schema(other_schema)
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, other, {k: v for k, v in entry(T[6], "clean", "COMPLETED").items()
                                            if k != "stateTransitionTime"})
    return {
        "healthy": _block_of_datums(good[:4]) + _block_of_datums(good[4:]),
        "trailing bytes in a record": _block_of_datums([*good[:2], good[2] + b"\x00\x07", *good[3:]]),
        "record cut short": _block_of_datums([*good[:3], good[3][: len(good[3]) // 2], *good[4:]]),
        "varint that does not end": _block_of_datums([*good[:1], b"\xff" * 12, *good[1:]]),
        "string that is not UTF-8": _block_of_datums([*good[:2], non_utf8]),
        "empty key fields": _block_of_datums(_record_datums([entry("", "commit", "COMPLETED"),
                                                             entry(T[7], "commit", "BOGUS")])),
        "two schemas": _block_of_datums(good[:3]) + _block_of_datums([buf.getvalue()], json.dumps(other_schema))
        + _block_of_datums(good[3:]),
        "records of every block in one run": b"".join(_block_of_datums(good[k:k + 1]) for k in range(len(good))),
        "garbage after the last block": _block_of_datums(good) + b"GARBAGE",
        # Read as columns when every record is valid: the loop's rules, one by one.
        "no state and an empty state (COMPLETED)": _block_of_datums(_record_datums(
            [entry(T[8], "commit", None, instant_time(83)), entry(T[9], "clean", "", None)])),
        "a command block between data blocks": _block_of_datums(good[:2])
        + encode_block(BlockType.COMMAND_BLOCK, [(HeaderKey.COMMAND_BLOCK_TYPE, "0")], b"")
        + _block_of_datums(good[2:]),
        "an invalid record after valid blocks": _block_of_datums(good)
        + _block_of_datums(_record_datums([entry(T[9], "commit", "PENDING")])),
    }


#: The cases whose rows are built as columns (every block read column-wise, every record valid).
ROWS_AS_COLUMNS = {"healthy", "records of every block in one run", "two schemas",
                   "no state and an empty state (COMPLETED)", "a command block between data blocks"}


@pytest.mark.parametrize("case", list(_damaged_archives()))
def test_column_wise_keys_read_as_record_by_record(v6_table: ScratchTable, case: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing read column-wise is the listing read a record at a time, rows and errors, in order; a file
    read whole column-wise builds its rows as columns, any other is read by the loop."""
    from hudi_core.formats.timeline import archived_v1
    from hudi_core.formats.timeline.archived_v1 import read_archive_file_rows

    built: list[Any] = []
    as_columns = archived_v1._clean_file_rows
    monkeypatch.setattr(archived_v1, "_clean_file_rows", lambda *args: built.append(as_columns(*args)) or built[-1])
    name = _write(v6_table, 1, _damaged_archives()[case])
    storage = ReadOnlyStorage(v6_table.scratch.uri)
    fast = read_archive_file_rows(storage, f"{ARCHIVED}/{name}")
    assert (bool(built) and built[0] is not None) == (case in ROWS_AS_COLUMNS)
    slow = read_archive_file_rows(storage, f"{ARCHIVED}/{name}", vectorized=False)
    assert fast.equals(slow), (fast.to_pylist(), slow.to_pylist())
    assert fast.num_rows > 0


def test_column_wise_keys_read_as_record_by_record_on_generated_archives(tmp_path: Path) -> None:
    """The same on the archive files of a generated table (the scale generator's layout-1 archive: commit,
    deltacommit, clean, compaction and rollback records, several files)."""
    from hudi_core.formats.timeline.archived_v1 import read_archive_file_rows
    from hudi_core.scenarios.scale import MERGE_ON_READ, generate_table

    generate_table(tmp_path / "t", "S", layout=1, table_type=MERGE_ON_READ, active_instants=20,
                   archived_instants=3_000, partitions=2, file_groups=20, files=100, log_files=0)
    storage = ReadOnlyStorage(str(tmp_path / "t"))
    files = [i.path for i in storage.list(ARCHIVED) if ".archive." in i.path]
    rows = 0
    for path in files:
        fast = read_archive_file_rows(storage, path)
        assert fast.equals(read_archive_file_rows(storage, path, vectorized=False)), path
        rows += fast.num_rows
    assert files and rows >= 3_000


def _archived_summary(arch: Any) -> dict[str, Any]:
    # A few instants first, before every instant is built: their state references alone.
    some = [(i.requested_time, i.state, [f.name for f in i.files]) for i in arch.instants_at([len(arch) - 1, 1])]
    partial = sorted(arch._partial_refs.items())
    listing = arch.listing
    return {
        "some": some, "partial_refs": partial,
        "listing": listing.set_column(listing.schema.get_field_index("archive_file"), "archive_file",
                                      listing["archive_file"].cast("string")).to_pydict(),
        "instants": [(i.requested_time, i.action, i.pending_action, i.completed_action, i.state, i.completion_time,
                      i.completion_time_source, i.inflight_time,
                      [(f.name, f.action, f.state, f.completion_time, f.path) for f in i.files])
                     for i in arch.instants],
        "names": arch.state_file_names().to_pylist(),
        "done": arch.completed_locations().to_pydict(),
        "refs": sorted(arch._v1_states.refs().items()),
        "findings": [(f.code, f.severity, f.path, f.message) for f in arch.findings],
    }


def test_archive_decoded_in_worker_processes_and_from_the_index_reads_the_same(
        v6_table: ScratchTable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A heavy first read decodes each archive file in a worker process and keeps its rows as the index maps them
    (the decoded copy let go); the timeline is the one read in this process without an index, and the one read
    back from the index: copies across files, completion and inflight times present and absent, damaged files."""
    from hudi_core.formats.timeline import unified

    _write(v6_table, 1, archive_block([*commit_entries(T[0], None, 1), *commit_entries(T[1], T[2], 2)]))
    _write(v6_table, 2, archive_block([entry(T[3], "commit", "REQUESTED"),
                                       entry(T[3], "commit", "INFLIGHT", T[4],
                                             hoodieCommitMetadata=encode.commit_metadata([], "UPSERT"))]))
    _write(v6_table, 3, archive_block([*commit_entries(T[1], T[5], 7), *commit_entries(T[6], T[7], 3)]))
    _write(v6_table, 4, b"NOT-A-LOG-FILE")
    blocks = [archive_block(commit_entries(T[8 + k], T[9 + k], k)) for k in range(2)]
    _write(v6_table, 5, blocks[0] + blocks[1][: len(blocks[1]) // 2])
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "0")
    monkeypatch.setenv("HUDI_INSPECTOR_ARCHIVE_INDEX", "0")
    alone = _archived_summary(open_table(v6_table.scratch.uri).archived_timeline())
    assert [r[0] for r in alone["instants"]] == [T[0], T[1], T[3], T[6], T[8]]
    assert [k[0] for k, _ in alone["partial_refs"]] == [T[1], T[8]]
    assert dict(alone["partial_refs"]) == {k: v for k, v in alone["refs"] if k[0] in (T[1], T[8])}
    assert {f[0] for f in alone["findings"]} == {"duplicate_archived_state", "archive_file_damaged",
                                                 "archive_block_corrupt"}

    index = tmp_path / "archive-index"
    monkeypatch.setenv("HUDI_INSPECTOR_ARCHIVE_INDEX", str(index))
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "2")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(unified, "PARALLEL_DECODE_MIN_BYTES", 0)
    from hudi_core.formats.timeline import archive_index

    monkeypatch.setattr(archive_index, "_settled", lambda mtime_ms: True)
    in_workers: list[int] = []
    real = unified.cpu_batch_results

    def counted(*args: Any) -> Any:
        for rows in real(*args):
            in_workers.append(rows.num_rows)
            yield rows

    monkeypatch.setattr(unified, "cpu_batch_results", counted)
    first = _archived_summary(open_table(v6_table.scratch.uri).archived_timeline())
    assert len(in_workers) == 5 and len(list(index.glob("*.arrow"))) == 5
    in_workers.clear()
    again = _archived_summary(open_table(v6_table.scratch.uri).archived_timeline())
    assert not in_workers  # every file from the index
    assert first == again == alone


def test_instant_times_sort_as_integers_only_when_they_are_digits_of_one_length() -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    from hudi_core.formats.timeline.unified import _digits_as_int64

    times = pa.chunked_array([["20240101000000123", "20231231235959999"], ["20240101000000122"]])
    as_int = _digits_as_int64(times)
    assert as_int is not None and as_int.to_pylist() == [20240101000000123, 20231231235959999, 20240101000000122]
    assert pc.sort_indices(as_int).to_pylist() == pc.sort_indices(times).to_pylist() == [1, 2, 0]
    # A 14-digit time sorts before a 17-digit one as text whatever its value: left as text.
    assert _digits_as_int64(pa.array(["20240101000000", "20230101000000000"])) is None
    assert _digits_as_int64(pa.array(["2024010100000a", "20240101000001"])) is None
    assert _digits_as_int64(pa.array(["20240101000000", None])) is None
    assert _digits_as_int64(pa.array([], pa.string())) is None
    # Digits of other scripts are digits to Unicode, not to the integer cast: left as text, never an error.
    assert _digits_as_int64(pa.array(["20240101000000", "٢٠٢٤٠١٠١٠٠٠٠٠٠"])) is None
    assert _digits_as_int64(pa.array(["２０２４０１０１０００００", "2024010100000"])) is None
