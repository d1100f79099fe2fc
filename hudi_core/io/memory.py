"""Process memory handed back to the system (the bytes layer: every layer above may call it)."""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable
from typing import Any

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
