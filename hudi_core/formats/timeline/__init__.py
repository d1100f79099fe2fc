"""Timeline formats: instant names and ordering, the active timeline, instant bodies (JSON and Avro), the
archived timeline of both layouts, bulk readers of many bodies, and the derived indexes kept in the user's cache.
Imports only the bytes layer, :mod:`hudi_core.engines` and the shared modules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hudi_core.formats.timeline.instant import Instant, InstantFile, State
from hudi_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hudi_core.formats.timeline.active import ActiveTimeline, Timeline, load_active_timeline

#: The active-timeline names import pyarrow; instant names do not (start-up time).
__getattr__ = lazy_getattr(__name__, {"ActiveTimeline": "hudi_core.formats.timeline.active",
                                      "Timeline": "hudi_core.formats.timeline.active",
                                      "load_active_timeline": "hudi_core.formats.timeline.active"})

__all__ = ["ActiveTimeline", "Instant", "InstantFile", "State", "Timeline", "load_active_timeline"]
