"""Property tests: damaged log files only ever raise the reader's own errors, and every block that
lies wholly before the first damaged byte is still returned unchanged."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_core.formats.logfile.content import DeleteRecord, OrderingValue, decode_records, record_count
from hudi_core.formats.logfile.errors import LogFileError
from hudi_core.formats.logfile.format import MAGIC_LEN, BlockType, HeaderKey
from hudi_core.formats.logfile.reader import LogBlock, LogFileReader, _Window
from hudi_core.formats.logfile.writer import avro_data_block, delete_block, encode_block, rollback_block

SCHEMA = json.dumps({"type": "record", "name": "r", "fields": [
    {"name": "key", "type": "string"}, {"name": "n", "type": ["null", "long"]}, {"name": "f", "type": "double"}]})
PATH = ".fg-0_001.log.1_0-1-0"


@dataclass
class Size:
    """What `stat` returns."""

    size: int


class MemoryStorage:
    """Ranged reads over bytes held in memory (the reader's `RangeStorage`)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read_range(self, path: str, start: int, length: int) -> bytes:
        return self.data[start : start + length]

    def stat(self, path: str) -> Size:
        return Size(len(self.data))


def _parquet(n: int) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table({"key": [f"p{i}" for i in range(n)]}), buf)
    return buf.getvalue()


records = st.lists(st.fixed_dictionaries({
    "key": st.text(max_size=12), "n": st.none() | st.integers(-(2**63), 2**63 - 1),
    "f": st.floats(allow_nan=False)}), max_size=6)
instants = st.sampled_from(["001", "002", "20240101000000000"])
idents = st.none() | st.tuples(st.integers(0, 3), st.integers(0, 5))
avro_blocks = st.builds(lambda i, r, b: avro_data_block(i, SCHEMA, r, block_identifier=b), instants, records, idents)
delete_blocks = st.builds(
    lambda i, keys: delete_block(i, [DeleteRecord(k, "p", OrderingValue("long", n)) for k, n in keys], SCHEMA),
    instants, st.lists(st.tuples(st.text(max_size=8), st.integers(-1000, 1000)), max_size=4))
command_blocks = st.builds(rollback_block, instants, instants)
parquet_blocks = st.builds(
    lambda i, n: encode_block(BlockType.PARQUET_DATA_BLOCK, [(HeaderKey.INSTANT_TIME, i)], _parquet(n)),
    instants, st.integers(0, 3))
blocks = st.lists(st.one_of(avro_blocks, avro_blocks, delete_blocks, command_blocks, parquet_blocks),
                  min_size=1, max_size=5)


@st.composite
def damaged(draw: st.DrawFn) -> tuple[bytes, bytes, int, bool]:
    """(original, damaged, first damaged byte, whether the damage is a truncation)."""
    data = b"".join(draw(blocks))
    kind = draw(st.sampled_from(["flip", "truncate", "insert", "overwrite", "delete"]))
    pos = draw(st.integers(0, len(data)))
    if kind == "truncate":
        return data, data[:pos], pos, True
    junk = draw(st.binary(min_size=1, max_size=40) | st.sampled_from([b"#HUDI#", b"#HUDI#\x00\x00\x00"]))
    if kind == "flip":
        pos = min(pos, len(data) - 1)
        out = bytearray(data)
        out[pos] ^= draw(st.integers(1, 255))
        return data, bytes(out), pos, False
    if kind == "insert":
        return data, data[:pos] + junk + data[pos:], pos, False
    if kind == "overwrite":
        return data, data[:pos] + junk + data[pos + len(junk):], pos, False
    return data, data[:pos] + data[pos + len(junk):], pos, False


def _scan(data: bytes, window: int = 8192) -> tuple[list[LogBlock], LogFileReader, Exception | None]:
    reader = LogFileReader(MemoryStorage(data), PATH, window=window)
    found: list[LogBlock] = []
    try:
        for block in reader.blocks():
            found.append(block)
    except Exception as exc:
        return found, reader, exc
    return found, reader, None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged(), st.sampled_from([16, 100, 1000, 8192]))
def test_damage_never_escapes_and_keeps_earlier_blocks(case: tuple[bytes, bytes, int, bool], window: int) -> None:
    original, data, first_damaged, truncated = case
    good, _, error = _scan(original, window)
    assert error is None and not any(b.corrupt for b in good) and good[-1].end == len(original)
    found, reader, error = _scan(data, window)
    assert error is None or isinstance(error, LogFileError), repr(error)
    # every block before the first damaged byte (plus, unless the file just ends, the next magic)
    # comes back exactly as it was
    margin = 0 if truncated else MAGIC_LEN
    intact = [b for b in good if b.end + margin <= first_damaged]
    assert found[: len(intact)] == intact
    # content decoding of whatever was found raises only the reader's errors too
    for block in found:
        try:
            record_count(reader, block)
            if not block.corrupt and block.block_type in (
                    BlockType.AVRO_DATA_BLOCK, BlockType.DELETE_BLOCK, BlockType.PARQUET_DATA_BLOCK):
                decode_records(reader, block)
        except LogFileError:
            pass
    # and a scan never raises
    assert LogFileReader(MemoryStorage(data), PATH).scan().blocks == found


@settings(max_examples=100, deadline=None)
@given(blocks)
def test_valid_files_round_trip(parts: list[bytes]) -> None:
    data = b"".join(parts)
    found, reader, error = _scan(data)
    assert error is None
    assert [data[b.offset : b.end] for b in found] == parts
    for block in found:
        n = record_count(reader, block)
        if block.block_type is BlockType.COMMAND_BLOCK:
            assert n is None
        else:
            assert n == len(decode_records(reader, block))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4000),
       st.lists(st.tuples(st.integers(0, 4200), st.integers(0, 3000), st.integers(0, 600)), max_size=30),
       st.integers(1, 700))
def test_window_cache_returns_exact_bytes(data: bytes, reads: list[tuple[int, int, int]], window: int) -> None:
    """The reader's small read cache never returns other bytes than the file holds."""
    cache = _Window(MemoryStorage(data), PATH, len(data), window)
    for offset, length, lookbehind in reads:
        assert cache.get(offset, length, lookbehind) == data[offset : offset + length]
