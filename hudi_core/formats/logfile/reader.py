"""Header-only scan of a Hudi log file through ranged reads (spec `03` §1.2-1.8).

The reader walks the blocks of one log file the way Java's `HoodieLogFileReader` does, but it
never fetches a block's content: it reads a small window at the block start (magic, size,
version, type, header), and a small window around the block end (the trailing length that
validates the frame, the footer, the next block's magic). The bytes it requests per block are
independent of the content size; content is fetched only on demand (:meth:`LogFileReader.content`).

Corrupt-block detection and resynchronisation follow §1.8 exactly:

1. at a block start, EOF (also a 1-5 byte tail) ends the file; other bytes than `#HUDI#` stop the
   scan with :class:`LogFormatError` (Java throws; it does not resync there);
2. a block size that cannot be read is corrupt;
3. the size is validated against the file as it is: the i64 at `after_size + S - 8` must exist and
   equal `S + 6`, and the 6 bytes at `after_size + S` must be `#HUDI#` or EOF;
4. a corrupt block starts right after its magic and extends to the next `#HUDI#` (or EOF), found by
   scanning forward in 1 MiB chunks; reading resumes at that magic.

Deviations, all for inputs where Java throws or misreads: a size outside `0..2^31-1` is corrupt
(§1.2, instead of Java's silent `int` cast); a frame that validates but whose inside does not add up
(header map or content length running past the frame) is reported as a corrupt block with reason
``inconsistent-layout`` and reading resumes at the validated frame end; an unknown block-type
ordinal is surfaced as ``block_type=None`` with the raw ordinal instead of aborting the file.
Legacy V0 frames have no trailing length, so (as in 1.x Java) they normally fail check 3 and show
as corrupt; the V0 branch of the parser only runs when their last 8 bytes happen to validate.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from hudi_core.errors import StorageError
from hudi_core.formats.logfile.errors import LogFileError, LogFormatError, LogReadError
from hudi_core.formats.logfile.format import (
    INT32_MAX,
    MAGIC,
    MAGIC_LEN,
    BlockIdentifier,
    BlockType,
    HeaderKey,
    MetaKey,
    decode_value,
    key_name,
    parse_block_identifier,
    unpack_i32,
    unpack_i64,
)

DEFAULT_WINDOW = 8 * 1024
RESYNC_CHUNK = 1024 * 1024  # HoodieLogFileReader.BLOCK_SCAN_READ_BUFFER_SIZE
_TAIL_LOOKBEHIND = 256  # fetched before a block's trailing length so a small footer is in the window
_KEEP_WINDOWS = 4  # how much of a growing sequential window is kept


class RangeStorage(Protocol):
    """What the reader needs from a storage: ranged reads and a size (ReadOnlyStorage fits)."""

    def read_range(self, path: str, start: int, length: int) -> bytes: ...

    def stat(self, path: str) -> _Sized: ...


class _Sized(Protocol):
    @property
    def size(self) -> int: ...


# Reasons a block is reported corrupt. The first five are Java's; the last one is ours.
TRUNCATED_SIZE = "truncated-size"  # EOF inside the 8-byte block size
SIZE_OUT_OF_RANGE = "size-out-of-range"  # negative or > Integer.MAX_VALUE
PAST_EOF = "past-eof"  # the trailing length at after_size + S - 8 does not exist
SIZE_MISMATCH = "size-mismatch"  # trailing length - 6 != block size
NO_MAGIC_AFTER = "no-magic-after"  # neither #HUDI# nor EOF right after the frame
INCONSISTENT_LAYOUT = "inconsistent-layout"  # frame validated but its inside does not add up


@dataclass(frozen=True)
class LogBlock:
    """One block of a log file as located by the header-only scan.

    `offset` is the position of the block's `#HUDI#`; `end` is where the next block (or EOF)
    starts. For a valid block `size` is the declared block size S (`end = offset + 14 + S`); for a
    corrupt block it is Java's `corruptedBlockSize` (bytes from after the magic to the next magic)
    and `content_offset`/`content_length` cover those damaged bytes. Header and footer keep every
    entry in on-disk order with the raw ordinal; :attr:`header` maps names (or unknown ordinals)
    to values.
    """

    path: str
    index: int
    offset: int
    size: int
    end: int
    block_type: BlockType | None
    type_ordinal: int | None
    format_version: int | None
    header_entries: tuple[tuple[int, str], ...]
    footer_entries: tuple[tuple[int, str], ...]
    content_offset: int
    content_length: int
    trailer: int | None
    corrupt_reason: str | None = None

    @property
    def corrupt(self) -> bool:
        """Whether the reader synthesised this as a CORRUPT_BLOCK."""
        return self.corrupt_reason is not None

    @property
    def type_name(self) -> str:
        """`AVRO_DATA_BLOCK`, ..., `CORRUPT_BLOCK`, or `UNKNOWN_<ordinal>`."""
        if self.block_type is not None:
            return self.block_type.name
        return f"UNKNOWN_{self.type_ordinal}"

    @cached_property
    def header(self) -> dict[MetaKey, str]:
        """Header values by key name (unknown ordinals stay raw ints); a repeated key: last wins."""
        return {key_name(k): v for k, v in self.header_entries}

    @cached_property
    def footer(self) -> dict[int, str]:
        """Footer values by raw ordinal (the footer enum has no members today)."""
        return dict(self.footer_entries)

    def _get(self, key: HeaderKey) -> str | None:
        return self.header.get(key.name)

    @property
    def instant_time(self) -> str | None:
        """Header `INSTANT_TIME`: the (delta)commit that wrote the block."""
        return self._get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        """Header `TARGET_INSTANT_TIME`: the instant a rollback command block rolls back."""
        return self._get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        """Header `SCHEMA`: the Avro writer schema JSON."""
        return self._get(HeaderKey.SCHEMA)

    @property
    def command_type(self) -> int | None:
        """Header `COMMAND_BLOCK_TYPE` as an int (0 = ROLLBACK_BLOCK); None when absent or bad."""
        raw = self._get(HeaderKey.COMMAND_BLOCK_TYPE)
        try:
            return int(raw) if raw is not None else None
        except ValueError:
            return None

    @property
    def block_identifier(self) -> BlockIdentifier | None:
        """Header `BLOCK_IDENTIFIER` split into attempt and sequence (0.14.x writers only)."""
        return parse_block_identifier(self._get(HeaderKey.BLOCK_IDENTIFIER))

    @property
    def is_rollback(self) -> bool:
        """A COMMAND block of type ROLLBACK_BLOCK."""
        return self.block_type is BlockType.COMMAND_BLOCK and self.command_type == 0


@dataclass
class LogFileScan:
    """Every block found in one log file, plus the error that stopped the scan early, if any."""

    path: str
    file_size: int
    blocks: list[LogBlock] = field(default_factory=list)
    error: LogFileError | None = None
    bytes_requested: int = 0


class _Window:
    """A small read cache over ranged reads: a few windows (the block head, the block tail),
    least recently used first out. Counts the bytes it asks the storage for."""

    def __init__(
        self, storage: RangeStorage, path: str, file_size: int, window: int, slots: int = 2
    ) -> None:
        self.storage = storage
        self.path = path
        self.file_size = file_size
        self.window = window
        self.slots = slots
        self.segments: list[tuple[int, bytes]] = []  # most recently used last
        self.bytes_requested = 0
        self.requests = 0

    def fetch(self, start: int, length: int) -> bytes:
        """One uncached ranged read, clipped to the file."""
        if start >= self.file_size or length <= 0:
            return b""
        length = min(length, self.file_size - start)
        try:
            data = self.storage.read_range(self.path, start, length)
        except StorageError as exc:
            raise LogReadError(str(exc), self.path, start) from exc
        self.bytes_requested += length
        self.requests += 1
        return data

    def held_or_fetch(self, start: int, length: int) -> bytes:
        """`length` bytes at `start` (clipped to the file) from a window already held, else one
        uncached read: block contents are read once, and a small file's first window often holds
        them already (one request per file on an object store)."""
        end = min(start + length, self.file_size)
        for seg_start, buf in reversed(self.segments):
            if seg_start <= start and end <= seg_start + len(buf):
                return buf[start - seg_start : end - seg_start]
        return self.fetch(start, length)

    def get(self, offset: int, length: int, lookbehind: int = 0) -> bytes:
        """`length` bytes at `offset` (fewer at EOF), from a cached window when one covers them."""
        if offset < 0 or offset >= self.file_size:
            return b""
        want_end = min(offset + length, self.file_size)
        if self.segments:
            # Fast path: the most recently used window (where a header parse reads on) covers it;
            # same bytes and same LRU order as the loop below.
            start, buf = self.segments[-1]
            if start <= offset and want_end <= start + len(buf):
                return buf[offset - start : want_end - start]
        for i, (start, buf) in enumerate(self.segments):
            if start <= offset and want_end <= start + len(buf):
                self.segments.append(self.segments.pop(i))
                return buf[offset - start : want_end - start]
        for i, (start, buf) in enumerate(self.segments):
            buf_end = start + len(buf)
            if start <= offset and buf_end >= offset - max(lookbehind, self.window):
                # Within a window of one we hold: read on from its end (small blocks are then read
                # sequentially, once), and keep at most a few windows of it.
                more = self.fetch(buf_end, max(want_end - buf_end, self.window))
                keep_from = max(start, min(offset - lookbehind, want_end - _KEEP_WINDOWS * self.window, buf_end))
                self.segments.pop(i)
                self._remember(keep_from, buf[keep_from - start :] + more)
                break
        else:
            begin = max(0, offset - lookbehind)
            self._remember(begin, self.fetch(begin, max(want_end - begin, self.window)))
        start, buf = self.segments[-1]
        return buf[offset - start : want_end - start]

    def _remember(self, start: int, buf: bytes) -> None:
        self.segments.append((start, buf))
        if len(self.segments) > self.slots:
            self.segments.pop(0)


class LogFileReader:
    """Walks the blocks of one log file; see the module docstring for the rules it applies."""

    def __init__(
        self,
        storage: RangeStorage,
        path: str,
        file_size: int | None = None,
        window: int = DEFAULT_WINDOW,
        head: bytes | None = None,
    ) -> None:
        """`head`: the file's first bytes when the caller fetched them already (a batch of files
        read in one concurrent wave on an object store); the reader starts from them."""
        if file_size is None:
            try:
                file_size = int(storage.stat(path).size)
            except StorageError as exc:
                raise LogReadError(str(exc), path) from exc
        self.storage = storage
        self.path = path
        self.file_size = file_size
        self._io = _Window(storage, path, file_size, window)
        if head:
            self._io.segments.append((0, head[:file_size]))
        self._resync_chunk: tuple[int, bytes] | None = None

    @property
    def bytes_requested(self) -> int:
        """Bytes asked of the storage so far by this reader (framing, headers, resync scans)."""
        return self._io.bytes_requested

    @property
    def read_requests(self) -> int:
        """Ranged reads issued to the storage so far by this reader."""
        return self._io.requests

    @property
    def whole_file(self) -> bytes | None:
        """The whole file when the caller gave it as `head` (a remote file fetched in one GET), else None."""
        return next((seg for start, seg in self._io.segments if start == 0 and len(seg) >= self.file_size), None)

    # -- block walk -----------------------------------------------------------------------------
    def blocks(self) -> Iterator[LogBlock]:
        """Yield blocks in file order; raise :class:`LogFormatError` where Java would stop."""
        pos = 0
        index = 0
        while True:
            magic = self._io.get(pos, MAGIC_LEN)
            if len(magic) < MAGIC_LEN:
                return
            if magic != MAGIC:
                raise LogFormatError("did not find the magic bytes at the start of the block", self.path, pos)
            block = self._read_block(pos, index)
            yield block
            index += 1
            pos = block.end

    def scan(self) -> LogFileScan:
        """All blocks; a hard error is kept in `error` together with the blocks read before it."""
        result = LogFileScan(self.path, self.file_size)
        try:
            for block in self.blocks():
                result.blocks.append(block)
        except LogFileError as exc:
            result.error = exc
        result.bytes_requested = self.bytes_requested
        return result

    def _read_block(self, pos: int, index: int) -> LogBlock:
        after_magic = pos + MAGIC_LEN
        raw_size = self._io.get(after_magic, 8)
        if len(raw_size) < 8:
            return self._corrupt(pos, index, TRUNCATED_SIZE)
        size = unpack_i64(raw_size)
        if size < 0 or size > INT32_MAX:
            return self._corrupt(pos, index, SIZE_OUT_OF_RANGE)
        after_size = after_magic + 8
        frame_end = after_size + size
        tail_pos = frame_end - 8
        if tail_pos < 0:
            return self._corrupt(pos, index, PAST_EOF)
        tail = self._io.get(tail_pos, 8 + MAGIC_LEN, lookbehind=_TAIL_LOOKBEHIND)
        if len(tail) < 8:
            return self._corrupt(pos, index, PAST_EOF)
        trailer = unpack_i64(tail)
        if trailer - MAGIC_LEN != size:
            return self._corrupt(pos, index, SIZE_MISMATCH)
        next_magic = tail[8:]
        if len(next_magic) == MAGIC_LEN and next_magic != MAGIC:
            return self._corrupt(pos, index, NO_MAGIC_AFTER)
        try:
            return self._parse_frame(pos, index, size, after_size, frame_end, trailer)
        except _Inconsistent as exc:
            return self._corrupt_block(index, pos, size, frame_end, after_magic, trailer,
                                       f"{INCONSISTENT_LAYOUT}: {exc}")

    def _parse_frame(
        self, pos: int, index: int, size: int, after_size: int, frame_end: int, trailer: int
    ) -> LogBlock:
        cur = _Cursor(self._io, after_size, frame_end)
        version = cur.i32("log format version")
        type_ordinal: int | None = None
        block_type: BlockType | None
        header: tuple[tuple[int, str], ...] = ()
        footer: tuple[tuple[int, str], ...] = ()
        if version == 0:
            # Legacy V0: no type, header, content length, footer or trailer; AVRO content only.
            block_type = BlockType.AVRO_DATA_BLOCK
            content_offset = cur.pos
            content_length = frame_end - content_offset
            return LogBlock(
                self.path, index, pos, size, frame_end, block_type, None, 0, (), (),
                content_offset, content_length, None,
            )
        type_ordinal = cur.i32("block type")
        try:
            block_type = BlockType(type_ordinal)
        except ValueError:
            block_type = None
        if block_type is BlockType.CORRUPT_BLOCK:
            raise _Inconsistent("block type CORRUPT_BLOCK is never written")
        header = cur.metadata("header")
        content_length = cur.i64("content length")
        if content_length < 0 or content_length > INT32_MAX:
            raise _Inconsistent(f"content length {content_length} out of range")
        content_offset = cur.pos
        cur.skip(content_length, "content")
        if version == 1:
            footer = cur.metadata("footer")
            cur.skip(8, "trailing block length")
            if cur.pos != frame_end:
                raise _Inconsistent(f"block parts end at {cur.pos}, frame ends at {frame_end}")
            block_trailer: int | None = trailer
        else:
            # Versions >= 2 have no footer and no trailing length (none exist in the wild).
            if cur.pos not in (frame_end, frame_end - 8):
                raise _Inconsistent(f"block parts end at {cur.pos}, frame ends at {frame_end}")
            block_trailer = trailer if cur.pos == frame_end - 8 else None
        return LogBlock(
            path=self.path,
            index=index,
            offset=pos,
            size=size,
            end=frame_end,
            block_type=block_type,
            type_ordinal=type_ordinal,
            format_version=version,
            header_entries=header,
            footer_entries=footer,
            content_offset=content_offset,
            content_length=content_length,
            trailer=block_trailer,
        )

    def _corrupt(self, pos: int, index: int, reason: str) -> LogBlock:
        start = pos + MAGIC_LEN  # 1.x rewinds to just after the bad block's magic
        nxt = self._next_magic(start)
        return self._corrupt_block(index, pos, nxt - start, nxt, start, None, reason)

    def _corrupt_block(self, index: int, pos: int, size: int, end: int, content_offset: int, trailer: int | None,
                       reason: str) -> LogBlock:
        """A corrupt block at `pos` (its `size` as the frame or the rewind counts it) ending at `end`, its
        content from `content_offset`; no header or footer."""
        return LogBlock(
            path=self.path,
            index=index,
            offset=pos,
            size=size,
            end=end,
            block_type=BlockType.CORRUPT_BLOCK,
            type_ordinal=None,
            format_version=None,
            header_entries=(),
            footer_entries=(),
            content_offset=content_offset,
            content_length=end - content_offset,
            trailer=trailer,
            corrupt_reason=reason,
        )

    def _next_magic(self, start: int) -> int:
        """`scanForNextAvailableBlockOffset`: the next `#HUDI#` at or after `start`, else EOF.

        The last chunk read is kept and searched first: a run of corrupt blocks packed
        close together (a file of repeated magic) then costs O(bytes) reads and time, not a 1 MiB
        read per block.
        """
        pos = start
        cached = self._resync_chunk
        if cached is not None:
            c_start, chunk = cached
            if c_start <= pos < c_start + len(chunk):
                found = chunk.find(MAGIC, pos - c_start)
                if found >= 0:
                    return c_start + found
                if c_start + len(chunk) >= self.file_size:
                    return self.file_size
                pos = max(pos, c_start + len(chunk) - (MAGIC_LEN - 1))
        while pos < self.file_size:
            chunk = self._io.held_or_fetch(pos, RESYNC_CHUNK)
            self._resync_chunk = (pos, chunk)
            found = chunk.find(MAGIC)
            if found >= 0:
                return pos + found
            if pos + len(chunk) >= self.file_size:
                break
            pos += len(chunk) - (MAGIC_LEN - 1)
        return self.file_size

    # -- content on demand ----------------------------------------------------------------------
    def content(self, block: LogBlock) -> bytes:
        """The block's content bytes (for a corrupt block: the damaged span)."""
        return self._io.held_or_fetch(block.content_offset, block.content_length)

    def content_range(self, block: LogBlock, start: int, length: int) -> bytes:
        """`length` bytes of the content from `start` (relative to the content), clipped to it."""
        start = max(0, min(start, block.content_length))
        length = max(0, min(length, block.content_length - start))
        return self._io.held_or_fetch(block.content_offset + start, length)


