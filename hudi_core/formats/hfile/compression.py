"""Block compression: the codec ordinal of the trailer, and NONE / GZ codecs.

The trailer's `compression_codec` is the ordinal of HBase's `Compression.Algorithm` (Hudi's
`CompressionCodec` keeps the same ids so the files stay interchangeable): 0 LZO, 1 GZ, 2 NONE,
3 SNAPPY, 4 LZ4, 5 BZIP2, 6 ZSTD. Hudi's metadata table writes GZ; NONE appears in tests. Every
other codec is refused with :class:`HFileUnsupportedCompression` naming it.

GZ blocks are one gzip member. Java's `GZIPOutputStream` (Hadoop's `GzipCodec` and Hudi's native
writer alike) writes a fixed 10-byte header (no name, mtime 0, OS 0) and deflates at zlib's default
level 6; Python's `zlib` at level 6 produces the same deflate bytes, so :func:`compress` gives
byte-identical blocks (checked against every GZ block of the fixture HFiles).
"""

from __future__ import annotations

import struct
import zlib

from hudi_core.formats.hfile.errors import HFileFormatError, HFileUnsupportedCompression

CODEC_NAMES: tuple[str, ...] = ("LZO", "GZ", "NONE", "SNAPPY", "LZ4", "BZIP2", "ZSTD")
GZ = 1
NONE = 2
SUPPORTED = {"GZ": GZ, "NONE": NONE}
# Java's GZIPOutputStream header: magic, deflate, no flags, mtime 0, no extra flags, OS 0.
_JAVA_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"
_DEFAULT_LEVEL = 6  # java.util.zip.Deflater.DEFAULT_COMPRESSION is zlib's level 6
_MAX_DEFLATE_RATIO = 1032  # deflate never compresses better than about 1032:1 (zlib's technical notes)


def codec_name(ordinal: int) -> str:
    """`GZ`, `NONE`, `SNAPPY`, …; ``ordinal N`` for an id no codec has."""
    if 0 <= ordinal < len(CODEC_NAMES):
        return CODEC_NAMES[ordinal]
    return f"ordinal {ordinal}"


def require_supported(ordinal: int, name: str | None = None, offset: int | None = None) -> str:
    """The codec's name if this package can read it, else :class:`HFileUnsupportedCompression`."""
    codec = codec_name(ordinal)
    if codec not in SUPPORTED:
        raise HFileUnsupportedCompression(codec, name, offset)
    return codec


def codec_ordinal(codec: str) -> int:
    """The trailer ordinal of ``"GZ"`` or ``"NONE"`` (the codecs the writer can produce)."""
    try:
        return SUPPORTED[codec.upper()]
    except KeyError:
        raise HFileUnsupportedCompression(codec) from None


def decompress(codec: str, data: bytes, expected_size: int, name: str | None = None,
               offset: int | None = None) -> bytes:
    """The uncompressed bytes of one block's payload, which must be exactly `expected_size` long
    (the header's `uncompressedSizeWithoutHeader`); inflation stops one byte past it, so a damaged
    or hostile block never inflates beyond what its header declares."""
    if codec == "NONE":
        if len(data) != expected_size:
            raise HFileFormatError(
                f"uncompressed block holds {len(data)} bytes, its header says {expected_size}", name, offset)
        return data
    if codec != "GZ":
        raise HFileUnsupportedCompression(codec, name, offset)
    if expected_size > _MAX_DEFLATE_RATIO * len(data) + 1024:
        raise HFileFormatError(
            f"GZ block of {len(data)} bytes cannot inflate to the {expected_size} bytes its header says", name, offset)
    inflater = zlib.decompressobj(wbits=31)  # gzip framing, as Java's GZIPInputStream reads it
    try:
        out = inflater.decompress(data, expected_size + 1)
    except zlib.error as exc:
        raise HFileFormatError(f"GZ block does not inflate: {exc}", name, offset) from exc
    if len(out) != expected_size or not inflater.eof:
        raise HFileFormatError(
            f"GZ block inflates to {len(out)}{'' if inflater.eof else '+'} bytes, its header says {expected_size}",
            name, offset)
    return out


def compress(codec: str, data: bytes) -> bytes:
    """A block payload compressed as Hudi's writer does (GZ: Java's gzip member; NONE: as is)."""
    if codec == "NONE":
        return data
    if codec != "GZ":
        raise HFileUnsupportedCompression(codec)
    deflater = zlib.compressobj(_DEFAULT_LEVEL, zlib.DEFLATED, -15)
    body = deflater.compress(data) + deflater.flush()
    return _JAVA_GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
