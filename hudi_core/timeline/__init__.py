"""Instants, the active timeline and the decoding of instant bodies."""

from hudi_core.timeline.active import ActiveTimeline, Timeline, load_active_timeline
from hudi_core.timeline.instant import Instant, InstantFile, State

__all__ = ["ActiveTimeline", "Instant", "InstantFile", "State", "Timeline", "load_active_timeline"]
