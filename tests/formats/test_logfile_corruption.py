"""Corrupt-block detection and resync, mirroring Java's `TestHoodieLogFormat` (spec `03` §1.8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hudi_core.formats.logfile.content import DeleteRecord, OrderingValue, decode_records
from hudi_core.formats.logfile.errors import LogFormatError
from hudi_core.formats.logfile.format import MAGIC, BlockType, pack_i32, pack_i64, parse_block_identifier
from hudi_core.formats.logfile.reader import (
    NO_MAGIC_AFTER,
    PAST_EOF,
    SIZE_MISMATCH,
    SIZE_OUT_OF_RANGE,
    TRUNCATED_SIZE,
    LogFileReader,
    read_log_blocks,
)
from hudi_core.formats.logfile.writer import (
    avro_data_block,
    bogus_size_block,
    delete_block,
    partial_block,
    rollback_block,
)
from hudi_core.io.storage import ReadOnlyStorage

SCHEMA = json.dumps({"type": "record", "name": "r", "fields": [
    {"name": "key", "type": "string"}, {"name": "n", "type": "long"}]})
NAME = ".f1-0_100.log.1_0-1-0"


def good(n: int = 3, instant: str = "100", ident: tuple[int, int] | None = None) -> bytes:
    return avro_data_block(instant, SCHEMA, [{"key": f"k{i}", "n": i} for i in range(n)], block_identifier=ident)


def scan(tmp_path: Path, data: bytes):
    (tmp_path / NAME).write_bytes(data)
    return read_log_blocks(ReadOnlyStorage(str(tmp_path)), NAME)


def kinds(result) -> list[str]:
    return ["corrupt" if b.corrupt else "good" for b in result.blocks]


def test_two_garbage_blocks_good_corrupt_good_corrupt_good(tmp_path: Path) -> None:
    """`testAppendAndReadOnCorruptedLog`: a partial block with a bogus size, twice, between good ones."""
    g = good()
    garbage1 = bogus_size_block(474, 400, b"\x01" * 50)
    garbage2 = bogus_size_block(1000, 500, b"\x02" * 10)
    data = g + garbage1 + g + garbage2 + g
    result = scan(tmp_path, data)
    assert result.error is None
    assert kinds(result) == ["good", "corrupt", "good", "corrupt", "good"]
    b = result.blocks
    # corrupt span: from just after the bad block's magic to the next magic (Java corruptedBlockSize)
    assert (b[1].offset, b[1].content_offset, b[1].end) == (len(g), len(g) + 6, len(g) + len(garbage1))
    assert b[1].size == len(garbage1) - 6
    assert b[1].corrupt_reason in (PAST_EOF, SIZE_MISMATCH)
    assert b[2].offset == len(g) + len(garbage1)  # reading resumed at the next magic
    assert b[4].end == len(data)
    reader = LogFileReader(ReadOnlyStorage(str(tmp_path)), NAME)
    assert [len(decode_records(reader, x)) for x in result.blocks if not x.corrupt] == [3, 3, 3]


def test_two_partial_blocks_in_a_row(tmp_path: Path) -> None:
    g = good()
    p1 = partial_block(good(5), 40)
    p2 = partial_block(good(7), 100)
    result = scan(tmp_path, g + p1 + p2 + g)
    assert kinds(result) == ["good", "corrupt", "corrupt", "good"]
    assert result.blocks[2].offset == len(g) + len(p1)
    assert result.blocks[3].offset == len(g) + len(p1) + len(p2)


def test_lone_magic(tmp_path: Path) -> None:
    """`testMissingBlockExceptMagicBytes`: only the magic was written before the crash."""
    g = good()
    result = scan(tmp_path, g + MAGIC + g)
    assert kinds(result) == ["good", "corrupt", "good"]
    corrupt = result.blocks[1]
    assert corrupt.size == 0 and corrupt.content_length == 0  # from after its magic straight to the next magic


@pytest.mark.parametrize("tail", [b"#", b"#HUDI", b"\x00\x01\x02", b"zzzzz"])
def test_short_garbage_tail_is_eof(tmp_path: Path, tail: bytes) -> None:
    g = good()
    result = scan(tmp_path, g + g + tail)
    assert result.error is None
    assert kinds(result) == ["good", "good"]


def test_size_past_end_is_corrupt(tmp_path: Path) -> None:
    g = good()
    data = g + MAGIC + pack_i64(10_000_000) + pack_i32(1) + pack_i32(3) + b"\x00" * 20
    result = scan(tmp_path, data)
    assert kinds(result) == ["good", "corrupt"]
    assert result.blocks[1].corrupt_reason == PAST_EOF
    assert result.blocks[1].end == len(data)


def test_size_mismatch_is_corrupt_and_resumes(tmp_path: Path) -> None:
    g = good()
    bad = bytearray(good(4))
    bad[-8:] = pack_i64(12345)  # trailing length no longer S + 6
    result = scan(tmp_path, g + bytes(bad) + g)
    assert kinds(result) == ["good", "corrupt", "good"]
    assert result.blocks[1].corrupt_reason == SIZE_MISMATCH
    assert result.blocks[2].offset == len(g) + len(bad)


def test_no_magic_after_frame_is_corrupt(tmp_path: Path) -> None:
    g = good()
    result = scan(tmp_path, g + b"XXXXXXXX" + g)
    # the first frame validates its size but is followed by neither magic nor EOF
    assert kinds(result) == ["corrupt", "good"]
    assert result.blocks[0].corrupt_reason == NO_MAGIC_AFTER
    assert result.blocks[1].offset == len(g) + 8


def test_negative_and_truncated_size(tmp_path: Path) -> None:
    g = good()
    assert scan(tmp_path, g + MAGIC + pack_i64(-5) + g).blocks[1].corrupt_reason == SIZE_OUT_OF_RANGE
    (tmp_path / NAME).unlink()
    result = scan(tmp_path, g + MAGIC + b"\x00\x00\x01")
    assert kinds(result) == ["good", "corrupt"] and result.blocks[1].corrupt_reason == TRUNCATED_SIZE


def test_bad_magic_at_block_start_stops_like_java(tmp_path: Path) -> None:
    """`hasNext` throws on a block start without magic; it does not resync there."""
    g = good()
    result = scan(tmp_path, b"NOTHUDI-garbage" + g)
    assert kinds(result) == []
    assert isinstance(result.error, LogFormatError)
    assert result.error.offset == 0
    # after a block, garbage instead of the next magic makes that block corrupt (check 3c), up to EOF
    (tmp_path / NAME).unlink()
    result = scan(tmp_path, g + b"NOTHUDI-garbage")
    assert kinds(result) == ["corrupt"] and result.error is None
    assert result.blocks[0].corrupt_reason == NO_MAGIC_AFTER and result.blocks[0].end == len(g) + 15


def test_block_types_headers_and_identifier(tmp_path: Path) -> None:
    data = (good(2, "200", (1, 0))
            + delete_block("200", [DeleteRecord("k9", "p", OrderingValue("string", "z"))], SCHEMA, (1, 1))
            + rollback_block("300", "200"))
    result = scan(tmp_path, data)
    types = [b.block_type for b in result.blocks]
    assert types == [BlockType.AVRO_DATA_BLOCK, BlockType.DELETE_BLOCK, BlockType.COMMAND_BLOCK]
    assert [(b.block_identifier.attempt, b.block_identifier.seq) for b in result.blocks[:2]] == [(1, 0), (1, 1)]
    assert result.blocks[2].is_rollback and result.blocks[2].target_instant_time == "200"
    reader = LogFileReader(ReadOnlyStorage(str(tmp_path)), NAME)
    (rec,) = decode_records(reader, result.blocks[1])
    assert rec == DeleteRecord("k9", "p", OrderingValue("string", "z"))


@pytest.mark.parametrize(("value", "expected"), [
    ("0,1", (0, 1)), ("12,345", (12, 345)), (" 2 , 3 ", (2, 3)), ("", None), (None, None),
    ("7", None), ("a,b", None), ("1,99999999999", None),
])
def test_parse_block_identifier(value: str | None, expected: tuple[int, int] | None) -> None:
    ident = parse_block_identifier(value)
    assert (None if ident is None else (ident.attempt, ident.seq)) == expected


def test_legacy_v0_block(tmp_path: Path) -> None:
    """Format version 0: no type/header/footer/trailer; the Avro content embeds a deflated schema."""
    import io
    import zlib

    import fastavro

    packed = zlib.compress(SCHEMA.encode())
    datums = []
    for i in range(2):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, fastavro.parse_schema(json.loads(SCHEMA)), {"key": f"v{i}", "n": i})
        datums.append(pack_i32(len(buf.getvalue())) + buf.getvalue())
    content = pack_i32(len(packed)) + packed + pack_i32(2) + b"".join(datums)
    from hudi_core.formats.logfile.writer import encode_block

    data = encode_block(BlockType.AVRO_DATA_BLOCK, (), content, format_version=0) + good()
    result = scan(tmp_path, data)
    # a V0 frame has no trailing length, so the size check of 1.x readers fails: corrupt, then resync
    # (spec 03 §1.3: modern Java cannot read V0 blocks through the normal path)
    assert kinds(result) == ["corrupt", "good"]
    assert result.blocks[0].corrupt_reason == SIZE_MISMATCH and result.blocks[1].offset == len(data) - len(good())
    # the legacy content layout itself decodes (zlib schema, count, records)
    from hudi_core.formats.logfile.content import decode_avro_content

    assert decode_avro_content(content, "", legacy=True) == [{"key": "v0", "n": 0}, {"key": "v1", "n": 1}]


@pytest.mark.parametrize(("name", "expected"), [
    (".c923cb31-a2d3-49c6-8f47-4be96502c239-0_20260307162607806.log.1_0-104-236",
     ("c923cb31-a2d3-49c6-8f47-4be96502c239-0", "20260307162607806", "log", 1, "0-104-236", 236, False)),
    (".f1-0_20240101000000000.log.3_1-0-1.cdc", ("f1-0", "20240101000000000", "log", 3, "1-0-1", 1, True)),
    (".commits_.archive.12_1-0-1", ("commits", "", "archive", 12, "1-0-1", 1, False)),
    (".files-0000-0_00000000000000000.log.1_0-0-0", ("files-0000-0", "00000000000000000", "log", 1, "0-0-0", 0, False)),
    (".f1-0_001.log.2", ("f1-0", "001", "log", 2, None, None, False)),  # older writers: no token
])
def test_log_file_name_grammar(name: str, expected: tuple) -> None:
    from hudi_core.io.filenames import parse_log_file_name

    p = parse_log_file_name(name)
    assert p is not None
    assert (p.file_id, p.instant_time, p.extension, p.version, p.write_token, p.task_attempt, p.is_cdc) == expected
    assert parse_log_file_name(name.lstrip(".")) is None
