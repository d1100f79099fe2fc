"""The metadata table's files partition on damaged copies of the v8 fixture: every record and HFile is checked as
read, so damage is a finding naming the file (and the answer is marked incomplete), never "no files" with exit 0
nor a phantom file.

The base HFile of the latest files slice (`files-0000-0_23-1133-3302_20251220210130942.hfile`, one data block,
keys ``__all_partitions__``, ``city=chennai``, ``city=san_francisco``, ``city=sao_paulo``) is written again by
the package's writer (uncompressed, Hudi's own file info), then its bytes are damaged.
"""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import fastavro
import pytest
from conftest import own_answer, unzip_table

from hudi_core.cli import main
from hudi_core.formats.hfile import HFileReader, write_hfile
from hudi_core.formats.mdt.records import MetadataRecordError, decode_raw, files_record_of

BASE = "files-0000-0_23-1133-3302_20251220210130942.hfile"
WRITER_INFO = {"hfile.LASTKEY", "hfile.AVG_KEY_LEN", "hfile.AVG_VALUE_LEN", "hfile.MAX_TAGS_LEN",
               "hfile.TAGS_COMPRESSED", "hfile.CREATE_TIME_TS", "KEY_VALUE_VERSION", "MAX_MEMSTORE_TS_KEY"}


@pytest.fixture()
def trips(trips_v8_zip: Path, tmp_path: Path) -> Path:
    return unzip_table(trips_v8_zip, tmp_path)


def base_of(table: Path) -> Path:
    return table / ".hoodie" / "metadata" / "files" / BASE


def rewrite(path: Path, entries: list[tuple[str, bytes]] | None = None, schema: str | None = None) -> bytes:
    """The base file written again uncompressed (so its keys are visible bytes), its entries and schema replaced
    where given; returns the new bytes (also written to `path`)."""
    reader = HFileReader.from_bytes(path.read_bytes())
    info = {k: v for k, v in reader.file_info.items() if k not in WRITER_INFO}
    if schema is not None:
        info["schema"] = schema.encode()
    data = write_hfile(list(reader.scan()) if entries is None else entries, compression="NONE", file_info=info,
                       meta_blocks={n: reader.meta_block(n) or b"" for n in reader.meta_block_names},
                       create_time_ms=struct.unpack(">q", reader.file_info["hfile.CREATE_TIME_TS"])[0],
                       allow_duplicates=True)
    path.write_bytes(data)
    return data


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(own_answer([*argv, "--format", "json", "--engine", "local"]))
    out = capsys.readouterr().out
    return code, json.loads(out)


def chennai(capsys: pytest.CaptureFixture[str], table: Path) -> tuple[int, Any]:
    return cli(capsys, "metadata-files", str(table), "--partition", "city=chennai")


