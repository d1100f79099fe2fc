"""HFile blocks: the 33-byte v3 header, checksum chunks, and the payload (decompressed on read).

Header (HBase `HFileBlock`, Hudi `HFileBlock.Header`), big-endian:

=======  ====  =====================================================================
offset   size  field
=======  ====  =====================================================================
0        8     block magic (one per block type, :class:`BlockType`)
8        4     onDiskSizeWithoutHeader: compressed payload + checksum bytes
12       4     uncompressedSizeWithoutHeader: the payload once inflated
16       8     prevBlockOffset (HBase: the previous block of the same type; Hudi: -1, see writer)
24       1     checksum type: 0 NULL, 1 CRC32, 2 CRC32C
25       4     bytesPerChecksum (16384 from both writers)
29       4     onDiskDataSizeWithHeader: header + compressed payload, without checksums
=======  ====  =====================================================================

After the payload come the checksums: one 4-byte value per `bytesPerChecksum` chunk of the first
`onDiskDataSizeWithHeader` bytes (header included). HBase writes CRC32C values; Hudi's native writer
declares type NULL and writes the same number of zero bytes, so both readers find the payload end
where they expect it. Hudi's reader (`HFileBlock`, `HFileDataBlock`) never verifies checksums, only
skips them; :func:`decode_block` does the same unless `verify_checksums` is set.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntEnum
from functools import lru_cache

from hudi_core.formats.hfile.compression import compress, decompress
from hudi_core.formats.hfile.encoding import INT32, INT64
from hudi_core.formats.hfile.errors import HFileChecksumError, HFileFormatError, HFileUnsupportedError

HEADER_SIZE = 33
MAGIC_LENGTH = 8
CHECKSUM_SIZE = 4
DEFAULT_BYTES_PER_CHECKSUM = 16 * 1024


class BlockType(Enum):
    """A block's type, by its 8-byte magic (HBase `BlockType`, Hudi `HFileBlockType`)."""

    DATA = b"DATABLK*"
    ENCODED_DATA = b"DATABLKE"
    LEAF_INDEX = b"IDXLEAF2"
    BLOOM_CHUNK = b"BLMFBLK2"
    META = b"METABLKc"
    INTERMEDIATE_INDEX = b"IDXINTE2"
    ROOT_INDEX = b"IDXROOT2"
    FILE_INFO = b"FILEINF2"
    GENERAL_BLOOM_META = b"BLMFMET2"
    DELETE_FAMILY_BLOOM_META = b"DFBLMET2"
    TRAILER = b'TRABLK"$'
    INDEX_V1 = b"IDXBLK)+"

    @classmethod
    def of(cls, magic: bytes, name: str | None = None, offset: int | None = None) -> BlockType:
        """The type whose magic `magic` is, else :class:`HFileFormatError`."""
        try:
            return cls(bytes(magic))
        except ValueError:
            raise HFileFormatError(f"block magic {bytes(magic)!r} is not an HFile block", name, offset) from None


class ChecksumType(IntEnum):
    """HBase `ChecksumType` codes (byte 24 of the header)."""

    NULL = 0
    CRC32 = 1
    CRC32C = 2


@dataclass(frozen=True)
class BlockHeader:
    """The 33-byte v3 block header."""

    block_type: BlockType
    on_disk_size_without_header: int
    uncompressed_size_without_header: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int

    @property
    def on_disk_size_with_header(self) -> int:
        """The whole block on disk: what an index entry's size field holds."""
        return HEADER_SIZE + self.on_disk_size_without_header

    @property
    def checksum_bytes(self) -> int:
        """Bytes of checksums after the payload."""
        return self.on_disk_size_with_header - self.on_disk_data_size_with_header


@dataclass(frozen=True)
class HFileBlock:
    """One block read from a file: where it starts, its header and its uncompressed payload."""

    offset: int
    header: BlockHeader
    payload: bytes

    @property
    def block_type(self) -> BlockType:
        """The block's type."""
        return self.header.block_type


