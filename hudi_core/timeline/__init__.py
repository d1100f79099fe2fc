"""Instants, the active timeline and the decoding of instant bodies."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hudi_core.timeline.instant import Instant, InstantFile, State

if TYPE_CHECKING:
    from hudi_core.timeline.active import ActiveTimeline, Timeline, load_active_timeline

_LAZY = {"ActiveTimeline": "hudi_core.timeline.active", "Timeline": "hudi_core.timeline.active",
         "load_active_timeline": "hudi_core.timeline.active"}


def __getattr__(name: str) -> Any:
    """The active-timeline names on first use (they import pyarrow; instant names do not)."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hudi_core.timeline' has no attribute {name!r}")


__all__ = ["ActiveTimeline", "Instant", "InstantFile", "State", "Timeline", "load_active_timeline"]
