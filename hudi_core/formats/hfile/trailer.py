"""The HFile v3 fixed trailer: the last 4096 bytes of the file, and the one place its rules live.

Layout (HBase `FixedFileTrailer`, Hudi `HFileTrailer`):

* 8 bytes magic ``TRABLK"$``;
* a protobuf `TrailerProto`, preceded by its length as a varint (`writeDelimitedTo`);
* zero padding up to byte 4092;
* 4 bytes big-endian ``minor << 24 | major``. HBase writes ``03 00 00 03`` (v3.3); Hudi's native
  writer (`HFileWriterImpl`) writes only the last byte, ``00 00 00 03`` (v3.0).

A major version other than 3 is "unsupported" when the magic is there or the version says 1 or 2
(older trailers are shorter, so their last 4096 bytes do not start with the magic); without the
magic and with any other version bytes, the file is truncated or not an HFile at all.

`TrailerProto` fields (all optional in the schema; defaults as HBase reads them):
1 file_info_offset, 2 load_on_open_data_offset, 3 uncompressed_data_index_size,
4 total_uncompressed_bytes, 5 data_index_count, 6 meta_index_count, 7 entry_count,
8 num_data_index_levels, 9 first_data_block_offset, 10 last_data_block_offset,
11 comparator_class_name, 12 compression_codec, 13 encryption_key.
Offsets are Java longs stored as uint64: an empty HBase file stores first/last data block offset -1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_core.formats.hfile.compression import codec_name
from hudi_core.formats.hfile.encoding import (
    INT32,
    parse_proto,
    proto_bytes,
    proto_uint,
    read_uvarint,
    to_signed64,
    write_uvarint,
)
from hudi_core.formats.hfile.errors import HFileFormatError, HFileUnsupportedVersion

TRAILER_SIZE = 4096
TRAILER_MAGIC = b'TRABLK"$'
MAJOR_VERSION = 3
#: Hudi's native writer names HBase's comparator class (the class itself is never loaded).
HUDI_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"

_VERSION_OFFSET = TRAILER_SIZE - 4


@dataclass(frozen=True)
class HFileTrailer:
    """The parsed fixed trailer. `fields` lists the protobuf field numbers present, in file order:
    Hudi's native writer leaves out 4 and 13, HBase sets 4; a structural comparison uses it."""

    major_version: int
    minor_version: int
    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int | None
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator_class_name: str
    compression_codec: int
    encryption_key: bytes | None = None
    fields: tuple[int, ...] = field(default=())

    @property
    def compression(self) -> str:
        """The codec name (`GZ`, `NONE`, `SNAPPY`, …; ``ordinal N`` when unknown)."""
        return codec_name(self.compression_codec)


def read_version(tail: bytes) -> tuple[int, int]:
    """(major, minor) from the last 4 bytes of the file."""
    raw = INT32.unpack_from(tail, len(tail) - 4)[0] & 0xFFFFFFFF
    return raw & 0x00FFFFFF, raw >> 24


def parse_trailer(tail: bytes, name: str = "<hfile>", file_size: int | None = None) -> HFileTrailer:
    """Parse the trailer from the last bytes of an HFile (at least the last 4096; more is fine).

    `file_size` places error offsets in the whole file and bounds the offsets the trailer holds (they
    must point before the trailer); without it only the trailer itself is checked. Raises
    :class:`HFileUnsupportedVersion` for a major version other than 3 and
    :class:`HFileFormatError` for anything else that does not parse.
    """
    size = len(tail) if file_size is None else file_size
    if len(tail) < TRAILER_SIZE or size < TRAILER_SIZE:
        raise HFileFormatError(
            f"file of {size} bytes is shorter than the {TRAILER_SIZE}-byte HFile v3 trailer", name, 0)
    trailer = tail[len(tail) - TRAILER_SIZE :]
    base = size - TRAILER_SIZE
    major, minor = read_version(trailer)
    has_magic = trailer.startswith(TRAILER_MAGIC)
    # HFile v1/v2 trailers are shorter (no magic 4096 bytes from the end): say "version", not "damaged".
    if major != MAJOR_VERSION and (has_magic or major in (1, 2)):
        raise HFileUnsupportedVersion(
            f"HFile major version {major} (minor {minor}) is not supported, only 3", name, size - 4)
    if not has_magic:
        raise HFileFormatError(
            f"no HFile v3 trailer at the end of the file (magic {bytes(trailer[:8])!r}, version bytes "
            f"{bytes(trailer[-4:]).hex()}): truncated, or not an HFile", name, base)
    length, start = read_uvarint(trailer, len(TRAILER_MAGIC), _VERSION_OFFSET, "trailer length", name, base)
    end = start + length
    if end > _VERSION_OFFSET:
        raise HFileFormatError(f"trailer message of {length} bytes runs past the trailer", name, base + start)
    values: dict[int, int | bytes] = {}
    order: list[int] = []
    for f in parse_proto(trailer, start, end, "trailer", name, base):
        values[f.number] = f.value
        order.append(f.number)

    def num(number: int, default: int = 0, signed: bool = True) -> int:
        value = values.get(number, default)
        if not isinstance(value, int):
            raise HFileFormatError(f"trailer field {number} is not a number", name, base)
        return to_signed64(value) if signed else value

    comparator = values.get(11, b"")
    key = values.get(13)
    if not isinstance(comparator, bytes) or (key is not None and not isinstance(key, bytes)):
        raise HFileFormatError("trailer field 11 or 13 is not a byte string", name, base)
    parsed = HFileTrailer(
        major_version=major,
        minor_version=minor,
        file_info_offset=num(1),
        load_on_open_offset=num(2),
        uncompressed_data_index_size=num(3),
        total_uncompressed_bytes=num(4) if 4 in values else None,
        data_index_count=num(5, signed=False),
        meta_index_count=num(6, signed=False),
        entry_count=num(7),
        num_data_index_levels=num(8, 1, signed=False),
        first_data_block_offset=num(9),
        last_data_block_offset=num(10),
        comparator_class_name=comparator.decode("utf-8", "replace"),
        compression_codec=num(12, 2, signed=False),
        encryption_key=key,
        fields=tuple(order),
    )
    _check(parsed, name, base, bounded=file_size is not None)
    return parsed