def test_the_rewritten_base_reads_as_the_original(trips: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = chennai(capsys, trips)
    rewrite(base_of(trips))
    assert chennai(capsys, trips) == before and before[0] == 0 and before[1]["partitions"][0]["files"]


def test_keys_out_of_order_are_a_finding_not_no_files(trips: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = rewrite(base_of(trips))
    # "city=chennai" becomes "city=zhennai": it now sorts after the keys that follow it in the block.
    row = b"\x00\x0ccity=chennai"  # the cell's row: its length, then the key
    assert data.count(row) == 1
    base_of(trips).write_bytes(data.replace(row, b"\x00\x0ccity=zhennai"))
    for argv in (["metadata-files", str(trips), "--partition", "city=chennai"], ["metadata-files", str(trips)],
                 ["fsview", str(trips), "--partition", "city=sao_paulo"]):
        code, answer = cli(capsys, *argv)
        findings = answer["findings"] if isinstance(answer, dict) else []
        if not findings:  # list-shaped answers carry their findings on stderr: ask for the envelope
            code, answer = cli(capsys, *argv, "--envelope")
            findings = answer["findings"]
        unreadable = [f for f in findings if f["code"] == "metadata_base_unreadable"]
        assert code == 1 and len(unreadable) == 1, (argv, findings)
        assert unreadable[0]["path"].endswith(BASE) and "keys out of order" in unreadable[0]["message"]
        assert answer["incomplete"] is True
    # The file itself: a key lookup is one line naming the file, exit 1, never "absent".
    code = main(["hfile", str(base_of(trips)), "--key", "city=sao_paulo", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 1 and "keys out of order" in captured.err and captured.err.count("\n") == 1, captured


def one_key_per_block(path: Path) -> bytes:
    """The base file written again uncompressed with one key per data block (the keys in file order:
    ``__all_partitions__``, ``city=chennai``, ``city=san_francisco``, ``city=sao_paulo``); returns the bytes."""
    reader = HFileReader.from_bytes(path.read_bytes())
    info = {k: v for k, v in reader.file_info.items() if k not in WRITER_INFO}
    data = write_hfile(list(reader.scan()), compression="NONE", file_info=info, block_size=1,
                       meta_blocks={n: reader.meta_block(n) or b"" for n in reader.meta_block_names},
                       create_time_ms=struct.unpack(">q", reader.file_info["hfile.CREATE_TIME_TS"])[0])
    assert HFileReader.from_bytes(data).data_block_count == reader.entry_count == 4
    return data


def test_a_key_moved_into_the_block_before_is_a_finding_not_no_files(
        trips: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One key per data block; "city=chennai" (block 1) renamed "city=sao_aaa", a key of block 2's range (after its
    index key "city=san_francisco"): block 1 now ends after block 2 begins, and a lookup of "city=sao_aaa" lands in
    block 2, where it is not. Every answer about it is the whole-file read's error naming the base file, exit 1."""
    data = one_key_per_block(base_of(trips))
    row = b"\x00\x0ccity=chennai"
    assert data.count(row) == 2  # the data block's cell, then the block index's key (left as it was)
    base_of(trips).write_bytes(data.replace(row, b"\x00\x0ccity=sao_aaa", 1))
    for argv in (["metadata-files", str(trips), "--partition", "city=sao_aaa"],
                 ["fsview", str(trips), "--partition", "city=sao_aaa", "--envelope"]):
        code, answer = cli(capsys, *argv)
        unreadable = [f for f in answer["findings"] if f["code"] == "metadata_base_unreadable"]
        assert code == 1 and answer["incomplete"] is True and len(unreadable) == 1, (argv, answer["findings"])
        assert unreadable[0]["path"].endswith(BASE), unreadable
        assert ("keys out of order across data blocks: 'city=san_francisco' after 'city=sao_aaa', the last key of "
                "the data block at ") in unreadable[0]["message"], unreadable
    code = main(["hfile", str(base_of(trips)), "--key", "city=sao_aaa", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == "" and captured.err.count("\n") == 1, captured
    assert BASE in captured.err and "across data blocks" in captured.err, captured


def test_a_key_misplaced_into_an_earlier_block_is_a_finding_not_no_files(
        trips: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One key per data block; "city=chennai" renamed "city=zhennai" in its block (the blocks now overlap): a lookup
    of it lands in the last block, where it is not. The listing says the base file is damaged (exit 1), as the
    whole-file read does, never "no files"."""
    data = one_key_per_block(base_of(trips))
    row = b"\x00\x0ccity=chennai"
    assert data.count(row) == 2  # the data block's cell, then the block index's key (left as it was)
    base_of(trips).write_bytes(data.replace(row, b"\x00\x0ccity=zhennai", 1))
    code, answer = cli(capsys, "metadata-files", str(trips), "--partition", "city=zhennai")
    unreadable = [f for f in answer["findings"] if f["code"] == "metadata_base_unreadable"]
    assert code == 1 and answer["incomplete"] is True and len(unreadable) == 1, answer["findings"]
    assert unreadable[0]["path"].endswith(BASE) and "across data blocks" in unreadable[0]["message"]
    code = main(["hfile", str(base_of(trips)), "--key", "city=zhennai", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 1 and "across data blocks" in captured.err and captured.err.count("\n") == 1, captured


def test_a_repeated_key_is_a_finding_and_lookups_agree_with_whole_file_reads(
        trips: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reader = HFileReader.from_bytes(base_of(trips).read_bytes())
    entries = list(reader.scan())
    values = dict(entries)
    # A second "city=chennai" cell carrying sao_paulo's files: a phantom listing if the last copy won.
    at = [k for k, _ in entries].index("city=chennai")
    sound = chennai(capsys, trips)[1]["partitions"]
    rewrite(base_of(trips), [*entries[:at + 1], ("city=chennai", values["city=sao_paulo"]), *entries[at + 1:]])
    by_key = chennai(capsys, trips)
    whole = cli(capsys, "metadata-files", str(trips))
    for code, answer in (by_key, whole):
        repeated = [f for f in answer["findings"] if f["code"] == "metadata_key_repeated"]
        assert code == 1 and answer["incomplete"] is True and len(repeated) == 1, answer["findings"]
        assert repeated[0]["path"].endswith(BASE) and "'city=chennai'" in repeated[0]["message"]
    # Both reads use the first copy: the listing of city=chennai is the sound one.
    assert by_key[1]["partitions"] == sound
    assert [p for p in whole[1]["partitions"] if p["partition"] == "city=chennai"] == sound


def _retyped_schema(schema: str) -> str:
    """The writer schema with HoodieMetadataFileInfo.size declared a string."""
    doc = json.loads(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("name") == "HoodieMetadataFileInfo":
                for f in node["fields"]:
                    if f["name"] == "size":
                        f["type"] = "string"
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    return json.dumps(doc)


def test_a_field_of_an_unexpected_type_is_a_finding_naming_the_file(trips: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    reader = HFileReader.from_bytes(base_of(trips).read_bytes())
    schema = reader.file_info["schema"].decode()
    retyped = _retyped_schema(schema)
    assert retyped != json.loads(json.dumps(schema))
    parsed = fastavro.parse_schema(json.loads(retyped))
    entries = []
    for key, value in reader.scan():
        record = decode_raw(value, schema)
        for info in (record.get("filesystemMetadata") or {}).values():
            info["size"] = str(info["size"])
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, record)
        entries.append((key, buf.getvalue()))
    rewrite(base_of(trips), entries, retyped)
    code, answer = chennai(capsys, trips)
    unreadable = [f for f in answer["findings"] if f["code"] == "metadata_base_unreadable"]
    assert code == 1 and answer["incomplete"] is True and len(unreadable) == 1, answer["findings"]
    assert unreadable[0]["path"].endswith(BASE) and "not a byte count" in unreadable[0]["message"]


@pytest.mark.parametrize("row, words", [
    ({"key": 7, "type": 2, "filesystemMetadata": {}}, "not a string"),
    ({"key": "p", "type": "2", "filesystemMetadata": {}}, "not an integer"),
    ({"key": "p", "type": True, "filesystemMetadata": {}}, "not an integer"),
    ({"key": "p", "type": 2, "filesystemMetadata": "x"}, "not a map"),
    ({"key": "p", "type": 2, "filesystemMetadata": {"f": {"size": "12", "isDeleted": False}}}, "not a byte count"),
    ({"key": "p", "type": 2, "filesystemMetadata": {"f": {"size": -1, "isDeleted": False}}}, "not a byte count"),
    ({"key": "p", "type": 2, "filesystemMetadata": {"f": {"size": 1, "isDeleted": "no"}}}, "not a boolean"),
    ({"key": "p", "type": 2, "filesystemMetadata": {"f": "x"}}, "not a HoodieMetadataFileInfo"),
    (["not", "a", "record"], "not list"),
])
def test_records_of_avro_blocks_are_type_checked(row: Any, words: str) -> None:
    with pytest.raises(MetadataRecordError, match=words):
        files_record_of(row)
    sound = files_record_of({"key": "p", "type": 2, "filesystemMetadata": {"f": {"size": 3, "isDeleted": True}}})
    assert sound.key == "p" and sound.entries["f"].size == 3 and sound.entries["f"].is_deleted


# -- damaged or missing log files of the files partition: findings in metadata-files, fsview and SQL ---------------

SLICE_LOG = ".files-0000-0_20251220210130911.log.1_3-1149-3338"  # the one log file the latest slice reads


def files_folder(table: Path) -> Path:
    return table / ".hoodie" / "metadata" / "files"


def codes_everywhere(capsys: pytest.CaptureFixture[str], table: Path) -> list[tuple[int, set[str]]]:
    """(exit code, finding codes) of metadata-files, fsview (envelope) and the SQL findings view."""
    out = []
    for argv in (["metadata-files", str(table)], ["fsview", str(table), "--envelope"]):
        code, answer = cli(capsys, *argv)
        out.append((code, {f["code"] for f in answer["findings"]}))
    code, rows = cli(capsys, "sql", str(table), "SELECT code FROM findings")
    out.append((code, {r["code"] for r in rows}))
    return out


def test_an_empty_log_file_is_a_warning_everywhere(trips: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sound = chennai(capsys, trips)
    (files_folder(trips) / SLICE_LOG).write_bytes(b"")
    everywhere = codes_everywhere(capsys, trips)
    for _, codes in everywhere:
        assert "metadata_log_empty" in codes, codes
    # metadata-files answers as Hudi reads it (0); fsview's storage check finds the files the empty log would have
    # listed missing from the metadata table's listing: drift, a problem of the table (2); the SQL view lists it.
    # (Codes of what each command read: with the table's verdict all three exit 2.)
    assert [code for code, _ in everywhere] == [0, 2, 0]
    code, answer = chennai(capsys, trips)
    assert [f["code"] for f in answer["findings"]] == ["metadata_log_empty"]
    assert answer["findings"][0]["path"].endswith(SLICE_LOG) and answer["findings"][0]["severity"] == "warning"
    # The answer is what Hudi reads without the log's block: the base file's listing.
    assert code == 0 and answer["partitions"][0]["partition"] == "city=chennai"
    assert sound[1]["partitions"][0]["files"]


def test_a_deleted_log_file_is_an_error_and_the_answer_incomplete(trips: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    log = files_folder(trips) / SLICE_LOG
    log.unlink()
    log.symlink_to(trips / "gone")  # listed, then gone when read
    for code, codes in codes_everywhere(capsys, trips):
        assert code == 1 and "metadata_log_unreadable" in codes, codes
    code, answer = chennai(capsys, trips)
    assert code == 1 and answer["incomplete"] is True
    unreadable = next(f for f in answer["findings"] if f["code"] == "metadata_log_unreadable")
    assert unreadable["path"].endswith(SLICE_LOG)


def test_a_future_dated_log_file_is_a_warning(trips: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = chennai(capsys, trips)
    future = files_folder(trips) / ".files-0000-0_20991231000000000.log.1_0-1-1"
    future.write_bytes((files_folder(trips) / SLICE_LOG).read_bytes())
    for _, codes in codes_everywhere(capsys, trips):
        assert "metadata_log_after_latest" in codes, codes
    code, answer = chennai(capsys, trips)
    assert [f["code"] for f in answer["findings"]] == ["metadata_log_after_latest"]
    assert code == 0 and answer["partitions"] == before[1]["partitions"]  # not read, as Hudi does not read it


def test_a_truncated_base_hfile_is_in_the_findings_view(trips: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = base_of(trips)
    base.write_bytes(base.read_bytes()[: base.stat().st_size // 2])
    code, rows = cli(capsys, "sql", str(trips), "SELECT code, path FROM findings")
    assert code == 1 and {"code": "metadata_base_unreadable", "path": str(base)} in rows, rows


def test_a_log_block_field_of_an_unexpected_type_is_a_finding_naming_the_file(
        trips: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same retyping in the latest slice's log file, end to end: its HFile data block written again with every
    file size a string (its header's schema saying so) is a finding naming the log file, not an unexpected error;
    the answer says it is incomplete."""
    from hudi_core.formats.logfile.format import HeaderKey
    from hudi_core.formats.logfile.reader import read_log_blocks
    from hudi_core.formats.logfile.writer import encode_block
    from hudi_core.io.storage import ReadOnlyStorage

    folder = files_folder(trips)
    raw = (folder / SLICE_LOG).read_bytes()
    blocks = read_log_blocks(ReadOnlyStorage(str(folder)), SLICE_LOG).blocks
    rewritten, retyped = [], 0
    for block in blocks:
        data = raw[block.offset:block.end]
        if block.type_name == "HFILE_DATA_BLOCK" and block.schema:
            embedded = HFileReader.from_bytes(raw[block.content_offset:block.content_offset + block.content_length])
            new_schema = _retyped_schema(block.schema)
            parsed = fastavro.parse_schema(json.loads(new_schema))
            entries = []
            for key, value in embedded.scan():
                record = decode_raw(value, block.schema)
                for info in (record.get("filesystemMetadata") or {}).values():
                    info["size"] = str(info["size"])
                    retyped += 1
                buf = io.BytesIO()
                fastavro.schemaless_writer(buf, parsed, record)
                entries.append((key, buf.getvalue()))
            header = tuple((k, new_schema if k == int(HeaderKey.SCHEMA) else v) for k, v in block.header_entries)
            data = encode_block(int(block.type_ordinal or 0), header, write_hfile(entries, compression="NONE"),
                                block.footer_entries, int(block.format_version or 1))
        rewritten.append(data)
    assert retyped > 0
    (folder / SLICE_LOG).write_bytes(b"".join(rewritten))
    code, answer = chennai(capsys, trips)
    typed = [f for f in answer["findings"] if SLICE_LOG in f["path"]]
    assert typed, answer["findings"]
    assert all("unexpected" not in f["message"] for f in answer["findings"])
    assert any("not a byte count" in f["message"] for f in typed), typed
    assert code == 1 and answer["incomplete"] is True


def test_a_log_file_deleted_from_storage_is_an_error_naming_it(trips: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The latest slice's log file removed outright (not listed at all): the delta commit that wrote it names it in
    its commit metadata, so its loss is an error naming the file and the answer is incomplete, everywhere."""
    sound = codes_everywhere(capsys, trips)
    assert all("metadata_log_missing" not in codes for _, codes in sound)
    (files_folder(trips) / SLICE_LOG).unlink()
    for code, codes in codes_everywhere(capsys, trips):
        assert "metadata_log_missing" in codes, codes
        assert code in (1, 2)  # incomplete; fsview also finds the listing's drift (2 wins)
    code, answer = chennai(capsys, trips)
    missing = next(f for f in answer["findings"] if f["code"] == "metadata_log_missing")
    assert code == 1 and answer["incomplete"] is True and missing["path"].endswith(SLICE_LOG)
    assert "20251220210130911" in missing["message"] or "delta commit" in missing["message"]
