"""Reading an HFile v3 through ranged reads, as Hudi reads its metadata table's base files.

Opening reads the trailer (the last 4096 bytes), then the load-on-open section, exactly, in one
request: the root data index, the meta index right after it, and the file info block at the
trailer's `file_info_offset` (Hudi `HFileReaderImpl.initializeMetadata`); never a byte of a data block. Data blocks,
meta blocks and the non-root index blocks of a multi-level index are read when a question needs
them: :meth:`HFileReader.get` reads the index blocks on the path down from the root and the one
data block that may hold the key.

Lookups follow Hudi's `HFileReaderImpl.seekTo` rules:

* keys are rows compared as unsigned bytes (a Python `str` key is compared by its UTF-8 bytes);
* at every index level the entry with the greatest key <= the lookup key is taken (`TreeMap.floorEntry`);
  a key before the first index key is before the file's first key: not found, nothing read;
* a key after `hfile.LASTKEY` is past the end: not found, nothing read;
* within the block the first cell with that row is the answer (non-unique keys: the first one);
  a key between a block's *fake first key* (HBase's shortened index key) and its real first key
  lands in that block and is not found (`SEEK_TO_BEFORE_BLOCK_FIRST_KEY`), and a key greater than
  the last cell of the block it lands in is not in the file either (`SEEK_TO_IN_RANGE`).

Everything read is bounded: an offset or size that leaves the file, a block whose declared size
runs past its index entry or the trailer, a short read, a payload that does not inflate to its
declared size: :class:`~hudi_core.formats.hfile.errors.HFileFormatError` naming the file and offset.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from hudi_core.errors import StorageError
from hudi_core.formats.hfile.block import HEADER_SIZE, BlockHeader, BlockType, HFileBlock, decode_block, parse_header
from hudi_core.formats.hfile.cell import decode_cells, row_of
from hudi_core.formats.hfile.compression import require_supported
from hudi_core.formats.hfile.encoding import INT32
from hudi_core.formats.hfile.errors import HFileFormatError, HFileReadError
from hudi_core.formats.hfile.fileinfo import (
    KEY_VALUE_VERSION,
    KEY_VALUE_VERSION_WITH_MVCC_TS,
    LAST_KEY,
    MAX_TAGS_LEN,
    parse_file_info,
)
from hudi_core.formats.hfile.index import IndexEntry, floor_position, parse_nonroot_index, parse_root_index
from hudi_core.formats.hfile.trailer import TRAILER_SIZE, HFileTrailer, parse_trailer

_INDEX_BLOCKS = (BlockType.INTERMEDIATE_INDEX, BlockType.LEAF_INDEX)
#: The largest file whose every key a lookup reads to prove an absent answer (the files partition's HFiles are far
#: smaller; a bigger one answers "absent" as Hudi's seek does, noted in `unverified_absent`).
VERIFY_ORDER_MAX_BYTES = 256 * 1024 * 1024
#: Reading every key's order reads the data blocks in spans of this many bytes: a few requests, not one per block.
VERIFY_READ_AHEAD_BYTES = 8 * 1024 * 1024


class RangeSource(Protocol):
    """What the reader needs: the file's size and ranged reads (`start`, `length`) of its bytes."""

    @property
    def size(self) -> int: ...

    def read_range(self, start: int, length: int) -> bytes: ...


class _Sized(Protocol):
    @property
    def size(self) -> int: ...


class _Storage(Protocol):
    """What :class:`StorageSource` needs of a storage (a ``ReadOnlyStorage`` or a test's stand-in)."""

    def stat(self, path: str) -> _Sized: ...

    def read_range(self, path: str, start: int, length: int) -> bytes: ...


class BytesSource:
    """An HFile held in memory."""

    def __init__(self, data: bytes, name: str = "<bytes>") -> None:
        self.data = bytes(data)
        self.name = name

    @property
    def size(self) -> int:
        """The length of the bytes."""
        return len(self.data)

    def read_range(self, start: int, length: int) -> bytes:
        """`length` bytes from `start` (fewer at the end)."""
        return self.data[start : start + length]


