"""Body encoders (`hudi_core.formats.timeline.encode`): every record type round-trips through
`decode_body`, and real fixture bodies re-encode to the same bytes (up to Avro's sync marker)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pytest

from hudi_core.formats.timeline import encode as enc
from hudi_core.formats.timeline.bodies import BodyFormat, decode_body
from hudi_core.formats.timeline.instant import State, parse_instant_file_name
from hudi_core.formats.timeline.records import (
    CleanerPlan,
    CleanMetadata,
    CommitMetadata,
    CompactionPlan,
    RequestedReplaceMetadata,
    RestoreMetadata,
    RestorePlan,
    RollbackMetadata,
    RollbackPlan,
    SavepointMetadata,
)

T1, T2, T3 = "20260101000000000", "20260101000100000", "20260101000200000"


def _stats() -> list[dict]:
    return [
        enc.write_stat("p1", "fg-1", f"fg-1_0-1-1_{T2}.parquet", prev_commit=T1, num_writes=7, num_inserts=2,
                       num_updates=5, file_size=4321),
        enc.write_stat("p2", "fg-2", f".fg-2_{T2}.log.1_0-1-1", prev_commit=T1, num_writes=3, num_updates=3,
                       file_size=800, base_file=f"fg-2_0-1-1_{T1}.parquet",
                       log_files=[f".fg-2_{T2}.log.1_0-1-1"], log_version=1, total_log_blocks=1),
    ]


CASES = {
    "commit": ("commit", State.COMPLETED, "HoodieCommitMetadata",
               lambda: enc.commit_metadata(_stats(), "UPSERT", extra_metadata={"schema": "{}"})),
    "replace": ("replacecommit", State.COMPLETED, "HoodieReplaceCommitMetadata",
                lambda: enc.commit_metadata(_stats()[:1], "INSERT_OVERWRITE", replaced_file_ids={"p1": ["fg-0"]})),
    "requested_replace": ("replacecommit", State.REQUESTED, "HoodieRequestedReplaceMetadata",
                          lambda: enc.requested_replace_metadata(
                              "CLUSTER", [[enc.slice_info("p1", "fg-1", f"p1/fg-1_0-1-1_{T1}.parquet")],
                                          [enc.slice_info("p2", "fg-2", None, [".fg-2_x.log.1_0-1-1"])]])),
    "compaction": ("compaction", State.REQUESTED, "HoodieCompactionPlan",
                   lambda: enc.compaction_plan([enc.compaction_operation(
                       "p2", "fg-2", T1, f"fg-2_0-1-1_{T1}.parquet", [f".fg-2_{T1}.log.1_0-1-1"])])),
    "cleaner_plan": ("clean", State.REQUESTED, "HoodieCleanerPlan",
                     lambda: enc.cleaner_plan({"p1": [f"file:/t/p1/fg-1_0-1-1_{T1}.parquet"]},
                                              earliest_instant_to_retain=(T2, "commit", "COMPLETED"),
                                              last_completed_commit=T2,
                                              extra_metadata={"savepointed_timestamps": T1})),
    "clean": ("clean", State.COMPLETED, "HoodieCleanMetadata",
              lambda: enc.clean_metadata(T3, {"p1": [f"fg-1_0-1-1_{T1}.parquet"]}, earliest_commit_to_retain=T2,
                                         last_completed_commit=T2)),
    "rollback_plan": ("rollback", State.REQUESTED, "HoodieRollbackPlan",
                      lambda: enc.rollback_plan((T2, "deltacommit"), [enc.rollback_request(
                          "p2", "fg-2", T1, [f"p2/.fg-2_{T2}.log.1_0-1-1"], {"x": 1})])),
    "rollback": ("rollback", State.COMPLETED, "HoodieRollbackMetadata",
                 lambda: enc.rollback_metadata(T3, [(T2, "deltacommit")], {"p2": [f".fg-2_{T2}.log.1_0-1-1"]},
                                               rollback_log_files={"p2": {"a.log": 12}})),
    "restore_plan": ("restore", State.REQUESTED, "HoodieRestorePlan",
                     lambda: enc.restore_plan([(T2, "commit")], savepoint_to_restore=T1)),
    "restore": ("restore", State.COMPLETED, "HoodieRestoreMetadata",
                lambda: enc.restore_metadata(T3, {T2: [enc.rollback_metadata(T3, [(T2, "commit")], {"p1": ["a"]})]},
                                             [(T2, "commit")])),
    "savepoint": ("savepoint", State.COMPLETED, "HoodieSavepointMetadata",
                  lambda: enc.savepoint_metadata({"p1": [f"fg-1_0-1-1_{T1}.parquet"]}, savepointed_at=1767225600)),
}

TYPED = {
    "commit": CommitMetadata, "replace": CommitMetadata, "requested_replace": RequestedReplaceMetadata,
    "compaction": CompactionPlan, "cleaner_plan": CleanerPlan, "clean": CleanMetadata,
    "rollback_plan": RollbackPlan, "rollback": RollbackMetadata, "restore_plan": RestorePlan,
    "restore": RestoreMetadata, "savepoint": SavepointMetadata,
}


@pytest.mark.parametrize("table_version", [6, 9])
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_record_type_round_trips(case: str, table_version: int) -> None:
    action, state, record_type, build = CASES[case]
    record = build()
    fmt, expected_type = enc.body_format_for(table_version, action, state)
    assert expected_type == record_type
    data = enc.encode_body(record, record_type, fmt, table_version)
    decoded = decode_body(data, action, state)
    assert decoded.record_type == record_type
    assert isinstance(decoded.record, TYPED[case])
    expected = TYPED[case].from_dict(enc.conform_record(record, record_type, table_version)) \
        if record_type != "HoodieReplaceCommitMetadata" else CommitMetadata.from_dict(record, True)
    assert decoded.record == expected
    if fmt == "avro":
        assert data[:4] == b"Obj\x01"
        reader = fastavro.reader(io.BytesIO(data))
        assert set(reader.metadata) == {"avro.schema"}  # Java omits avro.codec for the null codec
        assert reader.writer_schema["name"].endswith(record_type)


def test_typed_values_survive() -> None:
    data = enc.encode_body(CASES["commit"][3](), "HoodieCommitMetadata", "avro", 9)
    meta = decode_body(data, "commit", State.COMPLETED).record
    stats = {s.file_id: s for s in meta.write_stats()}
    assert stats["fg-1"].path == f"p1/fg-1_0-1-1_{T2}.parquet"
    assert stats["fg-1"].num_writes == 7 and stats["fg-1"].file_size_in_bytes == 4321
    assert stats["fg-2"].log_files == (f".fg-2_{T2}.log.1_0-1-1",)
    assert stats["fg-2"].base_file == f"fg-2_0-1-1_{T1}.parquet"
    plan = decode_body(enc.encode_body(CASES["cleaner_plan"][3](), "HoodieCleanerPlan", "avro", 9), "clean",
                       State.REQUESTED).record
    assert plan.earliest_instant_to_retain.timestamp == T2
    assert plan.savepointed_timestamps == [T1]
    assert plan.file_paths_to_delete["p1"][0].file_path.endswith(f"fg-1_0-1-1_{T1}.parquet")


def test_v6_commit_metadata_is_jackson_json() -> None:
    fmt, rtype = enc.body_format_for(6, "commit", State.COMPLETED)
    assert (fmt, rtype) == ("json", "HoodieCommitMetadata")
    data = enc.encode_body(CASES["commit"][3](), rtype, fmt, 6)
    text = data.decode()
    assert text.startswith('{\n  "partitionToWriteStats" : {\n    "p1" : [ {\n      "fileId" : "fg-1",')
    assert text.endswith('"operationType" : "UPSERT"\n}')
    assert decode_body(data, "commit", State.COMPLETED).format is BodyFormat.JSON


def test_body_format_table() -> None:
    assert enc.body_format_for(6, "commit", State.REQUESTED) == ("empty", None)
    assert enc.body_format_for(6, "commit", State.INFLIGHT) == ("json", "HoodieCommitMetadata")
    assert enc.body_format_for(9, "deltacommit", State.INFLIGHT) == ("avro", "HoodieCommitMetadata")
    assert enc.body_format_for(6, "replacecommit", State.REQUESTED) == ("avro", "HoodieRequestedReplaceMetadata")
    assert enc.body_format_for(6, "clean", State.INFLIGHT) == ("avro", "HoodieCleanerPlan")
    assert enc.body_format_for(9, "clean", State.INFLIGHT) == ("empty", None)
    assert enc.body_format_for(9, "clustering", State.INFLIGHT) == ("empty", None)
    assert enc.body_format_for(9, "compaction", State.INFLIGHT) == ("empty", None)
    assert enc.body_format_for(9, "savepoint", State.COMPLETED) == ("avro", "HoodieSavepointMetadata")


def test_archive_entry_schema_inlines_each_named_type_once() -> None:
    schema = json.loads(enc.writer_schema_json("HoodieArchivedMetaEntry", 6))
    text = json.dumps(schema)
    for name in ("HoodieWriteStat", "HoodieInstantInfo", "HoodieRollbackMetadata", "HoodieCompactionOperation"):
        assert text.count(f'"name": "{name}"') == 1, name
    names = [f["name"] for f in schema["fields"]]
    assert names[:6] == ["hoodieCommitMetadata", "hoodieCleanMetadata", "hoodieCompactionMetadata",
                         "hoodieRollbackMetadata", "hoodieSavePointMetadata", "commitTime"]
    assert names[-3:] == ["HoodieInflightReplaceMetadata", "hoodieIndexCommitMetadata", "stateTransitionTime"]
    fastavro.parse_schema(schema)


def _fixture_bodies(fixtures_dir: Path) -> list[tuple[Path, bytes, str, State]]:
    out = []
    for path in sorted(fixtures_dir.rglob("*")):
        if not path.is_file() or "/.hoodie/" not in str(path) or "/metadata/" in str(path):
            continue
        layout = 2 if path.parent.name == "timeline" else 1
        parsed = parse_instant_file_name(path.name, layout)
        data = path.read_bytes()
        if parsed is None or not data:
            continue
        out.append((path, data, parsed.action, parsed.state))
    return out


def test_fixture_bodies_reencode_byte_for_byte(fixtures_dir: Path) -> None:
    """Decode each real body, encode it again with our writer schemas: the same bytes (Avro: up
    to the random sync marker Java picks) and the same typed record."""
    bodies = _fixture_bodies(fixtures_dir)
    assert len(bodies) >= 50
    kinds = set()
    for path, data, action, state in bodies:
        decoded = decode_body(data, action, state)
        version = 6 if "/v6_" in str(path) else 9
        if decoded.format is BodyFormat.AVRO:
            record = next(iter(fastavro.reader(io.BytesIO(data))))
            out = enc.encode_body(record, decoded.record_type, "avro", version)
            out = out.replace(out[-16:], data[-16:])
        else:
            out = enc.encode_body(json.loads(data), decoded.record_type, "json", version)
        assert out == data, path
        assert decode_body(out, action, state).record == decoded.record
        kinds.add((decoded.record_type, decoded.format))
    assert ("HoodieCommitMetadata", BodyFormat.JSON) in kinds
    assert ("HoodieReplaceCommitMetadata", BodyFormat.JSON) in kinds
    assert ("HoodieRollbackPlan", BodyFormat.AVRO) in kinds
    assert ("HoodieCompactionPlan", BodyFormat.AVRO) in kinds


def test_conform_drops_unknown_and_fills_defaults() -> None:
    record = {"partitionToWriteStats": {"p": [{"fileId": "f", "numWrites": "5", "recordsStats": {"val": None}}]},
              "bogus": 1}
    out = enc.conform_record(record, "HoodieCommitMetadata")
    assert "bogus" not in out and out["version"] == 1
    stat = out["partitionToWriteStats"]["p"][0]
    assert stat["numWrites"] == 5 and stat["path"] is None and "recordsStats" not in stat


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_encoder_matches_fastavro(case: str) -> None:
    """`encode_datum` (the compiled encoder every Avro body and archive entry goes through) writes
    the same bytes as fastavro, for the record itself and wrapped in a `HoodieArchivedMetaEntry`."""
    action, state, record_type, build = CASES[case]
    record = enc.conform_record(build(), record_type, 9)
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, enc.parsed_writer_schema(record_type, 9), record)
    assert enc.encode_datum(record, record_type, 9) == buf.getvalue()
    field = {"HoodieCommitMetadata": "hoodieCommitMetadata", "HoodieReplaceCommitMetadata":
             "hoodieReplaceCommitMetadata", "HoodieRequestedReplaceMetadata": "hoodieRequestedReplaceMetadata",
             "HoodieCompactionPlan": "hoodieCompactionPlan", "HoodieCleanerPlan": "hoodieCleanerPlan",
             "HoodieCleanMetadata": "hoodieCleanMetadata", "HoodieRollbackMetadata": "hoodieRollbackMetadata",
             "HoodieSavepointMetadata": "hoodieSavePointMetadata"}.get(record_type)
    if field is None:
        return
    entry = enc.conform_record({"commitTime": T1, "actionType": action, "actionState": state.name, field: record},
                               "HoodieArchivedMetaEntry", 6)
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, enc.parsed_writer_schema("HoodieArchivedMetaEntry", 6), entry)
    assert enc.encode_datum(entry, "HoodieArchivedMetaEntry", 6) == buf.getvalue()
