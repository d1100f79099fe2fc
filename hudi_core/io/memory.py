"""Process memory handed back to the system (the bytes layer: every layer above may call it)."""

from __future__ import annotations

from typing import Any

from hudi_core.lazy import LazyModule

pa: Any = LazyModule("pyarrow")


def release_arrow_memory() -> None:
    """Hand the pages Arrow's allocator keeps after a columnar step's intermediates were freed back to the system
    (they count in the process's memory until then). Imports pyarrow: call it where Arrow was used."""
    pa.default_memory_pool().release_unused()