class StorageSource:
    """An HFile on a :class:`~hudi_core.io.storage.ReadOnlyStorage` (anything with `stat(path).size` and
    `read_range(path, start, length)`); the name in errors is the path given."""

    def __init__(self, storage: _Storage, path: str) -> None:
        self.storage = storage
        self.path = path
        self.name = path
        self._size: int | None = None

    @property
    def size(self) -> int:
        """The file size, stat'ed once."""
        if self._size is None:
            try:
                self._size = int(self.storage.stat(self.path).size)
            except StorageError as exc:
                raise HFileReadError(str(exc), self.path) from exc
        return self._size

    def read_range(self, start: int, length: int) -> bytes:
        """`length` bytes from `start` through the storage."""
        try:
            return self.storage.read_range(self.path, start, length)
        except StorageError as exc:
            raise HFileReadError(str(exc), self.path, start) from exc


@dataclass(frozen=True)
class BlockInfo:
    """A block found by :meth:`HFileReader.walk_blocks`: where it starts and its header."""

    offset: int
    header: BlockHeader

    @property
    def magic(self) -> str:
        """The block magic as text (``DATABLK*``, ``IDXROOT2``, …)."""
        return self.header.block_type.value.decode("ascii")


def _text(raw: bytes) -> str:
    # Hudi keys are UTF-8; undecodable bytes are kept (surrogateescape) so a key read can be looked up.
    return raw.decode("utf-8", "surrogateescape")


def _shown(raw: bytes) -> str:
    text = raw[:80].decode("utf-8", "backslashreplace")
    return repr(text + ("…" if len(raw) > 80 else ""))


def _check_order(keys: list[bytes], what: str, name: str, offset: int) -> None:
    """Raise when `keys` (rows of a block, or an index's keys) ever go down: HBase and Hudi write them sorted
    (repeats allowed: a row of several cells), and every lookup relies on it."""
    for i in range(1, len(keys)):
        if keys[i] < keys[i - 1]:
            raise HFileFormatError(f"keys out of order in the {what}: {_shown(keys[i])} after "
                                   f"{_shown(keys[i - 1])}", name, offset)


def _raw(key: str) -> bytes:
    return key.encode("utf-8", "surrogateescape")


