"""Giving freed memory back to the system in a long-running dashboard process.

Each redraw of a followed page builds and frees frames, figures and messages of megabytes. glibc raises its mmap
threshold each time such a block is freed, so later ones come from its heap arenas, which fragment: followed at
0.5 s, the M table's page grew the process by 11-14 MB per 100 polls (bench/live_bench.py), flat with a fixed
threshold. Arrow's allocator (mimalloc in pyarrow's wheels) keeps what the text columns of a big table's frame
freed: on L (1M instants) ~370 MB resident after the charts were drawn, until asked. Every helper does
nothing where the C library lacks it.
"""

from __future__ import annotations

import threading
import time

from hudi_core.io.memory import fix_mmap_threshold, libc_function, release_arrow_memory

#: Seconds between two returns of freed memory to the system while a table is followed.
TRIM_EVERY_S = 30.0
_trimmed = {"at": 0.0}
_trim_lock = threading.Lock()


def release_freed_memory(every_s: float = TRIM_EVERY_S) -> bool:
    """Return freed pages to the system: Arrow's memory pool's and the C heap's (glibc's `malloc_trim`), at most
    once every `every_s` seconds for the process; whether the C heap was trimmed."""
    now = time.monotonic()
    with _trim_lock:
        if now - _trimmed["at"] < every_s:
            return False
        _trimmed["at"] = now
    release_arrow_memory()
    trim = libc_function("malloc_trim")
    if trim is None:
        return False
    trim(0)
    return True


__all__ = ["fix_mmap_threshold", "release_freed_memory"]
