"""Archive writers (`hudi_core.scenarios.archive_writer`): structure of the bytes written for both
layouts, LSM compaction and cleaning, and round trips back through the archived-timeline reader.

Tables come from the scale generator with tiny parameters (real bodies, files on disk)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_core import open_table
from hudi_core.formats.logfile.format import BlockType
from hudi_core.formats.logfile.reader import read_log_blocks
from hudi_core.formats.timeline import archive_encode as ae
from hudi_core.formats.timeline import encode as enc
from hudi_core.formats.timeline.bodies import decode_body
from hudi_core.formats.timeline.instant import State
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.scenarios import archive_writer as aw
from hudi_core.scenarios.scale import ScaleParams, generate_table
from hudi_core.scenarios.scratch import ScratchDir

TINY = ScaleParams(partitions=2, file_groups=4, active_instants=24, archived_instants=0, log_files=12, files=48)


def _table(tmp_path: Path, version: int, table_type: str = "MERGE_ON_READ", name: str = "t"):
    out = tmp_path / f"{name}{version}"
    generate_table(out, TINY, table_type=table_type, table_version=version)
    return ScratchDir(out), open_table(str(out))


def _content_records(storage: ReadOnlyStorage, path: str, block) -> list[dict]:
    """Decode an AVRO_DATA_BLOCK's content (version, count, length-prefixed datums) with its SCHEMA."""
    raw = storage.read_range(path, block.content_offset, block.content_length)
    schema = fastavro.parse_schema(json.loads(block.header["SCHEMA"]))
    version, count = int.from_bytes(raw[0:4], "big"), int.from_bytes(raw[4:8], "big")
    assert version == 3
    pos, out = 8, []
    for _ in range(count):
        n = int.from_bytes(raw[pos:pos + 4], "big")
        out.append(fastavro.schemaless_reader(io.BytesIO(raw[pos + 4:pos + 4 + n]), schema))
        pos += 4 + n
    assert pos == len(raw)
    return out


def test_layout1_archive_log_blocks(tmp_path: Path) -> None:
    scratch, table = _table(tmp_path, 6)
    instants = list(table.timeline)[:5]
    originals = {(i.requested_time, f.state): f for i in instants for f in i.files}
    bodies = {k: scratch.path(f".hoodie/{f.name}").read_bytes() for k, f in originals.items()}
    written = aw.archive_instants(scratch, table.properties, instants, batch_size=4)
    assert written == [".hoodie/archived/.commits_.archive.1_1-0-1"]
    for f in originals.values():  # active files are gone
        assert not scratch.exists(f".hoodie/{f.name}")
    assert len(open_table(scratch.uri).timeline) == 24 - 5

    storage = ReadOnlyStorage(scratch.uri)
    scan = read_log_blocks(storage, written[0])
    assert scan.error is None
    assert [b.block_type for b in scan.blocks] == [BlockType.AVRO_DATA_BLOCK] * 4  # 15 entries, batch 4
    assert all(set(b.header) == {"SCHEMA"} for b in scan.blocks)
    entries = [e for b in scan.blocks for e in _content_records(storage, written[0], b)]
    assert len(entries) == 15
    assert [(e["commitTime"], e["actionState"]) for e in entries] == [
        (i.requested_time, s) for i in instants for s in ("REQUESTED", "INFLIGHT", "COMPLETED")]
    for e in entries:
        assert e["actionType"] == "deltacommit" and e["version"] == 1
        state = State[e["actionState"]]
        original = decode_body(bodies[(e["commitTime"], state)], "deltacommit", state)
        # stateTransitionTime: the state file's modification time (the generator's requested file at the
        # requested time, the inflight one 250 ms later), as Hudi's archiver records it.
        if state is State.REQUESTED:
            assert e["hoodieCommitMetadata"] is None and e["stateTransitionTime"] == e["commitTime"]
            continue
        if state is State.INFLIGHT:
            assert e["stateTransitionTime"] == e["commitTime"][:14] + "250"
        # JSON in the active timeline, Avro in the archive: same typed record.
        archived = enc.encode_body(e["hoodieCommitMetadata"], "HoodieCommitMetadata", "avro", 6)
        assert decode_body(archived, "deltacommit", state).record == original.record
    completed = [e for e in entries if e["actionState"] == "COMPLETED"]
    assert [e["stateTransitionTime"] for e in completed] == [i.completion_time for i in instants]
    # Read back: the archived instants keep the inflight times the active files had.
    archived = open_table(scratch.uri).archived_timeline()
    assert [(i.inflight_time, i.inflight_time_source) for i in archived.instants] == [
        (i.inflight_time, "archive") for i in instants]
    assert [i.inflight_time_source for i in instants] == ["mtime"] * 5
    assert archived.listing["inflight_time"].to_pylist() == [i.inflight_time for i in instants]

    # Appending goes to the same file; `new_file` rolls over to N+1.
    rest = list(open_table(scratch.uri).timeline)
    assert aw.archive_instants(scratch, table.properties, rest[:1]) == written
    rolled = aw.archive_instants(scratch, table.properties, rest[1:2], new_file=True)
    assert rolled == [".hoodie/archived/.commits_.archive.2_1-0-1"]
    assert len(read_log_blocks(storage, written[0]).blocks) == 5