class HFileReader:
    """A read-only view of one HFile v3: trailer, file info and indexes at open, cells on demand.

    `source` is anything with `size` and `read_range(start, length) -> bytes` (:class:`BytesSource`,
    :class:`StorageSource`, or a test's counting wrapper). `verify_checksums`: check HBase's CRC32C
    chunk checksums of every block read (Hudi only skips them; off by default).
    """

    def __init__(self, source: RangeSource, *, name: str | None = None, verify_checksums: bool = False) -> None:
        self._source = source
        self.name: str = name or getattr(source, "name", None) or "<hfile>"
        self.verify_checksums = verify_checksums
        self._index_cache: dict[int, tuple[list[IndexEntry], list[bytes]]] = {}
        #: The last two data blocks decoded (offset → rows, values): a lookup reads its block and the one before.
        self._recent_data: dict[int, tuple[list[bytes], list[bytes]]] = {}
        #: Every key was found in order (:meth:`_verify_order`): an absent answer needs no further proof.
        self._order_verified = False
        #: An absent answer was given without reading the whole file's key order (a file too big for it).
        self.unverified_absent = False
        #: While every key's order is read (:meth:`_verify_order`): the span's size, and the span read (offset, bytes).
        self._ahead: tuple[int, bytes] | None = None
        self._read_ahead = 0
        #: Keys :meth:`get` found more than once (it answers with the first cell, as :meth:`scan` lists first).
        self.repeated_keys: set[str] = set()
        try:
            self.size: int = int(source.size)
        except StorageError as exc:
            raise HFileReadError(str(exc), self.name) from exc
        self._open()

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>", *, verify_checksums: bool = False) -> HFileReader:
        """A reader over an HFile's bytes."""
        return cls(BytesSource(data, name), verify_checksums=verify_checksums)

    @classmethod
    def open(cls, storage: _Storage, path: str, *, verify_checksums: bool = False) -> HFileReader:
        """A reader over `path` of a `ReadOnlyStorage` (stat once, then ranged reads)."""
        return cls(StorageSource(storage, path), verify_checksums=verify_checksums)

    # -- bounded I/O ------------------------------------------------------------------------------
    def _read(self, start: int, length: int, what: str) -> bytes:
        if start < 0 or length < 0 or start + length > self.size:
            raise HFileFormatError(
                f"{what} [{start}, {start + length}) runs past the end of the {self.size}-byte file", self.name, start)
        ahead = self._ahead
        if ahead is not None and ahead[0] <= start and start + length <= ahead[0] + len(ahead[1]):
            return ahead[1][start - ahead[0] : start - ahead[0] + length]
        if self._read_ahead and length < self._read_ahead:  # reading every key's order: the next blocks come along
            self._ahead = (start, self._fetch(start, max(length, min(self._read_ahead, self._trailer_start - start))))
            data = self._ahead[1][:length]
        else:
            data = self._fetch(start, length)
        if len(data) != length:
            raise HFileFormatError(f"{what}: read {len(data)} of {length} bytes (file truncated?)", self.name, start)
        return data

    def _fetch(self, start: int, length: int) -> bytes:
        try:
            return self._source.read_range(start, length)
        except StorageError as exc:
            raise HFileReadError(str(exc), self.name, start) from exc

    def _read_block(self, entry: IndexEntry, expect: tuple[BlockType, ...], what: str) -> HFileBlock:
        """The block an index entry points to, which must fit before the trailer."""
        if entry.size < HEADER_SIZE or entry.offset < 0 or entry.offset + entry.size > self._trailer_start:
            raise HFileFormatError(
                f"{what} at {entry.offset} of {entry.size} bytes is outside the {self._trailer_start} bytes "
                f"before the trailer", self.name, entry.offset)
        raw = self._read(entry.offset, entry.size, what)
        return decode_block(raw, entry.offset, self.compression, self.name, expect, self.verify_checksums)

    # -- open ---------------------------------------------------------------------------------------
    def _open(self) -> None:
        size = self.size
        if size < TRAILER_SIZE:
            raise HFileFormatError(
                f"file of {size} bytes is shorter than the {TRAILER_SIZE}-byte HFile v3 trailer", self.name, 0)
        tail = self._read(size - TRAILER_SIZE, TRAILER_SIZE, "trailer")
        self.trailer: HFileTrailer = parse_trailer(tail, self.name, size)
        self._trailer_start = size - TRAILER_SIZE
        self.compression: str = require_supported(self.trailer.compression_codec, self.name, self._trailer_start)
        los = self.trailer.load_on_open_offset
        # The load-on-open section, exactly (parse_trailer bounded it): root index, meta index, file info.
        section = self._read(los, self._trailer_start - los, "load-on-open section")

        root, after_root = self._section_block(section, 0, BlockType.ROOT_INDEX, "root data index")
        self._root = parse_root_index(root.payload, self.trailer.data_index_count, rows=True,
                                      name=self.name, offset=los + HEADER_SIZE)
        meta, _ = self._section_block(section, after_root, BlockType.ROOT_INDEX, "meta index")
        meta_entries = parse_root_index(meta.payload, self.trailer.meta_index_count, rows=False,
                                        name=self.name, offset=los + after_root + HEADER_SIZE)
        self._meta_index = {_text(e.key): e for e in meta_entries}
        info, _ = self._section_block(section, self.trailer.file_info_offset - los, BlockType.FILE_INFO, "file info")
        pairs = parse_file_info(info.payload, self.name, self.trailer.file_info_offset + HEADER_SIZE)
        self._file_info = {key.decode("utf-8", "replace"): value for key, value in pairs}

        version = self._file_info.get(KEY_VALUE_VERSION) or b""
        self._mvcc = len(version) == 4 and INT32.unpack(version)[0] == KEY_VALUE_VERSION_WITH_MVCC_TS
        self._tags = MAX_TAGS_LEN in self._file_info
        last = self._file_info.get(LAST_KEY)
        self._last_row = row_of(last, self.name, self.trailer.file_info_offset) if last else None
        self._root_keys = [e.key for e in self._root]
        _check_order(self._root_keys, "root data index", self.name, los)
        if self.trailer.entry_count > 0 and not self._root:
            raise HFileFormatError(f"{self.trailer.entry_count} entries but an empty data index", self.name, los)

    def _section_block(self, section: bytes, pos: int, kind: BlockType, what: str) -> tuple[HFileBlock, int]:
        """A block of the load-on-open section at `pos` (relative to it) → (block, position after it)."""
        offset = self.trailer.load_on_open_offset + pos
        if not 0 <= pos < len(section):
            raise HFileFormatError(f"{what} is outside the load-on-open section", self.name, offset)
        header = parse_header(section[pos : pos + HEADER_SIZE], self.name, offset, available=len(section) - pos)
        end = pos + header.on_disk_size_with_header
        block = decode_block(section[pos:end], offset, self.compression, self.name, (kind,), self.verify_checksums)
        return block, end

    # -- properties -------------------------------------------------------------------------------
    @property
    def entry_count(self) -> int:
        """Cells in the file (trailer `entry_count`)."""
        return self.trailer.entry_count

    @property
    def index_levels(self) -> int:
        """Levels of the data index (trailer `numDataIndexLevels`): 1 = the root points at data blocks."""
        return self.trailer.num_data_index_levels

    @property
    def major_version(self) -> int:
        """3."""
        return self.trailer.major_version

    @property
    def minor_version(self) -> int:
        """3 from HBase, 0 from Hudi's native writer."""
        return self.trailer.minor_version

    @property
    def file_info(self) -> dict[str, bytes]:
        """The file info map (a copy), in file order."""
        return dict(self._file_info)

    @property
    def first_key(self) -> str | None:
        """The first key: the root index's first entry (the first block's index key is its real first
        key in both writers), None for an empty file. Reads nothing."""
        return _text(self._root[0].key) if self._root else None

    @property
    def last_key(self) -> str | None:
        """The last key, from the file info's `hfile.LASTKEY`; None when absent or empty."""
        return None if self._last_row is None else _text(self._last_row)

    @property
    def root_index(self) -> list[IndexEntry]:
        """The root data index entries (row keys: HBase's may be shortened "fake" first keys)."""
        return list(self._root)

    @property
    def meta_block_names(self) -> list[str]:
        """Names of the meta blocks (e.g. Hudi's ``bloomFilter``), in index order."""
        return list(self._meta_index)

    @property
    def data_block_count(self) -> int:
        """Data blocks in the file: the root entry count for a one-level index; for a multi-level index
        the leaf entries, which reads the non-root index blocks (never a data block)."""
        if self.index_levels == 1:
            return len(self._root)
        return sum(1 for _ in self._data_entries(None))

    # -- the index --------------------------------------------------------------------------------
    def _children(self, entry: IndexEntry) -> tuple[list[IndexEntry], list[bytes]]:
        """The entries (and their keys) of the index block `entry` points to; read once."""
        cached = self._index_cache.get(entry.offset)
        if cached is None:
            block = self._read_block(entry, _INDEX_BLOCKS, "index block")
            entries = parse_nonroot_index(block.payload, name=self.name, offset=entry.offset + HEADER_SIZE)
            if not entries:
                raise HFileFormatError("non-root index block without entries", self.name, entry.offset)
            cached = (entries, [e.key for e in entries])
            _check_order(cached[1], "index block", self.name, entry.offset)
            self._index_cache[entry.offset] = cached
        return cached

    def _data_entries(self, key: bytes | None) -> Iterator[IndexEntry]:
        """The data-block entries in file order, from the block where `key` would be (all if None)."""

        def walk(entries: list[IndexEntry], keys: list[bytes], depth: int, seek: bytes | None) -> Iterator[IndexEntry]:
            start = 0 if seek is None else max(0, floor_position(keys, seek))
            for i in range(start, len(entries)):
                if depth == 1:
                    yield entries[i]
                else:
                    yield from walk(*self._children(entries[i]), depth - 1, seek if i == start else None)

        return walk(self._root, self._root_keys, self.index_levels, key)

    def _previous_entry(self, key: bytes) -> IndexEntry | None:
        """The data block before the one where `key` would be (None: that one is the first), found by the same
        descent as :meth:`_data_entries` (one more leaf index block at most, when the block opens its leaf)."""

        def last_leaf(entry: IndexEntry, depth: int) -> IndexEntry:
            while depth > 1:
                entry = self._children(entry)[0][-1]
                depth -= 1
            return entry

        def locate(entries: list[IndexEntry], keys: list[bytes], depth: int) -> IndexEntry | None:
            pos = max(0, floor_position(keys, key))
            if depth == 1:
                return entries[pos - 1] if pos >= 1 else None
            previous = locate(*self._children(entries[pos]), depth - 1)
            if previous is None and pos >= 1:
                previous = last_leaf(entries[pos - 1], depth)
            return previous

        return locate(self._root, self._root_keys, self.index_levels)

    def _cells(self, entry: IndexEntry) -> tuple[list[bytes], list[bytes]]:
        recent = self._recent_data.get(entry.offset)
        if recent is not None:
            return recent
        block = self._read_block(entry, (BlockType.DATA,), "data block")
        rows, values = decode_cells(block.payload, mvcc=self._mvcc, tags=self._tags, name=self.name,
                                    offset=entry.offset + HEADER_SIZE)
        # A lookup bisects the rows: keys out of order would make it answer "absent" for a key that is there.
        _check_order(rows, "data block", self.name, entry.offset)
        if rows and rows[0] < entry.key:
            raise HFileFormatError(f"the data block's first key {_shown(rows[0])} sorts before its index key "
                                   f"{_shown(entry.key)}", self.name, entry.offset)
        if len(self._recent_data) >= 2:
            del self._recent_data[next(iter(self._recent_data))]
        self._recent_data[entry.offset] = (rows, values)
        return rows, values

    # -- questions --------------------------------------------------------------------------------
    def scan(self) -> Iterator[tuple[str, bytes]]:
        """Every (key, value) in file order. Raises at the end when the index covered a different
        number of cells than the trailer's entry count (a damaged file)."""
        seen = 0
        previous: bytes | None = None
        previous_offset = 0
        for entry in self._data_entries(None):
            rows, values = self._cells(entry)
            if previous is not None:
                if rows and rows[0] < previous:
                    raise HFileFormatError(f"keys out of order across data blocks: {_shown(rows[0])} after "
                                           f"{_shown(previous)}, the last key of the data block at {previous_offset}",
                                           self.name, entry.offset)
                self._check_block_after(previous, previous_offset, entry, rows)
            if rows:
                previous, previous_offset = rows[-1], entry.offset
            seen += len(rows)
            for row, value in zip(rows, values, strict=True):
                yield _text(row), value
        if seen != self.entry_count:
            raise HFileFormatError(f"the data blocks hold {seen} cells, the trailer says {self.entry_count}",
                                   self.name, self.size - TRAILER_SIZE)
        if previous is not None and self._last_row is not None and previous != self._last_row:
            # A lookup past hfile.LASTKEY answers "absent" without reading a block, as Hudi's seekTo does.
            raise HFileFormatError(f"the last key {_shown(previous)} is not the file info's {LAST_KEY} "
                                   f"{_shown(self._last_row)}", self.name, self.trailer.file_info_offset)

    def get(self, key: str) -> bytes | None:
        """The value of `key` (its first cell when keys repeat), None when absent. Reads the index blocks on the
        way down and one data block (the one before too when the key opens its block); an absent answer is proved
        by the order of every key, read once per file (:meth:`_verify_order`)."""
        raw = _raw(key)
        if not self._root:
            self._verify_order()  # no data block: unless the trailer counts cells the index lost
            return None
        if raw < self._root_keys[0] or (self._last_row is not None and raw > self._last_row):
            self._verify_order()  # before the file's first key or past its last: unless one was misplaced
            return None
        entries = self._data_entries(raw)
        entry = next(entries)
        rows, values = self._cells(entry)
        following = next(entries, None)  # index blocks only: the next data block is not read
        if rows and following is not None and rows[-1] > following.key:
            # Blocks that overlap: the key may sit in the next block, where this lookup would never look.
            raise HFileFormatError(f"keys out of order across data blocks: the block's last key {_shown(rows[-1])} "
                                   f"sorts after {_shown(following.key)}, the index key of the data block at "
                                   f"{following.offset}", self.name, entry.offset)
        i = bisect_left(rows, raw)
        if i < len(rows) and rows[i] == raw:
            if i == 0 and (before := self._previous_entry(raw)) is not None:
                # The block's first key: a copy may end the block before (a key repeated across two blocks is
                # answered with its first copy, as the whole-file read keeps it).
                prev_rows, prev_values = self._cells(before)
                if prev_rows and prev_rows[-1] > raw:
                    raise HFileFormatError(f"keys out of order across data blocks: {_shown(raw)} after "
                                           f"{_shown(prev_rows[-1])}, the last key of the data block at "
                                           f"{before.offset}", self.name, entry.offset)
                if prev_rows and prev_rows[-1] == raw:
                    self.repeated_keys.add(key)
                    return prev_values[bisect_left(prev_rows, raw)]
            if i + 1 < len(rows) and rows[i + 1] == raw:
                self.repeated_keys.add(key)
            return values[i]
        # "Absent" is proved by the order of every key: Hudi's `HFileReaderImpl.seekTo` (as HBase's) searches the
        # one block whose index key is the floor of the key, so a key misplaced into any other block (blocks that
        # overlap, or an index key at or before the previous block's last key) is never where a lookup looks.
        # Checked once per file, on its first absent answer; a file too big for that has at least the block before
        # checked, where a key moved back by one block sits.
        if not self._verify_order() and (before := self._previous_entry(raw)) is not None:
            before_rows, _ = self._cells(before)
            if before_rows:
                self._check_block_after(before_rows[-1], before.offset, entry, rows)
        return None

    def _check_block_after(self, before_last: bytes, before_offset: int, entry: IndexEntry, rows: list[bytes]) -> None:
        """Raise unless the data block of `entry` (its `rows`) opens after the block before it (at `before_offset`,
        ending with `before_last`): its index key sorts after that key (HBase's shortened fake key is chosen
        after it, Hudi's writer indexes the real first key), or equals it only where one row carries on across the
        two blocks. Otherwise a lookup of the keys between the index key and the previous block's last key is sent
        to this block, where they are not."""
        if entry.key > before_last or (entry.key == before_last and rows and rows[0] == before_last):
            return
        raise HFileFormatError(f"keys out of order across data blocks: the block's index key {_shown(entry.key)} "
                               f"does not sort after {_shown(before_last)}, the last key of the data block at "
                               f"{before_offset}", self.name, entry.offset)

    def _verify_order(self) -> bool:
        """Raise as the whole-file read does when keys are out of order anywhere (within a block, across blocks,
        against the index) or the index misses cells; read every data block the first time only, in spans of
        :data:`VERIFY_READ_AHEAD_BYTES`. True once proved; a file over :data:`VERIFY_ORDER_MAX_BYTES` is not read
        whole for it: False, and its absent answers are noted in :attr:`unverified_absent` (the caller says so)."""
        if self._order_verified:
            return True
        if self.size > VERIFY_ORDER_MAX_BYTES:
            self.unverified_absent = True
            return False
        self._read_ahead = VERIFY_READ_AHEAD_BYTES
        first = self.trailer.first_data_block_offset
        try:
            if self._root and 0 <= first < self._trailer_start:  # the first span from the first data block
                self._ahead = (first, self._fetch(first, min(self._read_ahead, self._trailer_start - first)))
            for _ in self.scan():  # the whole-file read's every check: order, index, the trailer's cell count
                pass
        finally:
            self._read_ahead, self._ahead = 0, None
        self._order_verified = True
        return True

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes | None]:
        """Values of several keys, looked up in key order so that neighbours share the data block and
        index blocks already read; the dict is in that (UTF-8 byte) order, missing keys map to None."""
        return {key: self.get(key) for key in sorted(set(keys), key=_raw)}

    def prefix(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every (key, value) whose key starts with `prefix`, in order; reads from the block where the
        prefix would be and stops at the first key past the range. The range is proved whole as an absent answer
        is (:meth:`_verify_order`, once per file): a key of it misplaced into another block is an error, never
        left out."""
        raw = _raw(prefix)
        self._verify_order()
        if not self._root:
            return
        previous: bytes | None = None
        for entry in self._data_entries(raw):
            rows, values = self._cells(entry)
            if rows and previous is not None and rows[0] < previous:
                raise HFileFormatError(f"keys out of order across data blocks: {_shown(rows[0])} after "
                                       f"{_shown(previous)}", self.name, entry.offset)
            previous = rows[-1] if rows else previous
            for i in range(bisect_left(rows, raw), len(rows)):
                if not rows[i].startswith(raw):
                    return
                yield _text(rows[i]), values[i]

    def meta_block(self, name: str) -> bytes | None:
        """The uncompressed content of the meta block called `name`, None when there is none."""
        entry = self._meta_index.get(name)
        if entry is None:
            return None
        return self._read_block(entry, (BlockType.META,), f"meta block {name!r}").payload

    def walk_blocks(self) -> Iterator[BlockInfo]:
        """Every block header from offset 0 up to the trailer, in file order (a structural view: it
        reads each header, not the payloads)."""
        pos = 0
        while pos < self._trailer_start:
            head = self._read(pos, min(HEADER_SIZE, self._trailer_start - pos), "block header")
            header = parse_header(head, self.name, pos, available=self._trailer_start - pos)
            yield BlockInfo(pos, header)
            pos += header.on_disk_size_with_header


def describe_trailer(trailer: HFileTrailer) -> dict[str, object]:
    """The trailer as plain values (for JSON)."""
    return {
        "major_version": trailer.major_version,
        "minor_version": trailer.minor_version,
        "file_info_offset": trailer.file_info_offset,
        "load_on_open_offset": trailer.load_on_open_offset,
        "uncompressed_data_index_size": trailer.uncompressed_data_index_size,
        "total_uncompressed_bytes": trailer.total_uncompressed_bytes,
        "data_index_count": trailer.data_index_count,
        "meta_index_count": trailer.meta_index_count,
        "entry_count": trailer.entry_count,
        "num_data_index_levels": trailer.num_data_index_levels,
        "first_data_block_offset": trailer.first_data_block_offset,
        "last_data_block_offset": trailer.last_data_block_offset,
        "comparator_class_name": trailer.comparator_class_name,
        "compression": trailer.compression,
    }


__all__ = ["BlockInfo", "BytesSource", "HFileReader", "RangeSource", "StorageSource", "describe_trailer"]
