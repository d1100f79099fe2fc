"""Process memory (the bytes layer: every layer above may call it): the allocator Arrow uses, freed heap and the
pages of mapped index files handed back to the system, Arrow columns taken as one array without a copy, and
strings kept as one column where a result may hold a million."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import mmap
import os
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from hudi_core.lazy import LazyModule

pa: Any = LazyModule("pyarrow")

#: Allocations from this size up get their own mapping, returned to the system when freed (glibc's default start).
MMAP_THRESHOLD = 128 * 1024
_M_MMAP_THRESHOLD = -3  # mallopt's parameter (malloc.h)


#: Arrow reads its allocator's name from this variable when pyarrow is imported.
ARROW_POOL_ENV = "ARROW_DEFAULT_MEMORY_POOL"


def prefer_system_allocator() -> bool:
    """Have Arrow allocate through the C library's malloc instead of its bundled mimalloc, unless the user chose an
    allocator (`ARROW_DEFAULT_MEMORY_POOL`); whether the choice is this one. Call it before pyarrow is imported.

    Buffers made on the worker threads (decoded bodies, listings, log headers) and freed later stay in mimalloc's
    per-thread heaps; malloc reuses them for the next step. Measured as whole processes on the 1M-file table, the
    doctor's peak drops by a quarter at the same speed (see docs/benchmarks.md)."""
    return os.environ.setdefault(ARROW_POOL_ENV, "system") == "system"  # inherited by worker processes too


#: The read-only file mappings this process holds (index files read as Arrow tables), while something uses them.
_MAPPED: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()


def map_read_only(fileno: int) -> mmap.mmap:
    """A read-only mapping of the whole open file `fileno`, known to :func:`release_mapped_pages`."""
    mapped = mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)
    _MAPPED.add(mapped)
    return mapped


def release_mapped_pages() -> int:
    """Drop the pages of every live read-only mapping from this process's resident memory; how many mappings.

    A mapped file's pages count in the process's memory once read, and stay: the file checks read whole columns
    of the active-timeline index (~180 MiB on the 1M-file table) that no later step reads. Dropped, a page read
    again comes back from the system's page cache (a minor fault while the cache holds it, else a disk read); the
    mapping and every table on it stay valid."""
    advice = getattr(mmap, "MADV_DONTNEED", None)  # absent where the system has no madvise (Windows)
    if advice is None:
        return 0
    count = 0
    for mapped in list(_MAPPED):
        with contextlib.suppress(ValueError, OSError):  # closed meanwhile
            mapped.madvise(advice)
            count += 1
    return count


def release_arrow_memory() -> None:
    """Hand the pages Arrow's allocator keeps after a columnar step's intermediates were freed back to the system
    (they count in the process's memory until then). Imports pyarrow: call it where Arrow was used."""
    pa.default_memory_pool().release_unused()


@functools.cache
def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold for the process (once; setting it stops glibc from raising it); whether it did.

    glibc raises the threshold each time a mapped block is freed, so later blocks of megabytes come from its heap,
    which they fragment. A fixed threshold gives them back, at the cost of fresh pages for each: the dashboard,
    which runs for hours, fixes it; a command does not (writing a million clean decisions took 1.4 s more on L for
    60 MiB less)."""
    mallopt = libc_function("mallopt")
    return bool(mallopt is not None and mallopt(_M_MMAP_THRESHOLD, threshold) == 1)


@functools.cache
def libc_function(name: str) -> Callable[..., int] | None:
    """A function of the C library this process runs on, or None where it lacks it."""
    try:
        function: Callable[..., int] = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    return function


def as_array(values: Any) -> Any:
    """`values` (an Arrow Array or ChunkedArray) as one Array: an Array or a lone chunk as it is, several chunks
    concatenated. `ChunkedArray.combine_chunks` copies even a lone chunk: a million strings copied for nothing."""
    if isinstance(values, pa.ChunkedArray):
        return values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    return values


def as_one_chunk(table: Any) -> Any:
    """`table` with one chunk per column: as it is when every column has at most one, else combined
    (`Table.combine_chunks` copies columns that have one chunk already)."""
    if all(column.num_chunks <= 1 for column in table.columns):
        return table
    return table.combine_chunks()


class StringColumn(Sequence[str]):
    """Strings kept as one Arrow array and read as a sequence (a tuple's equal): a million table paths take their
    bytes, ~60 MiB on the 1M-file table, not a Python string each (~120 MiB) for as long as a result holds them."""

    __slots__ = ("_values",)
    _BATCH = 65_536

    def __init__(self, values: Any) -> None:
        self._values = as_array(values)

    @property
    def array(self) -> Any:
        """The Arrow array itself."""
        return self._values

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return self._values.slice(start, max(stop - start, 0)).to_pylist()  # type: ignore[no-any-return]
            return [self._values[i].as_py() for i in range(start, stop, step)]
        return self._values[index].as_py()  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self._values), self._BATCH):
            yield from self._values.slice(start, self._BATCH).to_pylist()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StringColumn):
            return bool(self._values.equals(other._values))
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"StringColumn({len(self)} strings)"