def test_layout1_payload_fields_by_action(tmp_path: Path) -> None:
    ts = ["20260101000000000", "20260101000100000"]
    clean = ae.InstantBodies(ts[0], ts[1], {
        State.REQUESTED: ("clean", enc.encode_body(enc.cleaner_plan({"p": ["file:/t/p/a.parquet"]}),
                                                   "HoodieCleanerPlan", "avro", 6)),
        State.INFLIGHT: ("clean", b""),
        State.COMPLETED: ("clean", enc.encode_body(enc.clean_metadata(ts[1], {"p": ["a.parquet"]}),
                                                   "HoodieCleanMetadata", "avro", 6)),
    })
    entries = ae.archived_meta_entries(clean, 6)
    assert [e["hoodieCleanerPlan"] is not None for e in entries] == [True, True, False]
    assert entries[2]["hoodieCleanMetadata"]["partitionMetadata"]["p"]["successDeleteFiles"] == ["a.parquet"]
    compaction = ae.InstantBodies(ts[0], ts[1], {
        State.REQUESTED: ("compaction", enc.encode_body(enc.compaction_plan(
            [enc.compaction_operation("p", "f", ts[0], "b.parquet", [])]), "HoodieCompactionPlan", "avro", 6)),
        State.INFLIGHT: ("compaction", b""),
        State.COMPLETED: ("commit", enc.encode_body(enc.commit_metadata([], "COMPACT", compacted=True),
                                                    "HoodieCommitMetadata", "json", 6)),
    })
    entries = ae.archived_meta_entries(compaction, 6)
    assert [e["actionType"] for e in entries] == ["compaction", "compaction", "commit"]
    assert entries[1]["hoodieCompactionPlan"]["operations"][0]["fileId"] == "f"
    assert entries[2]["hoodieCommitMetadata"]["operationType"] == "COMPACT"
    replace = ae.InstantBodies(ts[0], ts[1], {
        State.REQUESTED: ("replacecommit", enc.encode_body(enc.requested_replace_metadata(
            "CLUSTER", [[enc.slice_info("p", "f")]]), "HoodieRequestedReplaceMetadata", "avro", 6)),
        State.INFLIGHT: ("replacecommit", enc.encode_body(enc.commit_metadata([], "CLUSTER"),
                                                          "HoodieCommitMetadata", "json", 6)),
        State.COMPLETED: ("replacecommit", enc.encode_body(enc.commit_metadata(
            [], "CLUSTER", replaced_file_ids={"p": ["f"]}), "HoodieReplaceCommitMetadata", "json", 6)),
    })
    e0, e1, e2 = ae.archived_meta_entries(replace, 6)
    assert e0["hoodieRequestedReplaceMetadata"]["operationType"] == "CLUSTER"
    assert e1["HoodieInflightReplaceMetadata"]["operationType"] == "CLUSTER"
    assert e2["hoodieReplaceCommitMetadata"]["partitionToReplaceFileIds"] == {"p": ["f"]}
    block = ae.archive_block([e0, e1, e2], 6)  # the inlined entry schema encodes every payload
    assert block[:6] == b"#HUDI#"


LSM_NAME = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")


def test_layout2_lsm_files_manifest_and_compaction(tmp_path: Path) -> None:
    scratch, table = _table(tmp_path, 9)
    instants = list(table.timeline)
    raw = {i.requested_time: scratch.path(f".hoodie/timeline/{i.file(State.COMPLETED).name}").read_bytes()
           for i in instants}
    history = scratch.path(".hoodie/timeline/history")
    # 23 archiver runs of one instant each, compaction batch 3: 23 = 212 in base 3, so the live
    # snapshot holds two L2 files (9 runs each), one L1 file (3 runs) and two L0 files.
    for inst in instants[:23]:
        written = aw.archive_instants(scratch, table.properties, [inst], compaction_batch=3)
        assert written[0].endswith("_0.parquet") and written[-1].endswith("_version_")
    version = int((history / "_version_").read_text())
    assert (history / "_version_").read_text() == str(version)  # no newline
    manifest_text = (history / f"manifest_{version}").read_text()
    assert manifest_text.startswith('{\n  "files" : [ {\n    "fileName" : "')
    manifest = json.loads(manifest_text)["files"]
    levels = sorted(int(LSM_NAME.match(f["fileName"]).group(3)) for f in manifest)
    assert levels == [0, 0, 1, 2, 2]
    for f in manifest:
        path = history / f["fileName"]
        assert path.stat().st_size == f["fileLen"]
        pf = pq.ParquetFile(path)
        assert pf.schema_arrow.names == ["instantTime", "completionTime", "action", "metadata", "plan", "version"]
        assert pf.schema_arrow.field("metadata").type == pa.binary()
        assert pf.metadata.metadata[b"parquet.avro.schema"].startswith(b'{"type":"record","name":"HoodieLSM')
        assert pf.metadata.row_group(0).column(0).compression == "GZIP"
        rows = pf.read().to_pylist()
        lo, hi = LSM_NAME.match(f["fileName"]).group(1, 2)
        assert rows[0]["instantTime"] == lo and rows[-1]["instantTime"] == hi
    live = [r for f in manifest for r in pq.read_table(history / f["fileName"]).to_pylist()]
    assert sorted(r["instantTime"] for r in live) == [i.requested_time for i in instants[:23]]
    for r in live:
        assert r["metadata"] == raw[r["instantTime"]] and r["action"] == "deltacommit" and r["version"] == 1
        assert r["completionTime"] == next(i.completion_time for i in instants if i.requested_time == r["instantTime"])
    # Cleaning keeps at most 3 + (compactions of the last run) manifests; data files only if named.
    manifests = sorted(int(p.name.split("_")[1]) for p in history.glob("manifest_*"))
    assert manifests[-1] == version and len(manifests) <= 3 + 2
    named = {f["fileName"] for v in manifests for f in json.loads((history / f"manifest_{v}").read_text())["files"]}
    assert {p.name for p in history.glob("*.parquet")} == named
    assert len(open_table(scratch.uri).timeline) == 1