def checksum_chunk_count(size: int, bytes_per_checksum: int) -> int:
    """Checksum values covering `size` bytes (`HFileBlock.numChecksumChunks`: a partial chunk counts)."""
    return -(-size // bytes_per_checksum)


def parse_header(raw: bytes, name: str | None = None, offset: int | None = None,
                 available: int | None = None) -> BlockHeader:
    """Parse and bound a block header. `available`: bytes from the block start to the end of the
    region it must fit (the trailer start); a block declared longer is refused."""
    if len(raw) < HEADER_SIZE:
        raise HFileFormatError(f"block header cut short ({len(raw)} of {HEADER_SIZE} bytes)", name, offset)
    block_type = BlockType.of(raw[:MAGIC_LENGTH], name, offset)
    on_disk = INT32.unpack_from(raw, 8)[0]
    uncompressed = INT32.unpack_from(raw, 12)[0]
    prev = INT64.unpack_from(raw, 16)[0]
    checksum_type = raw[24]
    per_checksum = INT32.unpack_from(raw, 25)[0]
    data_with_header = INT32.unpack_from(raw, 29)[0]
    header = BlockHeader(block_type, on_disk, uncompressed, prev, checksum_type, per_checksum, data_with_header)
    kind = block_type.name
    if on_disk < 0 or uncompressed < 0:
        raise HFileFormatError(f"{kind} block has a negative size ({on_disk} on disk, {uncompressed} uncompressed)",
                               name, offset)
    if available is not None and header.on_disk_size_with_header > available:
        raise HFileFormatError(
            f"{kind} block of {header.on_disk_size_with_header} bytes runs past the end of its section "
            f"({available} bytes left)", name, offset)
    if not HEADER_SIZE <= data_with_header <= header.on_disk_size_with_header:
        raise HFileFormatError(
            f"{kind} block onDiskDataSizeWithHeader {data_with_header} is outside "
            f"[{HEADER_SIZE}, {header.on_disk_size_with_header}]", name, offset)
    if checksum_type not in (0, 1, 2):
        raise HFileFormatError(f"{kind} block has unknown checksum type {checksum_type}", name, offset)
    if header.checksum_bytes and per_checksum <= 0:
        raise HFileFormatError(f"{kind} block has {header.checksum_bytes} checksum bytes but bytesPerChecksum "
                               f"{per_checksum}", name, offset)
    return header


def decode_block(raw: bytes, offset: int, codec: str, name: str | None = None,
                 expect: tuple[BlockType, ...] = (), verify_checksums: bool = False) -> HFileBlock:
    """One whole on-disk block (`raw` = exactly its bytes) → header and uncompressed payload.

    `expect`: the types acceptable here (an index entry pointing at a data block must find one).
    """
    header = parse_header(raw, name, offset, available=len(raw))
    if header.on_disk_size_with_header != len(raw):
        raise HFileFormatError(
            f"{header.block_type.name} block header declares {header.on_disk_size_with_header} bytes, "
            f"the index entry {len(raw)}", name, offset)
    if expect and header.block_type not in expect:
        wanted = " or ".join(t.name for t in expect)
        if header.block_type is BlockType.ENCODED_DATA:
            raise HFileUnsupportedError("encoded data blocks (DATABLKE) are not supported; Hudi writes none",
                                        name, offset)
        raise HFileFormatError(f"expected a {wanted} block, found {header.block_type.name}", name, offset)
    if verify_checksums and header.checksum_type != ChecksumType.NULL:
        verify_block_checksums(raw, header, name, offset)
    payload = decompress(codec, raw[HEADER_SIZE : header.on_disk_data_size_with_header],
                         header.uncompressed_size_without_header, name, offset)
    return HFileBlock(offset, header, payload)


def verify_block_checksums(raw: bytes, header: BlockHeader, name: str | None, offset: int | None) -> None:
    """Compare each stored chunk checksum with the CRC32 / CRC32C of its chunk (HBase `ChecksumUtil`)."""
    data_end = header.on_disk_data_size_with_header
    per = header.bytes_per_checksum
    chunks = checksum_chunk_count(data_end, per)
    if header.checksum_bytes != chunks * CHECKSUM_SIZE:
        raise HFileChecksumError(
            f"{header.checksum_bytes} checksum bytes for {chunks} chunks of {per}", name, offset)
    crc = zlib.crc32 if header.checksum_type == ChecksumType.CRC32 else crc32c
    for i in range(chunks):
        chunk = raw[i * per : min((i + 1) * per, data_end)]
        stored = INT32.unpack_from(raw, data_end + i * CHECKSUM_SIZE)[0] & 0xFFFFFFFF
        if crc(chunk) != stored:
            raise HFileChecksumError(
                f"checksum of chunk {i} of the {header.block_type.name} block does not match", name, offset)


def encode_block(block_type: BlockType, payload: bytes, codec: str, prev_block_offset: int = -1,
                 checksum_type: ChecksumType = ChecksumType.NULL,
                 bytes_per_checksum: int = DEFAULT_BYTES_PER_CHECKSUM) -> bytes:
    """A whole block as Hudi's `HFileBlock.serialize` writes it: header, compressed payload and,
    for the NULL checksum type, as many zero bytes as the CRC values would take (CRC32/CRC32C
    write the real values, as HBase does)."""
    body = compress(codec, payload)
    data_with_header = HEADER_SIZE + len(body)
    checksum_len = checksum_chunk_count(data_with_header, bytes_per_checksum) * CHECKSUM_SIZE
    head = b"".join([
        block_type.value,
        INT32.pack(len(body) + checksum_len),
        INT32.pack(len(payload)),
        INT64.pack(prev_block_offset),
        bytes([int(checksum_type)]),
        INT32.pack(bytes_per_checksum),
        INT32.pack(data_with_header),
    ])
    block = head + body
    if checksum_type == ChecksumType.NULL:
        return block + bytes(checksum_len)
    crc = zlib.crc32 if checksum_type == ChecksumType.CRC32 else crc32c
    sums = b"".join(
        INT32.pack(_signed32(crc(block[i : i + bytes_per_checksum])))
        for i in range(0, data_with_header, bytes_per_checksum))
    return block + sums


def _signed32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


# -- CRC32C ----------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _crc32c_impl() -> Callable[[bytes], int]:
    try:  # the C implementation when installed (a dependency of gcsfs); a table otherwise
        import google_crc32c

        fast: Callable[[bytes], int] = google_crc32c.value
        return fast
    except ImportError:
        table = []
        for n in range(256):
            c = n
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)

        def value(data: bytes) -> int:
            c = 0xFFFFFFFF
            for b in data:
                c = table[(c ^ b) & 0xFF] ^ (c >> 8)
            return c ^ 0xFFFFFFFF

        return value


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of `data`, as HBase's `ChecksumType.CRC32C` computes it."""
    return _crc32c_impl()(bytes(data))
