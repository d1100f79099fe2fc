"""Overview: table facts and configuration, findings, phase timings, markers, the timeline chart and counts
(the view is `hudi_core.dashboard.overview`); "Follow live" redraws it in place while the table is written."""

from __future__ import annotations

import streamlit as st

from hudi_core.dashboard import live, loaders, overview, picker, render
from hudi_core.dashboard.sources import SnapshotSource

uri, eng = picker.require_table()
follow = live.follow_controls("overview")
if follow.on:
    live.run(uri, eng, follow, lambda src: overview.page(src, fragments=False))  # redrawn whole, in its fragment
else:
    live.forget_viewers(st.session_state)
    with render.or_stop():
        # A heavy timeline: the first look now, the rest decoded in the background.
        pending = loaders.first_look_pending(uri, eng)
        if pending is None:
            loaders.ensure_decoded(uri, eng)
    if pending is None:
        finished = loaders.finished_first_look(uri, eng)
        overview.late_health(finished)
        overview.page(SnapshotSource(uri, eng))
        overview.background_times(finished)
    else:
        overview.first_look(SnapshotSource(uri, eng), *pending)
