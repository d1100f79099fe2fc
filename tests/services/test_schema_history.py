"""Schema history: every schema a table's commits recorded, active and archived, and the changes.

Built scenario tables (schema_evolution, schema_narrowing) at table versions 6 (layout 1) and 9 (layout 2) give
exact change lists, archived commits included; the Spark-written fixtures give real recorded schemas; damaged
bodies and schemas become findings; the CLI's JSON, text and CSV; the bulk reader against one body at a time;
Hudi's compatibility rules one by one; the scenario builder's data files; the dashboard's Schema page.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURE_NAMES, own_answer

from hudi_core import open_table
from hudi_core.cli import main as cli_main
from hudi_core.dashboard import PAGES_DIR
from hudi_core.errors import Severity
from hudi_core.formats.timeline import encode
from hudi_core.formats.timeline.bodies import decode_body
from hudi_core.formats.timeline.commit_schemas import commit_schemas_of_bodies
from hudi_core.formats.timeline.instant import State
from hudi_core.scenarios.build import BuildResult, build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.model import ScenarioError, label_to_time, scenario_from_dict
from hudi_core.services.schema_history import commit_schema_rows, schema_history
from hudi_core.services.schema_rules import diff, flatten, parse_schema, reads


def t(n: int) -> str:
    return label_to_time(f"t{n}")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, BuildResult]:
    root = tmp_path_factory.mktemp("schema")
    out = {}
    for name in ("schema_evolution", "schema_narrowing"):
        for version in (6, 9):
            out[f"{name}_v{version}"] = build_scenario(load_builtin(name), root / f"{name}-v{version}", version)
    return out


def change_tuples(history: Any) -> list[tuple[Any, ...]]:
    return [(c.instant, c.action, c.operation, c.source, c.field, c.change.value, c.from_, c.to, c.breaks_readers)
            for c in history.changes]


#: schema_evolution's changes: t3..t5 are archived by the scenario's archival, t6 is active.
EVOLUTION_CHANGES = [
    (t(3), "commit", "ALTER_SCHEMA", "archived", "discount", "added", None, "double", False),
    (t(4), "commit", "UPSERT", "archived", "qty", "type_promoted", "int", "long", False),
    (t(5), "commit", "ALTER_SCHEMA", "archived", "note", "removed", "string", None, False),
    (t(6), "commit", "UPSERT", "active", "address.zip", "type_promoted", "int", "long", False),
    (t(6), "commit", "UPSERT", "active", "address.country", "added", None, "string", False),
]


# -- built tables: exact answers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 9])
def test_evolution_changes_active_and_archived(built: dict[str, BuildResult], version: int) -> None:
    result = built[f"schema_evolution_v{version}"]
    table = open_table(result.uri)
    history = schema_history(table)
    assert change_tuples(history) == EVOLUTION_CHANGES
    assert [(v.instant, v.action, v.operation, v.source, v.commits, v.last_instant) for v in history.versions] == [
        (None, None, None, "table_config", 2, t(2)),
        (t(3), "commit", "ALTER_SCHEMA", "archived", 1, t(3)),
        (t(4), "commit", "UPSERT", "archived", 1, t(4)),
        (t(5), "commit", "ALTER_SCHEMA", "archived", 1, t(5)),
        (t(6), "commit", "UPSERT", "active", 4, t(10)),
    ]
    assert (history.commits, history.commits_with_schema) == (9, 9)
    assert history.findings == [] and [f for f in table.findings if f.severity is not Severity.INFO] == []
    # Where each version was read: hoodie.properties, the archive (layout 1 log file / layout 2 LSM file), the
    # completed instant file.
    paths = [v.path for v in history.versions]
    assert paths[0] == f"{result.uri}/.hoodie/hoodie.properties"
    archive = ".hoodie/archived/.commits_.archive.1_" if version == 6 else ".hoodie/timeline/history/"
    assert all(p.startswith(f"{result.uri}/{archive}") for p in paths[1:4]), paths
    t6 = result.writer.find_instant(t(6))
    assert t6 is not None
    assert paths[4] == f"{result.uri}/{result.writer.timeline_dir}/{t6.file_names[-1]}"
    # The flattened fields of the last version, nested ones dotted.
    last = {f.name: (f.type, f.nullable, f.default, f.has_default) for f in history.versions[-1].fields}
    assert last == {
        "id": ("string", True, None, True), "value": ("string", True, None, True), "ts": ("long", True, None, True),
        "region": ("string", True, None, True), "qty": ("long", False, 0, True),
        "address": ("record", False, None, False), "address.city": ("string", False, "", True),
        "address.zip": ("long", False, 0, True), "address.country": ("string", False, "NL", True),
        "discount": ("double", True, None, True)}
    # The schema the first version holds is the create schema, as written in hoodie.properties.
    assert json.loads(history.versions[0].schema) == json.loads(result.writer.properties["hoodie.table.create.schema"])


@pytest.mark.parametrize("version", [6, 9])
def test_bulk_rows_equal_one_body_at_a_time(built: dict[str, BuildResult], version: int) -> None:
    """The bulk reader's operation and schema of every commit equal what the timelines' own readers decode."""
    table = open_table(built[f"schema_evolution_v{version}"].uri)
    rows = commit_schema_rows(table).to_pylist()
    unified = table.unified_timeline()
    expected = []
    for inst in unified.instants:
        if inst.is_completed and inst.completed_action in ("commit", "deltacommit", "replacecommit"):
            meta = unified.commit_metadata(inst)
            assert meta is not None
            expected.append((inst.requested_time, inst.completed_action, inst.source, meta.operation_type,
                             meta.extra_metadata.get("schema")))
    assert [(r["requested_time"], r["action"], r["source"], r["operation_type"], r["schema"]) for r in rows] == expected
    assert [r["source"] for r in rows].count("archived") == 5


@pytest.mark.parametrize("version", [6, 9])
def test_narrowing_and_other_breaking_changes_are_warnings(built: dict[str, BuildResult], version: int,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    result = built[f"schema_narrowing_v{version}"]
    history = schema_history(open_table(result.uri))
    assert change_tuples(history) == [
        (t(2), "deltacommit", "UPSERT", "active", "qty", "type_narrowed", "long", "int", True),
        (t(3), "deltacommit", "ALTER_SCHEMA", "active", "note", "made_required", "nullable", "required", True),
        (t(3), "deltacommit", "ALTER_SCHEMA", "active", "note", "default_removed", "null", None, False),
        (t(4), "deltacommit", "UPSERT", "active", "code", "added", None, "string", True),
    ]
    files = {k: f"{result.uri}/{result.writer.timeline_dir}/{result.writer.find_instant(t(k)).file_names[-1]}"
             for k in (2, 3, 4)}
    assert [(f.severity, f.code, f.path) for f in history.findings] == [
        (Severity.WARNING, "schema_change_breaks_readers", files[2]),
        (Severity.WARNING, "schema_change_breaks_readers", files[3]),
        (Severity.WARNING, "schema_change_breaks_readers", files[4])]
    assert history.findings[0].message.startswith(
        f"{t(2)} deltacommit (UPSERT) recorded a schema where qty is type narrowed (long -> int): ")
    # Warnings: the answer is complete (exit 0), the findings travel in the JSON.
    assert cli_main(["schema-history", result.uri, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["incomplete"] is False
    assert [(f["severity"], f["code"], f["path"]) for f in doc["findings"]] == [
        ("warning", "schema_change_breaks_readers", files[k]) for k in (2, 3, 4)]


# -- Spark-written fixtures --------------------------------------------------------------------------------------


def test_fixture_schemas_from_spark_commits(table_path: Callable[[str], Path]) -> None:
    """The schemas Spark recorded: the create schema (`["long","null"]`, no default) and the commits' (`["null",
    "long"]` with a null default) differ only as Spark's Avro conversion writes a schema: one version, no change,
    said once on the create schema."""
    history = schema_history(open_table(str(table_path("v6_trips_8i1u"))))
    assert [(v.instant, v.action, v.operation, v.source, v.commits, v.last_instant) for v in history.versions] == [
        (None, None, None, "table_config", 2, "20250331030645735")]
    assert history.versions[0].note == (
        "the writer's schema (first recorded by 20250331030642808) gives 6 nullable fields `default: null`, as "
        "Spark's Avro conversion does: the same schema, no change")
    assert [(f.name, f.type, f.nullable, f.has_default) for f in history.versions[0].fields] == [
        ("ts", "long", True, False), ("uuid", "string", True, False), ("rider", "string", True, False),
        ("driver", "string", True, False), ("fare", "double", True, False), ("city", "string", True, False)]
    assert history.changes == [] and history.findings == []


def test_fixture_nested_and_logical_types(table_path: Callable[[str], Path]) -> None:
    history = schema_history(open_table(str(table_path("v6_nonpartitioned"))))
    fields = {f.name: (f.type, f.nullable) for f in history.versions[-1].fields}
    assert fields["decimalField"] == ("decimal(10,5)", True)
    assert fields["dateField"] == ("date", True)
    assert fields["timestampField"] == ("timestamp-micros", True)
    assert fields["byteField"] == ("int", True) and fields["binaryField"] == ("bytes", True)
    assert fields["arrayField"] == ("array", True)
    assert fields["arrayField.element"] == ("record", True)
    assert fields["arrayField.element.arr_struct_f1"] == ("string", True)
    assert fields["mapField.value"] == ("record", True)
    assert fields["mapField.value.map_field_value_struct_f2"] == ("boolean", True)
    assert fields["structField.child_struct.child_field1"] == ("double", True)
    assert [(v.instant, v.commits, v.last_instant) for v in history.versions] == [(None, 2, "20240418173551906")]


def test_fixture_v9_commits_of_one_schema(table_path: Callable[[str], Path]) -> None:
    history = schema_history(open_table(str(table_path("v9_txns_simple_meta"))))
    assert (history.commits, history.commits_with_schema) == (13, 13)
    (only,) = history.versions
    assert (only.source, only.commits, only.last_instant) == ("table_config", 13, "20260307162620509")
    assert only.note.startswith("the writer's schema (first recorded by 20260307162557587) gives 13 nullable fields")
    fields = {f.name: f.type for f in only.fields}
    assert fields["amount"] == "decimal(15,2)" and fields["txn_datetime"] == "timestamp-micros"
    assert history.changes == []


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_tables_never_evolved_have_no_schema_change(name: str, fixtures_dir: Path) -> None:
    """Spark-written fixture tables whose schema never changed: one version, no change, whatever Spark's Avro
    conversion did to the writer's schema (null defaults, null's place in a union)."""
    tables = sorted(p.parent.parent for p in (fixtures_dir / name).rglob("hoodie.properties")
                    if p.parent.name == ".hoodie" and "metadata" not in p.parts)
    assert tables
    for base in tables:
        history = schema_history(open_table(str(base)))
        assert history.changes == [] and len(history.versions) == 1, base


# -- damage: findings, never guesses -----------------------------------------------------------------------------


def test_unreadable_bodies_are_findings_and_the_answer_is_incomplete(
        built: dict[str, BuildResult], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An active body and an archived one that do not decode: each is a finding naming its file; the history is
    read around them (the archived t4's change is then seen at t5) and the answer is incomplete (exit 1)."""
    src = built["schema_evolution_v9"]
    table = tmp_path / "damaged"
    shutil.copytree(src.path, table)
    timeline = table / ".hoodie" / "timeline"
    t7 = src.writer.find_instant(t(7))
    t7_file = timeline / t7.file_names[-1]
    t7_file.write_bytes(b"Obj\x01 not an Avro container")
    lsm = next((timeline / "history").glob("*.parquet"))
    rows = pq.read_table(lsm)
    metadata = [b"Obj\x01 garbage" if r == t(4) else m for r, m in zip(rows["instantTime"].to_pylist(),
                                                                         rows["metadata"].to_pylist(), strict=True)]
    rows = rows.set_column(rows.schema.get_field_index("metadata"), "metadata", pa.array(metadata, pa.binary()))
    pq.write_table(rows, lsm)
    assert cli_main(own_answer(["schema-history", str(table), "--format", "json"])) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["incomplete"] is True
    codes = {(f["code"], f["path"]) for f in doc["findings"]}
    assert ("body_decode_failed", str(t7_file)) in codes
    assert ("archived_body_decode_failed", str(lsm)) in codes
    assert [(c["instant"], c["field"], c["change"]) for c in doc["changes"]] == [
        (t(3), "discount", "added"), (t(5), "qty", "type_promoted"), (t(5), "note", "removed"),
        (t(6), "address.zip", "type_promoted"), (t(6), "address.country", "added")]
    assert doc["commits"] == 7


def test_a_schema_that_does_not_parse_is_an_error_finding(built: dict[str, BuildResult], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    src = built["schema_evolution_v6"]
    table = tmp_path / "bad-schema"
    shutil.copytree(src.path, table)
    t6_file = table / ".hoodie" / src.writer.find_instant(t(6)).file_names[-1]
    stat = t6_file.stat()
    body = json.loads(t6_file.read_text())
    body["extraMetadata"]["schema"] = '{"type": "record", "name": "broken", "fields": [{"name": "x"}]}'
    t6_file.write_text(json.dumps(body))
    os.utime(t6_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # layout 1: the completion time is the mtime
    assert cli_main(own_answer(["schema-history", str(table), "--format", "json"])) == 1
    doc = json.loads(capsys.readouterr().out)
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert [(f["code"], f["path"]) for f in errors] == [("commit_schema_unreadable", str(t6_file))]
    assert errors[0]["message"].startswith(f"{t(6)} commit: its extraMetadata.schema is not an Avro schema")
    # t6's changes are seen at t7, the next readable schema.
    assert [(c["instant"], c["field"]) for c in doc["changes"]][-2:] == [(t(7), "address.zip"),
                                                                         (t(7), "address.country")]


# -- the CLI -----------------------------------------------------------------------------------------------------


def test_cli_json_text_csv_and_range(built: dict[str, BuildResult], capsys: pytest.CaptureFixture[str]) -> None:
    uri = built["schema_evolution_v9"].uri
    assert cli_main(["schema-history", uri, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["commits", "commits_with_schema", "since", "until", "schemas", "changes", "findings",
                         "incomplete"]
    assert list(doc["schemas"][1]) == ["instant", "completion_time", "action", "operation", "source", "path",
                                       "commits", "last_instant", "note", "fields"]
    assert list(doc["schemas"][1]["fields"][0]) == ["name", "type", "nullable", "default", "has_default"]
    assert doc["changes"][1] == {
        "instant": t(4), "action": "commit", "operation": "UPSERT", "source": "archived", "field": "qty",
        "change": "type_promoted", "from": "int", "to": "long", "breaks_readers": False,
        "reason": "an Avro type promotion", "previous_instant": t(3)}
    assert cli_main(["schema-history", uri, "--since", t(4), "--until", t(5), "--format", "json"]) == 0
    ranged = json.loads(capsys.readouterr().out)
    assert [s["instant"] for s in ranged["schemas"]] == [t(4), t(5)]
    assert [(c["instant"], c["change"]) for c in ranged["changes"]] == [(t(4), "type_promoted"), (t(5), "removed")]
    assert cli_main(["schema-history", uri, "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "instant,action,operation,source,field,change,from,to,breaks_readers"
    assert lines[2] == f"{t(4)},commit,UPSERT,archived,qty,type_promoted,int,long,False"
    assert cli_main(["schema-history", uri]) == 0
    text = capsys.readouterr().out
    assert text.startswith("schemas (9 of 9 commits recorded one)")
    assert "address.zip type_promoted, address.country added" in text


# -- the bulk reader against decode_body -------------------------------------------------------------------------


def test_bulk_reader_equals_decode_body_on_random_commit_metadata() -> None:
    rng = random.Random(29)
    bodies: list[bytes] = []
    actions: list[str] = []
    for k in range(120):
        version = rng.choice([6, 8, 9])
        action = rng.choice(["commit", "deltacommit", "replacecommit"])
        extra: dict[str, str] = {}
        for key in rng.sample(["checkpoint", "schema", "deltastreamer.checkpoint.key", "x"], rng.randint(0, 4)):
            extra[key] = f'{{"type":"record","name":"r{k}","fields":[]}}' if key == "schema" else f"v{k}-{key}"
        stats = [encode.write_stat(f"p{j}", f"fg-{j}", f"fg-{j}_0-1-1_{k}.parquet", num_writes=j)
                 for j in range(rng.randint(0, 3))]
        record = encode.commit_metadata(stats, rng.choice([None, "UPSERT", "INSERT", "ALTER_SCHEMA"]),
                                        extra_metadata=extra,
                                        replaced_file_ids={"p0": ["fg-9"]} if action == "replacecommit" else None)
        fmt, record_type = encode.body_format_for(version, action, State.COMPLETED)
        bodies.append(encode.encode_body(record, record_type, fmt, version))
        actions.append(action)
    bodies.append(b"Obj\x01 damaged")
    actions.append("commit")
    bodies.append(b"{ not json")
    actions.append("deltacommit")
    table, errors = commit_schemas_of_bodies(bodies, actions)
    expected_rows, expected_errors = [], {}
    for i, (data, action) in enumerate(zip(bodies, actions, strict=True)):
        try:
            record = decode_body(data, action, State.COMPLETED).record
        except Exception as exc:  # the message is compared
            expected_errors[i] = str(exc)
            continue
        expected_rows.append({"body": i, "operation_type": record.operation_type,
                              "schema": record.extra_metadata.get("schema")})
    assert table.to_pylist() == expected_rows
    assert errors == expected_errors and sorted(errors) == [120, 121]


# -- Hudi's rules, one by one ------------------------------------------------------------------------------------


def _record(*fields: dict[str, Any], name: str = "r") -> Any:
    return parse_schema({"type": "record", "name": name, "namespace": "hoodie.t", "fields": list(fields)})


def _one(old_type: Any, new_type: Any, **new_extra: Any) -> list[tuple[str, str, Any, Any, bool]]:
    old = _record({"name": "f", "type": old_type})
    new = _record({"name": "f", "type": new_type, **new_extra})
    return [(c.field, c.change.value, c.from_, c.to, c.breaks_readers) for c in diff(old, new)]


@pytest.mark.parametrize(("old", "new", "kind"), [
    ("int", "long", "type_promoted"), ("int", "float", "type_promoted"), ("int", "double", "type_promoted"),
    ("long", "float", "type_promoted"), ("long", "double", "type_promoted"), ("float", "double", "type_promoted"),
    ("string", "bytes", "type_promoted"), ("bytes", "string", "type_promoted"),
    ("int", "string", "type_promoted"), ("double", "string", "type_promoted"),  # Hudi's own: numbers as strings
    ("long", "int", "type_narrowed"), ("double", "float", "type_narrowed"), ("string", "int", "type_narrowed"),
    ("boolean", "int", "type_changed"), ("string", "boolean", "type_changed"),
])
def test_primitive_type_changes(old: str, new: str, kind: str) -> None:
    [(field, change, src, dst, breaks)] = _one(old, new)
    assert (field, change, src, dst, breaks) == ("f", kind, old, new, kind != "type_promoted")
    old_type, new_type = (_record({"name": "f", "type": x}).fields[0].type for x in (old, new))
    assert reads(old_type, new_type) == (kind == "type_promoted")


def test_decimals_enums_logical_types_and_nullability() -> None:
    dec = {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
    assert _one(dec, {**dec, "precision": 12}) == [("f", "type_promoted", "decimal(10,2)", "decimal(12,2)", False)]
    assert _one(dec, {**dec, "precision": 12, "scale": 4})[0][1] == "type_promoted"
    assert _one(dec, {**dec, "precision": 8})[0][:2] == ("f", "type_narrowed")
    assert _one(dec, {**dec, "precision": 11, "scale": 1})[0][:2] == ("f", "type_narrowed")  # scale lost
    enum = {"type": "enum", "name": "e", "symbols": ["A", "B"]}
    assert _one(enum, {**enum, "symbols": ["A", "B", "C"]})[0][1:] == ("type_promoted", "enum(A,B)", "enum(A,B,C)",
                                                                       False)
    assert _one(enum, {**enum, "symbols": ["A"]})[0][1] == "type_narrowed"
    assert _one({"type": "int", "logicalType": "date"}, "int") == [("f", "logical_type_changed", "date", "int", False)]
    assert _one("int", ["null", "int"], default=None) == [("f", "made_nullable", "required", "nullable", False),
                                                          ("f", "default_added", None, "null", False)]
    assert _one(["null", "int"], "long") == [("f", "made_required", "nullable", "required", True),
                                              ("f", "type_promoted", "int", "long", False)]


def test_fields_added_removed_renamed_nested_and_meta_fields_ignored() -> None:
    old = _record({"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
                  {"name": "a", "type": {"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}]}},
                  {"name": "tags", "type": {"type": "array", "items": "int"}},
                  {"name": "props", "type": {"type": "map", "values": {"type": "record", "name": "P", "fields": [
                      {"name": "unit", "type": "string"}]}}},
                  {"name": "old_name", "type": "string"}, {"name": "gone", "type": "string"})
    new = _record({"name": "a", "type": {"type": "record", "name": "A", "fields": [
                      {"name": "x", "type": "long"}, {"name": "y", "type": "string"},
                      {"name": "z", "type": ["null", "string"], "default": None}]}},
                  {"name": "tags", "type": {"type": "array", "items": "long"}},
                  {"name": "props", "type": {"type": "map", "values": {"type": "record", "name": "P", "fields": [
                      {"name": "unit", "type": "int"}]}}},
                  {"name": "new_name", "type": "string", "aliases": ["old_name"]},
                  {"name": "n", "type": "int", "default": 0})
    assert [(c.field, c.change.value, c.from_, c.to, c.breaks_readers) for c in diff(old, new)] == [
        ("a.x", "type_promoted", "int", "long", False),
        ("a.y", "added", None, "string", True),  # required, no default: older records have no value for it
        ("a.z", "added", None, "string", False),
        ("tags.element", "type_promoted", "int", "long", False),
        ("props.value.unit", "type_narrowed", "string", "int", True),
        ("new_name", "renamed", "old_name", "new_name", False),
        ("n", "added", None, "int", False),
        ("gone", "removed", "string", None, False),
    ]
    assert [f.name for f in flatten(old)][:4] == ["_hoodie_commit_time", "a", "a.x", "tags"]
    assert [f.name for f in flatten(old)][4:7] == ["tags.element", "props", "props.value"]


# -- the scenario builder ----------------------------------------------------------------------------------------


def test_built_data_files_and_commits_carry_the_evolved_schema(built: dict[str, BuildResult]) -> None:
    result = built["schema_evolution_v9"]
    t10 = [p for p in (result.path / "region=us").glob(f"*_{t(10)}.parquet")]
    assert len(t10) == 2
    arrow = pq.read_schema(t10[0])
    assert arrow.field("qty").type == pa.int64()
    assert arrow.field("address").type == pa.struct([pa.field("city", pa.string(), nullable=False),
                                                    pa.field("zip", pa.int64(), nullable=False),
                                                    pa.field("country", pa.string(), nullable=False)])
    assert "note" not in arrow.names and arrow.field("discount").type == pa.float64()
    avro = json.loads(arrow.metadata[b"parquet.avro.schema"])
    assert [f["name"] for f in avro["fields"]][5:] == ["id", "value", "ts", "region", "qty", "address", "discount"]
    # The ALTER TABLE commits: no data, the new schema.
    table = open_table(result.uri)
    t5 = table.unified_timeline().get(t(5))
    meta = table.unified_timeline().commit_metadata(t5)
    assert (meta.operation_type, meta.write_stats()) == ("ALTER_SCHEMA", [])
    assert "note" not in {f["name"] for f in json.loads(meta.extra_metadata["schema"])["fields"]}
    # MOR: the narrowing's log block carries the schema it was written with.
    narrowing = built["schema_narrowing_v9"]
    from hudi_core.formats.logfile.reader import LogFileReader

    logs = sorted((narrowing.path / "region=us").glob(f".*_{t(2)}.log.*"))
    [block] = LogFileReader(open_table(narrowing.uri).storage, f"region=us/{logs[0].name}").scan().blocks
    qty = next(f for f in json.loads(block.schema)["fields"] if f["name"] == "qty")
    assert qty["type"] == "int"


@pytest.mark.parametrize(("change", "message"), [
    ({"promote": {"qty": "int"}}, "is not a promotion Hudi reads (use narrow)"),
    ({"narrow": {"qty": "double"}}, "is a promotion (use promote)"),
    ({"drop": ["ts"]}, "the builder's own columns"),
    ({"drop": ["nope"]}, "drop: no column nope"),
    ({"add": [{"name": "qty", "type": "int"}]}, "add: column qty exists"),
])
def test_schema_changes_that_do_not_apply_are_refused(change: dict[str, Any], message: str, tmp_path: Path) -> None:
    data = {"name": "x", "partitions": [], "columns": [{"name": "qty", "type": "long", "default": 0}],
            "steps": [{"op": "insert", "at": "t1", "file_groups": {"fg1": {"keys": ["k1"]}}},
                      {"op": "evolve_schema", "at": "t2", **change}]}
    with pytest.raises(ScenarioError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_scenario(scenario_from_dict(data, "x.json"), tmp_path / "x", 9)
    with pytest.raises(ScenarioError, match="unknown field"):
        scenario_from_dict({**data, "steps": [{"op": "evolve_schema", "at": "t1", "widen": {}}]}, "x.json")


# -- the dashboard -----------------------------------------------------------------------------------------------

SCHEMA_PAGE = str(PAGES_DIR / "8_schema.py")


@pytest.fixture()
def ui_env(built: dict[str, BuildResult], tmp_path: Path) -> Any:
    import streamlit as st

    mp = pytest.MonkeyPatch()
    mp.setenv("HUDI_INSPECTOR_CACHE", str(tmp_path / "cache"))
    mp.setenv("HUDI_INSPECTOR_ROOTS", str(built["schema_evolution_v9"].path.parent))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    mp.undo()


def open_schema_page(table: Path, **params: str) -> Any:
    from streamlit.testing.v1 import AppTest

    from hudi_core import dashboard

    at = AppTest.from_file(str(dashboard.APP), default_timeout=90)
    at.query_params["table"] = str(table)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(SCHEMA_PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_schema_page_history_and_diff_of_two_picked_versions(built: dict[str, BuildResult], ui_env: Any) -> None:
    at = open_schema_page(built["schema_evolution_v9"].path, schema_from="table_config", schema_to=t(8))
    history = at.dataframe[0].value
    assert history["instant"].tolist() == ["table_config", t(3), t(4), t(5), t(6)]
    assert history["changed"].tolist() == ["(created with)", "discount added", "qty type_promoted", "note removed",
                                           "address.zip type_promoted, address.country added"]
    assert history["source"].tolist() == ["table_config", "archived", "archived", "archived", "active"]
    # t8 in the link picks the version in effect then (t6's); the diff from the create schema.
    assert (at.selectbox(key="schema_from").value, at.selectbox(key="schema_to").value) == ("table_config", t(6))
    diff_frame = at.dataframe[1].value
    assert list(zip(diff_frame["field"], diff_frame["change"], strict=True)) == [
        ("qty", "type_promoted"), ("address.zip", "type_promoted"), ("address.country", "added"),
        ("discount", "added"), ("note", "removed")]
    assert not at.warning
    at.selectbox(key="schema_from").select(t(4)).run()
    assert at.query_params["schema_from"] == t(4)
    assert list(at.dataframe[1].value["field"]) == ["address.zip", "address.country", "note"]


def test_schema_page_shows_breaking_changes_as_warnings(built: dict[str, BuildResult], ui_env: Any) -> None:
    at = open_schema_page(built["schema_narrowing_v9"].path)
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 3 and warnings[0].startswith(f"{t(2)} deltacommit (UPSERT) recorded a schema where qty is "
                                                         "type narrowed (long -> int)")
    history = at.dataframe[0].value
    assert history["breaks_readers"].tolist() == [False, True, True, True]
    # The default diff: the last two versions, the required field added without a default.
    assert list(at.dataframe[1].value[["field", "change", "breaks_readers"]].itertuples(index=False, name=None)) == [
        ("code", "added", True)]


# -- invalid schemas: a finding, never a change -----------------------------------------------------------------


def _with_t6_schema(src: BuildResult, table: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of `src` whose t6 commit records its own schema edited by `edit`; returns the t6 file."""
    shutil.copytree(src.path, table)
    t6_file = table / ".hoodie" / src.writer.find_instant(t(6)).file_names[-1]
    stat = t6_file.stat()
    body = json.loads(t6_file.read_text())
    schema = json.loads(body["extraMetadata"]["schema"])
    edit(schema)
    body["extraMetadata"]["schema"] = json.dumps(schema)
    t6_file.write_text(json.dumps(body))
    os.utime(t6_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # layout 1: the completion time is the mtime
    return t6_file


def _first_plain_field(schema: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in schema["fields"] if not f["name"].startswith("_hoodie"))


INVALID_SCHEMAS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "duplicate field": (lambda s: s["fields"].append(dict(_first_plain_field(s))), "two fields named"),
    "decimal precision a string": (
        lambda s: s["fields"].append({"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                                                 "precision": "10", "scale": 2}}),
        "decimal precision '10'"),
    "decimal scale above precision": (
        lambda s: s["fields"].append({"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                                                 "precision": 4, "scale": 6}}),
        "decimal scale 6"),
    "fixed size a string": (
        lambda s: s["fields"].append({"name": "blob", "type": {"type": "fixed", "name": "blob8", "size": "8"}}),
        "has size '8'"),
    "long default of 2^70": (
        lambda s: s["fields"].append({"name": "big", "type": "long", "default": 2 ** 70}), "not a long"),
    "int default a string": (
        lambda s: s["fields"].append({"name": "small", "type": ["int", "null"], "default": "1"}), "not a int"),
}


@pytest.mark.parametrize("case", list(INVALID_SCHEMAS))
def test_an_invalid_schema_is_a_finding_not_a_change(built: dict[str, BuildResult], tmp_path: Path, case: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    edit, words = INVALID_SCHEMAS[case]
    src = built["schema_evolution_v6"]
    assert cli_main(["schema-history", str(src.path), "--format", "json"]) == 0
    sound = json.loads(capsys.readouterr().out)
    t6_file = _with_t6_schema(src, tmp_path / "t", edit)
    assert cli_main(["schema-history", str(tmp_path / "t"), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert [(f["code"], f["path"]) for f in errors] == [("commit_schema_unreadable", str(t6_file))]
    assert words in errors[0]["message"], errors[0]["message"]
    assert doc["incomplete"] is True
    # No change is attributed to the invalid schema: t6's own changes are seen at t7.
    assert not [c for c in doc["changes"] if c["instant"] == t(6)]
    assert {(c["field"], c["change"]) for c in doc["changes"]} <= {(c["field"], c["change"])
                                                                    for c in sound["changes"]}


def test_a_lone_surrogate_in_a_schema_prints_escaped(built: dict[str, BuildResult], tmp_path: Path) -> None:
    import subprocess
    import sys

    src = built["schema_evolution_v6"]
    _with_t6_schema(src, tmp_path / "t", lambda s: _first_plain_field(s).__setitem__("doc", "bad \ud800 doc")
                    or s["fields"].append({"name": "odd\udc80name", "type": ["null", "string"], "default": None}))
    for fmt in ("table", "json", "csv"):
        done = subprocess.run([sys.executable, "-m", "hudi_core", "schema-history", str(tmp_path / "t"),
                               "--format", fmt], capture_output=True, timeout=120,
                              env={**os.environ, "PYTHONIOENCODING": "utf-8"})
        assert done.returncode in (0, 1), (fmt, done.stderr)
        assert b"unexpected" not in done.stderr and b"Traceback" not in done.stderr, (fmt, done.stderr)
        assert b"odd" in done.stdout, fmt
        done.stdout.decode("utf-8")  # valid UTF-8: the surrogate is escaped, not written raw
