"""Byte-exact Hudi log block writer, for tests and scenario building (spec `03` §1.2-1.7, §2.2).

Produces bytes only; where they go is the caller's business (this module never touches storage,
and :class:`~hudi_core.io.storage.ReadOnlyStorage` refuses writes anyway). A log file is the plain
concatenation of its blocks, so `b"".join(blocks)` is a file.

Besides well-formed blocks it builds the damaged shapes a crashed writer leaves behind:
:func:`partial_block` (a prefix of a block), :func:`bogus_size_block` (Java's
`testAppendAndReadOnCorruptedLog` garbage) and :data:`MAGIC` alone (`testMissingBlockExceptMagicBytes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hudi_core.formats.logfile.content import DeleteRecord, encode_avro_content, encode_delete_content
from hudi_core.formats.logfile.format import (
    CURRENT_LOG_FORMAT_VERSION,
    MAGIC,
    BlockIdentifier,
    BlockType,
    CommandType,
    HeaderKey,
    MetaKey,
    as_entries,
    encode_metadata,
    pack_i32,
    pack_i64,
)
from hudi_core.formats.logfile.reader import LogBlock

HeaderInput = Mapping[MetaKey | HeaderKey, str | bytes] | Iterable[tuple[MetaKey | HeaderKey, str | bytes]]


def encode_block(
    block_type: BlockType | int,
    header: HeaderInput = (),
    content: bytes = b"",
    footer: HeaderInput = (),
    format_version: int = CURRENT_LOG_FORMAT_VERSION,
) -> bytes:
    """One framed block (`HoodieLogFormatWriter.appendBlocks`): magic, size, version, type,
    header, content length, content, footer, trailing length. Header entries keep their order.

    Format version 0 writes the legacy shape (version + content only); versions >= 2 omit the
    footer and the trailing length, as `HoodieLogFormatVersion` says.
    """
    if format_version == 0:
        body = pack_i32(0) + content
        return MAGIC + pack_i64(len(body)) + body
    header_bytes = encode_metadata(as_entries(header))
    parts = [pack_i32(format_version), pack_i32(int(block_type)), header_bytes, pack_i64(len(content)), content]
    if format_version == 1:
        parts.append(encode_metadata(as_entries(footer)))
    body = b"".join(parts)
    if format_version == 1:
        size = len(body) + 8  # getLogBlockLength: everything after the size field, trailer included
        return MAGIC + pack_i64(size) + body + pack_i64(size + len(MAGIC))
    return MAGIC + pack_i64(len(body)) + body


def _data_header(
    instant_time: str,
    schema_json: str | None,
    block_identifier: BlockIdentifier | tuple[int, int] | None,
    extra: HeaderInput,
) -> list[tuple[MetaKey | HeaderKey, str | bytes]]:
    entries: list[tuple[MetaKey | HeaderKey, str | bytes]] = [(HeaderKey.INSTANT_TIME, instant_time)]
    if schema_json is not None:
        entries.append((HeaderKey.SCHEMA, schema_json))
    if block_identifier is not None:
        ident = (
            block_identifier
            if isinstance(block_identifier, BlockIdentifier)
            else BlockIdentifier(*block_identifier)
        )
        entries.append((HeaderKey.BLOCK_IDENTIFIER, str(ident)))
    entries.extend(as_entries(extra))
    return entries


def avro_data_block(
    instant_time: str,
    schema_json: str,
    records: Sequence[dict[str, Any]],
    block_identifier: BlockIdentifier | tuple[int, int] | None = None,
    extra_header: HeaderInput = (),
    content_version: int = 3,
) -> bytes:
    """An AVRO_DATA_BLOCK with header INSTANT_TIME, SCHEMA[, BLOCK_IDENTIFIER "attempt,seq"]."""
    content = encode_avro_content(list(records), schema_json, content_version)
    header = _data_header(instant_time, schema_json, block_identifier, extra_header)
    return encode_block(BlockType.AVRO_DATA_BLOCK, header, content)


def delete_block(
    instant_time: str,
    records: Sequence[DeleteRecord],
    schema_json: str | None = None,
    block_identifier: BlockIdentifier | tuple[int, int] | None = None,
    extra_header: HeaderInput = (),
) -> bytes:
    """A DELETE_BLOCK with content version 3 (Avro `HoodieDeleteRecordList`)."""
    header = _data_header(instant_time, schema_json, block_identifier, extra_header)
    return encode_block(BlockType.DELETE_BLOCK, header, encode_delete_content(list(records)))


def rollback_block(instant_time: str, target_instant_time: str) -> bytes:
    """A ROLLBACK command block, header in the order the fixture's Java writer produced."""
    header = [
        (HeaderKey.INSTANT_TIME, instant_time),
        (HeaderKey.COMMAND_BLOCK_TYPE, str(int(CommandType.ROLLBACK_BLOCK))),
        (HeaderKey.TARGET_INSTANT_TIME, target_instant_time),
    ]
    return encode_block(BlockType.COMMAND_BLOCK, header, b"")


def reencode(block: LogBlock, content: bytes) -> bytes:
    """Serialize a parsed block again from its header/footer entries and the given content."""
    if block.corrupt or block.format_version is None:
        raise ValueError("a corrupt block has no structure to re-encode")
    ordinal = block.type_ordinal if block.type_ordinal is not None else int(BlockType.AVRO_DATA_BLOCK)
    return encode_block(ordinal, block.header_entries, content, block.footer_entries, block.format_version)


def partial_block(block: bytes, keep: int) -> bytes:
    """The first `keep` bytes of a block: what a writer that crashed mid-append leaves."""
    if not 0 <= keep <= len(block):
        raise ValueError(f"keep={keep} outside 0..{len(block)}")
    return block[:keep]


def bogus_size_block(declared_size: int, content_length: int, payload: bytes) -> bytes:
    """Java `testAppendAndReadOnCorruptedLog` garbage: magic, a size that does not match, an AVRO
    type, version 1, a content length, then a few random bytes and nothing else."""
    return (
        MAGIC
        + pack_i64(declared_size)
        + pack_i32(int(BlockType.AVRO_DATA_BLOCK))
        + pack_i32(CURRENT_LOG_FORMAT_VERSION)
        + pack_i64(content_length)
        + payload
    )