def _check(t: HFileTrailer, name: str, base: int, bounded: bool) -> None:
    """Counts must be sane; with the file size known (`bounded`), offsets must point inside the
    file before the trailer. (Index counts are bounded by the index payloads they index.)"""
    if t.entry_count < 0:
        raise HFileFormatError(f"negative entry count {t.entry_count}", name, base)
    if not 1 <= t.num_data_index_levels <= 64:
        raise HFileFormatError(f"{t.num_data_index_levels} data index levels", name, base)
    if not bounded:
        return
    if not 0 <= t.load_on_open_offset < base:
        raise HFileFormatError(
            f"load-on-open offset {t.load_on_open_offset} is outside the {base} bytes before the trailer", name, base)
    if not t.load_on_open_offset <= t.file_info_offset < base:
        raise HFileFormatError(
            f"file info offset {t.file_info_offset} is outside the load-on-open section "
            f"[{t.load_on_open_offset}, {base})", name, base)


def entry_count(tail: bytes, name: str = "<hfile>") -> int:
    """The key-value count of an HFile from its last bytes (at least the 4096-byte trailer; the file
    size is not known here, so the trailer's offsets are not bounded)."""
    return parse_trailer(tail, name).entry_count


def encode_trailer(
    *,
    file_info_offset: int,
    load_on_open_offset: int,
    uncompressed_data_index_size: int,
    data_index_count: int,
    meta_index_count: int,
    entry_count: int,
    num_data_index_levels: int,
    first_data_block_offset: int,
    last_data_block_offset: int,
    compression_codec: int,
    comparator_class_name: str = HUDI_COMPARATOR,
    total_uncompressed_bytes: int | None = None,
    minor_version: int = 0,
) -> bytes:
    """The 4096 trailer bytes as Hudi's `HFileWriterImpl.writeTrailer` lays them out: the fields it
    sets, in field-number order (protobuf's `toByteArray`), no field 4 or 13 unless given, and only
    the major version byte (minor 0)."""
    message = b"".join([
        proto_uint(1, file_info_offset),
        proto_uint(2, load_on_open_offset),
        proto_uint(3, uncompressed_data_index_size),
        proto_uint(4, total_uncompressed_bytes) if total_uncompressed_bytes is not None else b"",
        proto_uint(5, data_index_count),
        proto_uint(6, meta_index_count),
        proto_uint(7, entry_count),
        proto_uint(8, num_data_index_levels),
        proto_uint(9, first_data_block_offset),
        proto_uint(10, last_data_block_offset),
        proto_bytes(11, comparator_class_name.encode("utf-8")),
        proto_uint(12, compression_codec),
    ])
    head = TRAILER_MAGIC + write_uvarint(len(message)) + message
    if len(head) > _VERSION_OFFSET:
        raise ValueError("trailer message does not fit 4092 bytes")
    version = ((minor_version << 24) | MAJOR_VERSION).to_bytes(4, "big")
    return head + bytes(_VERSION_OFFSET - len(head)) + version
