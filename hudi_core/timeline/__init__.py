"""Instants, the active timeline and the decoding of instant bodies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hudi_core.lazy import lazy_getattr
from hudi_core.timeline.instant import Instant, InstantFile, State

if TYPE_CHECKING:
    from hudi_core.timeline.active import ActiveTimeline, Timeline, load_active_timeline

#: The active-timeline names import pyarrow; instant names do not (issue 11).
__getattr__ = lazy_getattr(__name__, {"ActiveTimeline": "hudi_core.timeline.active",
                                      "Timeline": "hudi_core.timeline.active",
                                      "load_active_timeline": "hudi_core.timeline.active"})

__all__ = ["ActiveTimeline", "Instant", "InstantFile", "State", "Timeline", "load_active_timeline"]
