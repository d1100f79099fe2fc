"""The table configuration: every `hoodie.properties` key with its value, meaning and
documented default, unknown keys marked, and the differences from `hoodie.properties.backup`
(`hudi_core.io.table_config`, `hudi-inspect info --config`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURE_NAMES, unzip_table

from hudi_core.cli import main
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.io.table_config import (
    KEY_DOCS,
    key_doc,
    parse_java_properties,
    read_table_configuration,
    table_configuration,
)
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin


def _config_of(base: Path):
    return read_table_configuration(ReadOnlyStorage(str(base)))


def _tables_under(base: Path) -> list[Path]:
    """The table and its metadata table, when it has one."""
    return [base, *([base / ".hoodie" / "metadata"] if (base / ".hoodie" / "metadata" / ".hoodie").is_dir() else [])]


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_every_fixture_key_is_documented(table_path, name: str) -> None:
    for base in _tables_under(table_path(name)):
        config = _config_of(base)
        raw = parse_java_properties((base / ".hoodie" / "hoodie.properties").read_text())
        assert [e.key for e in config.entries] == list(raw)
        assert [e.value for e in config.entries] == list(raw.values())
        assert config.unknown_keys == [], base  # every key a fixture has is documented
        assert all(e.known and e.meaning for e in config.entries)
        assert config.has_backup is False and config.backup_differences == [] and config.findings == []
        assert {e.differs_from_backup for e in config.entries} == {None}


def test_metadata_table_fixture_keys(trips_v8_zip: Path, tmp_path: Path) -> None:
    base = unzip_table(trips_v8_zip, tmp_path / "v8")
    for table in _tables_under(base):
        assert _config_of(table).unknown_keys == []
    entries = {e.key: e for e in _config_of(base / ".hoodie" / "metadata").entries}
    assert (entries["hoodie.table.base.file.format"].value, entries["hoodie.table.base.file.format"].default) == (
        "HFILE", "PARQUET")
    assert entries["hoodie.table.keygenerator.type"].value == "HOODIE_TABLE_METADATA"
    data = {e.key: e for e in _config_of(base).entries}
    assert data["hoodie.table.metadata.partitions"].value == (
        "column_stats,files,partition_stats,record_index,secondary_index_rider_idx")
    assert data["hoodie.table.version"].to_dict() == {
        "key": "hoodie.table.version", "value": "8", "meaning": KEY_DOCS["hoodie.table.version"].meaning,
        "default": "9", "known": True, "differs_from_backup": None}


def test_fixture_concrete_values(table_path) -> None:
    entries = {e.key: e for e in _config_of(table_path("v6_nonpartitioned")).entries}
    assert entries["hoodie.table.type"].value == "COPY_ON_WRITE"
    assert entries["hoodie.timeline.layout.version"].value == "1"
    assert (entries["hoodie.archivelog.folder"].value, entries["hoodie.archivelog.folder"].default) == (
        "archived", "archived")
    v9 = {e.key: e for e in _config_of(table_path("v9_txns_simple_meta")).entries}
    assert (v9["hoodie.table.type"].value, v9["hoodie.table.type"].default) == ("MERGE_ON_READ", "COPY_ON_WRITE")
    assert v9["hoodie.timeline.path"].value == v9["hoodie.timeline.path"].default == "timeline"
    assert "timezone" not in "".join(v9)  # LOCAL by default: the key is simply absent


def test_keys_the_parser_reads_are_documented() -> None:
    for key in ("hoodie.table.version", "hoodie.timeline.layout.version", "hoodie.table.type",
                "hoodie.table.partition.fields", "hoodie.table.timeline.timezone", "hoodie.table.name",
                "hoodie.table.initial.version", "hoodie.timeline.path", "hoodie.timeline.history.path",
                "hoodie.archivelog.folder", "hoodie.table.recordkey.fields", "hoodie.table.base.file.format",
                "hoodie.table.metadata.partitions", "hoodie.table.metadata.partitions.inflight",
                "hoodie.parquet.compression.codec"):
        assert key_doc(key) is not None, key
    assert key_doc("hoodie.record.merge.property.delete.key") is not None  # a key family
    assert key_doc("hoodie.tabel.type") is None


def test_unknown_keys_and_the_backup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = build_scenario(load_builtin("hudi7779_case_b"), tmp_path / "t", 9)
    props = Path(r.uri) / ".hoodie" / "hoodie.properties"
    original = props.read_text()
    # An interrupted update: the backup holds the old file, the new one adds, changes and drops keys.
    (props.parent / "hoodie.properties.backup").write_text(original)
    changed = (original.replace("hoodie.table.version=9", "hoodie.table.version=8")
               .replace("hoodie.populate.meta.fields=true\n", "")
               + "hoodie.table.metadata.partitions=files\nmy.team.owner=data-eng\n")
    props.write_text(changed)
    config = _config_of(Path(r.uri))
    assert [d.to_dict() for d in config.backup_differences] == [
        {"key": "hoodie.populate.meta.fields", "change": "removed", "value": None, "backup_value": "true"},
        {"key": "hoodie.table.metadata.partitions", "change": "added", "value": "files", "backup_value": None},
        {"key": "hoodie.table.version", "change": "changed", "value": "8", "backup_value": "9"},
        {"key": "my.team.owner", "change": "added", "value": "data-eng", "backup_value": None}]
    entries = {e.key: e for e in config.entries}
    assert entries["my.team.owner"].to_dict() == {"key": "my.team.owner", "value": "data-eng", "meaning": None,
                                                   "default": None, "known": False, "differs_from_backup": True}
    assert entries["hoodie.table.version"].differs_from_backup is True
    assert entries["hoodie.table.name"].differs_from_backup is False
    assert config.unknown_keys == ["my.team.owner"]

    assert main(["info", r.uri, "--config", "--format", "json"]) == 2  # the verdict warns of the leftover backup
    out = json.loads(capsys.readouterr().out)
    assert out["config"] == [e.to_dict() for e in config.entries]
    assert out["backup_differences"] == [d.to_dict() for d in config.backup_differences]
    assert main(["info", r.uri, "--format", "json"]) == 2
    assert "config" not in json.loads(capsys.readouterr().out)
    assert main(["info", r.uri, "--config"]) == 2
    text = capsys.readouterr().out
    assert "my.team.owner" in text and "differs from hoodie.properties.backup in 4 key(s)" in text
    assert main(["info", r.uri, "--config", "--format", "csv"]) == 2
    assert capsys.readouterr().out.splitlines()[0] == "key,value,default,known,differs_from_backup,meaning"

    # The main file unreadable: Hudi reads the backup, and so does the configuration (a finding says why).
    props.write_bytes(b"hoodie.table.name=\\uZZZZ\n")
    fallback = _config_of(Path(r.uri))
    assert fallback.source.endswith("hoodie.properties.backup")
    assert {e.key: e.value for e in fallback.entries} == parse_java_properties(original)
    assert [f.code for f in fallback.findings] == ["table_config_unreadable"]


def test_configuration_from_parsed_properties() -> None:
    config = table_configuration({"hoodie.table.name": "t", "x.y": "1"}, {"hoodie.table.name": "t"})
    assert [(e.key, e.known, e.differs_from_backup) for e in config.entries] == [
        ("hoodie.table.name", True, False), ("x.y", False, True)]
    assert config.to_dict()["backup_differences"] == [
        {"key": "x.y", "change": "added", "value": "1", "backup_value": None}]
