"""Giving freed memory back to the system in a long-running dashboard process.

Each redraw of a followed page builds and frees frames, figures and messages of megabytes. glibc raises its mmap
threshold each time such a block is freed, so later ones come from its heap arenas, which fragment: followed at
0.5 s, the M table's page grew the process by 11-14 MB per 100 polls (bench/live_bench.py), flat with a fixed
threshold. Arrow's allocator (mimalloc in pyarrow's wheels) keeps what the text columns of a big table's frame
freed: on L (1M instants) ~370 MB resident after the charts were drawn, until asked. Every helper does
nothing where the C library lacks it.
"""

from __future__ import annotations

import ctypes
import functools
import threading
import time
from collections.abc import Callable

from hudi_core.io.memory import release_arrow_memory

#: Allocations from this size up get their own mapping, returned to the system when freed (glibc's default start).
MMAP_THRESHOLD = 128 * 1024
#: Seconds between two returns of freed memory to the system while a table is followed.
TRIM_EVERY_S = 30.0
_M_MMAP_THRESHOLD = -3  # mallopt's parameter (malloc.h)
_trimmed = {"at": 0.0}
_trim_lock = threading.Lock()


@functools.cache
def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold for the process (once; setting it stops glibc from raising it); whether it did."""
    mallopt = _libc("mallopt")
    return bool(mallopt is not None and mallopt(_M_MMAP_THRESHOLD, threshold) == 1)


def release_freed_memory(every_s: float = TRIM_EVERY_S) -> bool:
    """Return freed pages to the system: Arrow's memory pool's and the C heap's (glibc's `malloc_trim`), at most
    once every `every_s` seconds for the process; whether the C heap was trimmed."""
    now = time.monotonic()
    with _trim_lock:
        if now - _trimmed["at"] < every_s:
            return False
        _trimmed["at"] = now
    release_arrow_memory()
    trim = _libc("malloc_trim")
    if trim is None:
        return False
    trim(0)
    return True


@functools.cache
def _libc(name: str) -> Callable[..., int] | None:
    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