class _Inconsistent(Exception):
    """Internal: a validated frame whose inside does not add up."""


class _Cursor:
    """Sequential big-endian reads bounded by a block frame."""

    def __init__(self, io: _Window, pos: int, limit: int) -> None:
        self.io = io
        self.pos = pos
        self.limit = limit
        # The window `io.get` would serve from first (its most recently used one), held here: a header's
        # dozen small fields are sliced from it without a window lookup each (hot: 10k files a scan).
        self._seg: tuple[int, bytes] | None = io.segments[-1] if io.segments else None

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > self.limit:
            raise _Inconsistent(f"{what} ({n} bytes at {self.pos}) runs past the frame end {self.limit}")
        seg = self._seg
        if seg is not None:
            off = self.pos - seg[0]
            if off >= 0 and off + n <= len(seg[1]):
                self.pos += n
                return seg[1][off : off + n]
        data = self.io.get(self.pos, n)
        self._seg = self.io.segments[-1] if self.io.segments else None
        if len(data) != n:
            raise _Inconsistent(f"{what} cut short by EOF")
        self.pos += n
        return data

    def skip(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.limit:
            raise _Inconsistent(f"{what} ({n} bytes at {self.pos}) runs past the frame end {self.limit}")
        self.pos += n

    def i32(self, what: str) -> int:
        return unpack_i32(self.take(4, what))

    def i64(self, what: str) -> int:
        return unpack_i64(self.take(8, what))

    def metadata(self, what: str) -> tuple[tuple[int, str], ...]:
        count = self.i32(f"{what} entry count")
        if count < 0:
            raise _Inconsistent(f"negative {what} entry count {count}")
        # Each entry needs at least 8 bytes; refuse counts the frame cannot hold before looping.
        if count * 8 > self.limit - self.pos:
            raise _Inconsistent(f"{what} entry count {count} does not fit the frame")
        entries = []
        for _ in range(count):
            key = self.i32(f"{what} key")
            length = self.i32(f"{what} value length")
            entries.append((key, decode_value(self.take(length, f"{what} value"))))
        return tuple(entries)


def read_log_blocks(
    storage: RangeStorage, path: str, file_size: int | None = None, window: int = DEFAULT_WINDOW
) -> LogFileScan:
    """Scan one log file (root-relative `path`) and return its blocks; never reads content."""
    try:
        reader = LogFileReader(storage, path, file_size=file_size, window=window)
    except LogFileError as exc:
        return LogFileScan(path, file_size or 0, [], exc)
    return reader.scan()
