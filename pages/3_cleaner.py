"""Cleaner and archival dry-runs: Hudi config keys in, decisions with reasons out, the timeline
before and after the archival, and the replaced file groups an unguarded archival would expose (the view is
`hudi_core.dashboard.cleaner`); "Follow live" redraws the dry runs in place while the table is written."""

from __future__ import annotations

from typing import Any

import streamlit as st

from hudi_core.dashboard import cleaner, live, loaders, overview, picker, render, scenario_tables
from hudi_core.dashboard.sources import SnapshotSource
from hudi_core.services.config import HUDI_RELEASES, KNOWN_KEYS, ConfigKey

uri, eng = picker.require_table()
ss = st.session_state
st.title("Cleaner & archival dry-run")
overview.hold_until_complete(uri, eng, "every commit body and the archived timeline"
                             " (the clean and archival plans, their guards and markers)")
st.caption("What Hudi's cleaner and archiver would do next (the release you choose), computed read-only. "
           "Nothing is written.")
follow = live.follow_controls("cleaner", guard_widget=False)  # the form below has the guard setting
top = st.container()  # following: the status, banner and event log
if not follow.on:
    live.forget_viewers(ss)
    with render.or_stop():
        loaders.ensure_decoded(uri, eng)
keys = list(KNOWN_KEYS)

MAIN_KEYS = ["hoodie.clean.policy", "hoodie.clean.commits.retained", "hoodie.clean.fileversions.retained",
             "hoodie.clean.hours.retained", "hoodie.keep.min.commits", "hoodie.keep.max.commits",
             "hoodie.archive.beyond.savepoint"]
by_name = {k.name: k for k in keys}
scenario = scenario_tables.scenario_of_table(uri)
seed: dict[str, str] = {}
if scenario:
    seed = {k.name: v for k in keys for n in k.names() for kk, v in scenario.conf.items() if kk == n}
    st.info(f"Built from scenario `{scenario.name}`: the form starts from its configuration "
            + ", ".join(f"`{k}={v}`" for k, v in scenario.conf.items()))


def _default(key: ConfigKey) -> Any:
    """The form's starting value: the scenario's setting, else Hudi's default."""
    if key.name not in seed:
        return key.default
    raw = seed[key.name]
    if key.kind == "bool":
        return str(raw).lower() == "true"
    if key.kind == "int":
        return int(raw)
    return raw


def _widget(key: ConfigKey, container: Any) -> Any:
    """One form widget for a `services.config.ConfigKey`."""
    label = key.name
    help_text = key.description + (f" (also: {', '.join(key.alternatives)})" if key.alternatives else "")
    wkey = f"conf::{uri}::{key.name}"
    start = _default(key)
    if key.choices:
        return container.selectbox(label, list(key.choices), index=list(key.choices).index(start)
                                   if start in key.choices else 0, help=help_text, key=wkey)
    if key.kind == "bool":
        return container.checkbox(label, value=bool(start), help=help_text, key=wkey)
    if key.kind == "int" and start is not None:
        return container.number_input(label, value=int(start), min_value=key.min_int, step=1, help=help_text,
                                      key=wkey)
    return container.text_input(label, value="" if start is None else str(start), help=help_text, key=wkey)


answer_box = st.container()  # the answer goes above the form, once the dry-run below has run
with st.form("dry_run"):
    release = st.selectbox("Emulated Hudi release", list(HUDI_RELEASES), index=len(HUDI_RELEASES) - 1,
                           key="conf::release",
                           help="The cleaner/archiver release the dry-run emulates; recorded in the plans.")
    cols = st.columns(4)
    values = {}
    for n, name in enumerate(k for k in MAIN_KEYS if by_name.get(k) and by_name[k].kind != "bool"):
        values[name] = _widget(by_name[name], cols[n % 4])
    # Checkboxes get a row of their own: in a quarter column their long key names were cut off.
    flags = st.columns(2)
    for name in (k for k in MAIN_KEYS if by_name.get(k) and by_name[k].kind == "bool"):
        values[name] = _widget(by_name[name], flags[0])
    ss.setdefault("conf::guard", live.guard_setting())  # a link's `guard=off`, or the Overview's setting
    guard = flags[1].checkbox(
        "HUDI-7779 guard", key="conf::guard",
        help="Keep instants from the earliest savepoint the latest clean tracked (EarliestCommitToNotArchive).")
    with st.expander("More Hudi keys"):
        more = st.columns(3)
        for n, key in enumerate(k for k in keys if k.name not in MAIN_KEYS):
            values[key.name] = _widget(key, more[n % 3])
    st.form_submit_button("Run dry-run", type="primary")

conf = {}
for name, value in values.items():
    default = by_name[name].default
    if value in ("", None) or value == default or (isinstance(value, float) and value == default):
        continue
    conf[name] = str(value).lower() if isinstance(value, bool) else str(int(value) if isinstance(value, float)
                                                                         else value)
live.remember_guard(bool(guard))

if follow.on:
    live.run(uri, eng, live.FollowSettings(True, follow.interval_s, bool(guard)),
             lambda src: cleaner.results(src, conf, bool(guard), str(release), answer_box), top)
else:
    cleaner.results(SnapshotSource(uri, eng), conf, bool(guard), str(release), answer_box)