def test_lsm_row_plan_rules() -> None:
    t, c = "20260101000000000", "20260101000100000"
    plan = enc.encode_body(enc.requested_replace_metadata("CLUSTER", [[enc.slice_info("p", "f")]]),
                           "HoodieRequestedReplaceMetadata", "avro", 9)
    inflight = enc.encode_body(enc.commit_metadata([], "CLUSTER"), "HoodieCommitMetadata", "avro", 9)
    done = enc.encode_body(enc.commit_metadata([], "CLUSTER", replaced_file_ids={"p": ["f"]}),
                           "HoodieReplaceCommitMetadata", "avro", 9)
    row = ae.lsm_instant_row(ae.InstantBodies(t, c, {State.REQUESTED: ("clustering", plan),
                                                     State.INFLIGHT: ("clustering", b""),
                                                     State.COMPLETED: ("replacecommit", done)}))
    assert (row["action"], row["plan"], row["metadata"]) == ("replacecommit", plan, done)
    row = ae.lsm_instant_row(ae.InstantBodies(t, c, {State.REQUESTED: ("replacecommit", plan),
                                                     State.INFLIGHT: ("replacecommit", inflight),
                                                     State.COMPLETED: ("replacecommit", done)}))
    assert row["plan"] == inflight  # a non-empty inflight body overwrites the plan
    row = ae.lsm_instant_row(ae.InstantBodies(t, c, {State.REQUESTED: ("commit", b""),
                                                     State.COMPLETED: ("commit", done)}))
    assert row["plan"] is None
    with pytest.raises(ValueError):
        ae.lsm_instant_row(ae.InstantBodies(t, None, {State.REQUESTED: ("commit", b"")}))


@pytest.mark.parametrize("version", [6, 8, 9])
def test_round_trip_through_archived_reader(tmp_path: Path, version: int) -> None:
    """Archive in several runs (multi-file layout 1, multi-level layout 2), read back with the
    archived-timeline reader: every instant, state, time and decoded body equals what was written."""
    unified = pytest.importorskip("hudi_core.formats.timeline.unified")
    scratch, table = _table(tmp_path, version, table_type="COPY_ON_WRITE" if version == 8 else "MERGE_ON_READ")
    instants = list(table.timeline)
    expected = {}
    for inst in instants[:18]:
        for f in inst.files:
            data = scratch.path(f"{table.properties.timeline_dir}/{f.name}").read_bytes()
            expected[(inst.requested_time, f.state)] = decode_body(data, f.action, f.state).record
    for k in range(0, 18, 2):
        aw.archive_instants(scratch, table.properties, instants[k:k + 2], new_file=k % 4 == 0, compaction_batch=3)
    reopened = open_table(scratch.uri)
    archived = unified.load_archived_timeline(ReadOnlyStorage(scratch.uri), reopened.properties)
    assert [f for f in archived.findings if f.severity.name == "ERROR"] == []
    got = list(archived)
    assert [i.requested_time for i in got] == [i.requested_time for i in instants[:18]]
    assert {i.state for i in got} == {State.COMPLETED}
    assert [i.completion_time for i in got] == [i.completion_time for i in instants[:18]]
    for inst in got:
        body = archived.body(inst, State.COMPLETED)
        assert body is not None and body.record == expected[(inst.requested_time, State.COMPLETED)]
    if version == 6:
        assert len(list(scratch.path(".hoodie/archived").glob(".commits_.archive.*"))) >= 2
    else:
        names = [p.name for p in scratch.path(".hoodie/timeline/history").glob("*.parquet")]
        assert {n[-9] for n in names} >= {"0", "1"}
