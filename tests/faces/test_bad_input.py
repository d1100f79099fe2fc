"""Bad input becomes a clear message naming the file; loading continues where it can."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hudi_core import open_table
from hudi_core.cli import main
from hudi_core.errors import PropertiesError, TableNotFoundError, UnsupportedTableVersion
from hudi_core.inspect import TableInspector


@pytest.fixture
def v9_copy(table_path, tmp_path: Path) -> Path:
    dst = tmp_path / "t9"
    shutil.copytree(table_path("v9_txns_simple_meta"), dst)
    return dst


@pytest.fixture
def v6_copy(table_path, tmp_path: Path) -> Path:
    dst = tmp_path / "t6"
    shutil.copytree(table_path("v6_nonpartitioned_rollback"), dst)
    return dst


def test_path_that_is_not_a_table(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match=r"no \.hoodie folder"):
        open_table(str(tmp_path))
    with pytest.raises(TableNotFoundError, match="does not exist"):
        open_table(str(tmp_path / "nope"))


def test_missing_properties(v6_copy: Path) -> None:
    (v6_copy / ".hoodie" / "hoodie.properties").unlink()
    with pytest.raises(PropertiesError) as info:
        open_table(str(v6_copy))
    assert "hoodie.properties is missing" in str(info.value)
    assert str(v6_copy) in str(info.value)


def test_unreadable_properties_falls_back_to_backup(v6_copy: Path) -> None:
    props = v6_copy / ".hoodie" / "hoodie.properties"
    shutil.copy(props, props.with_name("hoodie.properties.backup"))
    props.write_bytes(b"\x00\x01garbage without keys")
    table = open_table(str(v6_copy))
    assert table.properties.version == 6
    assert [f.code for f in table.findings] == ["properties_from_backup"]
    assert "hoodie.properties" in table.findings[0].path


def test_garbage_properties_without_backup(v6_copy: Path) -> None:
    (v6_copy / ".hoodie" / "hoodie.properties").write_bytes(b"\x00\x01garbage")
    with pytest.raises(PropertiesError, match="has no Hudi table keys"):
        open_table(str(v6_copy))


def test_unknown_table_version(v6_copy: Path) -> None:
    props = v6_copy / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.version=6", "hoodie.table.version=12"))
    with pytest.raises(UnsupportedTableVersion) as info:
        open_table(str(v6_copy))
    assert "hoodie.table.version=12" in str(info.value)
    assert "hoodie.properties" in str(info.value)


def test_truncated_avro_body_is_a_finding_and_the_rest_loads(v9_copy: Path) -> None:
    target = v9_copy / ".hoodie/timeline/20260307162614221_20260307162615208.replacecommit"
    target.write_bytes(target.read_bytes()[:60])
    table = open_table(str(v9_copy))
    rows = TableInspector(table).instants().to_pylist()
    assert len(rows) == 15
    broken = [r for r in rows if r["errors"]]
    assert [r["requested_time"] for r in broken] == ["20260307162614221"]
    assert target.name in broken[0]["errors"][0]
    assert "Avro" in broken[0]["errors"][0]
    assert [f.code for f in table.findings] == ["body_decode_failed"]
    assert table.findings[0].path.endswith(target.name)
    # The other replacecommit still decodes.
    assert table.timeline.commit_metadata(table.timeline.get("20260307162619269")).operation_type == "CLUSTER"


def test_invalid_json_body(v6_copy: Path) -> None:
    target = v6_copy / ".hoodie" / "20250126060846931.deltacommit"
    target.write_text('{"partitionToWriteStats": {')
    table = open_table(str(v6_copy))
    inst = table.timeline.get("20250126060846931")
    errors = table.timeline.body_error(inst)
    assert len(errors) == 1 and "invalid JSON" in errors[0].message
    assert errors[0].path.endswith("20250126060846931.deltacommit")
    assert table.timeline.commit_metadata(table.timeline.get("20250126040823628")) is not None


def test_zero_byte_completed_files(v6_copy: Path) -> None:
    (v6_copy / ".hoodie" / "20250126060846931.deltacommit").write_bytes(b"")
    (v6_copy / ".hoodie" / "20250126040936578.rollback").write_bytes(b"")
    table = open_table(str(v6_copy))
    findings = {f.path.rsplit("/", 1)[-1]: f for f in table.timeline.findings}
    assert findings["20250126060846931.deltacommit"].severity.value == "warning"
    assert findings["20250126040936578.rollback"].severity.value == "error"
    assert "zero-byte" in findings["20250126040936578.rollback"].message
    meta = table.timeline.commit_metadata(table.timeline.get("20250126060846931"))
    assert meta is None  # empty body: no metadata, no files named


def test_unparseable_names_under_timeline(v9_copy: Path) -> None:
    tl_dir = v9_copy / ".hoodie/timeline"
    (tl_dir / "20260307162614221.replacecommit.weird").write_bytes(b"")
    (tl_dir / "notes.txt").write_text("hello")
    table = open_table(str(v9_copy))
    assert len(table.timeline) == 15
    codes = sorted((f.severity.value, f.path.rsplit("/", 1)[-1]) for f in table.findings)
    assert codes == [("info", "notes.txt"), ("warning", "20260307162614221.replacecommit.weird")]


def test_garbage_body_bytes(v9_copy: Path) -> None:
    target = v9_copy / ".hoodie/timeline/20260307162618152.compaction.requested"
    target.write_bytes(b"\x89PNG garbage")
    table = open_table(str(v9_copy))
    errors = table.timeline.body_error(table.timeline.get("20260307162618152"))
    assert "neither empty, JSON nor an Avro container" in errors[0].message


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("hudi-inspect: ") and str(tmp_path) in err
    assert "Traceback" not in err
