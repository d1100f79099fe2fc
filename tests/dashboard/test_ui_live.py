"""Follow live in the dashboard: the Overview and the Cleaner & archival pages follow a table
played step by step (`scenarios.play.play_scenario`, paused after each step), redrawn from the watcher's state.

AppTest runs the page once per `at.run()` (the fragment's timer does not fire in AppTest: each run is what a timer
rerun would draw). Checked: the event log's rows, the banner (alerts red / orange, cleared green, the exposure
that happened red, the guard amber, the latest change blue), the instants circled in the timeline chart, the dry
runs and markers moving, one watcher shared by two sessions with their own logs, and the pure pieces.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import queue
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from test_ui_pages import assert_clean

from hudi_core import dashboard
from hudi_core.dashboard import PAGES_DIR, live
from hudi_core.errors import Severity
from hudi_core.scenarios.builtin import BUILTIN_DIR, load_builtin
from hudi_core.scenarios.model import Scenario, scenario_from_dict
from hudi_core.scenarios.play import PlayedStep, play_scenario
from hudi_core.services.doctor import Evidence, HealthFinding
from hudi_core.services.watch import EventKind, HoldingGuard, WatchEvent

APP = dashboard.APP
CLEANER = str(PAGES_DIR / "3_cleaner.py")
T = {n: f"2024010100{n:02d}00000" for n in range(1, 11)}  # t1 .. t10 as the scenario writes them
CLEAN = "20240101001001000"


class PausedPlay:
    """Plays a scenario into `out` in a background thread (`play_scenario`), pausing after every step until
    :meth:`next` lets the next one go."""

    def __init__(self, scenario: Scenario, out: Path) -> None:
        self.scenario = scenario
        self._go = threading.Semaphore(0)
        self._done: queue.Queue[PlayedStep] = queue.Queue()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=play_scenario, args=(scenario, out, 9),
                                       kwargs={"interval": 0, "on_step": self._on_step, "stop": self.stop},
                                       daemon=True)
        self.thread.start()
        self.step = self._done.get(timeout=60)  # step 0 (t1) written

    def _on_step(self, step: PlayedStep) -> None:
        self._done.put(step)
        self._go.acquire()

    def next(self) -> PlayedStep:
        self._go.release()
        self.step = self._done.get(timeout=60)
        return self.step

    def until(self, index: int) -> None:
        while self.step.index < index:
            self.next()

    def close(self) -> None:
        self.stop.set()
        self._go.release()
        self.thread.join(timeout=30)


def unguarded_case_b() -> Scenario:
    """hudi7779_case_b with an archival without the HUDI-7779 guard (as `make demo GUARD=off` plays it)."""
    raw = json.loads((BUILTIN_DIR / "hudi7779_case_b.json").read_text(encoding="utf-8"))
    for step in raw["steps"]:
        if step["op"] == "archive":
            step["savepoint_guard"] = False
    return scenario_from_dict(raw)


@pytest.fixture
def live_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HUDI_INSPECTOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HUDI_INSPECTOR_ROOTS", str(tmp_path))
    st.cache_data.clear()
    st.cache_resource.clear()
    # Named as the dashboard names scenario tables: the watcher and the dry runs take the scenario's conf.
    return tmp_path / "hudi7779_case_b-v9"


@pytest.fixture
def played(live_env: Path) -> Iterator[PausedPlay]:
    play = PausedPlay(load_builtin("hudi7779_case_b"), live_env)
    yield play
    play.close()


def follow(table: Path, page: str | None = None, **params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params.update({"table": str(table), "follow": "1", "interval": "0.5", **params})
    at.run()
    if page:
        at.switch_page(page).run()
    assert_clean(at)
    return at


def rerun(at: AppTest) -> AppTest:
    """What the fragment's next timer run draws: half an interval later the watcher polls again."""
    time.sleep(0.3)
    at.run()
    assert_clean(at)
    return at


BOX = re.compile(r'<div class="hti-live (\w+)"[^>]*><b>(.*?)</b> — (.*?)</div>')


def banner(at: AppTest) -> list[tuple[str, str, str]]:
    """(tone, title, text) of every banner box."""
    return [(tone, html.unescape(title), html.unescape(text)) for md in at.markdown
            for tone, title, text in BOX.findall(str(md.value))]


def log(at: AppTest) -> list[dict[str, Any]]:
    """The event log's rows, latest first."""
    frame = next(d.value for d in at.dataframe if list(d.value.columns) == ["time", "event", "instant", "action",
                                                                                "details"])
    return frame.to_dict("records")


def circled(at: AppTest) -> list[str]:
    """The hover texts of the instants the timeline chart circles as new."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return [t for spec in specs for trace in spec["data"] if trace.get("name") == live.NEW_LABEL
            for t in trace.get("hovertext", [])]


def glance(at: AppTest) -> str:
    return next(str(md.value) for md in at.markdown if str(md.value).startswith("**At a glance**"))


# -- the Overview, step by step ------------------------------------------------------------------------------


def test_overview_follows_the_played_scenario_in_place(played: PausedPlay, live_env: Path) -> None:
    played.until(2)  # t1, t2, t3 written before the page opens
    at = follow(live_env)
    assert at.toggle(key="follow::overview").value is True
    assert [b[:2] for b in banner(at)] == [("blue", "No change yet")]
    assert log(at) == [] and circled(at) == []
    assert at.metric[3].label == "Active instants" and at.metric[3].value == "3"

    played.next()  # the savepoint on t3
    rerun(at)
    rows = log(at)
    assert [(r["event"], r["instant"], r["action"]) for r in rows] == [
        ("marker_moved", T[3], ""), ("completed", T[3], "savepoint"), ("inflight", T[3], "savepoint")]
    assert rows[0]["details"] == f"Savepoint: – → {T[3]}"
    assert rows[1]["details"] == f"completed at 20240101000300500 · {T[3]}_20240101000300500.savepoint"
    assert circled(at) == [f"new since you followed: savepoint {T[3]}"]
    assert "savepoint(s) `20240101000300000`" in glance(at)

    played.next()  # t4: the replacecommit (clustering) of t3's file group
    rerun(at)
    assert [(r["event"], r["action"]) for r in log(at)[:3]] == [
        ("completed", "replacecommit"), ("inflight", "clustering"), ("requested", "clustering")]
    tone, title, text = banner(at)[-1]
    assert tone == "blue" and title.startswith("Latest change ")
    assert text == f"clustering {T[4]} requested · clustering {T[4]} inflight · replacecommit {T[4]} completed"
    assert f"new since you followed: replacecommit {T[4]}" in circled(at)
    assert at.metric[3].value == "5"  # t1..t4 and the savepoint

    played.until(7)  # t5..t7 in one poll: the next clean's ECTR appears, archival is due, the savepoint holds it
    rerun(at)
    assert "next clean's ECTR `20240101000400000`" in glance(at)
    assert ("amber", "Archival held by guard savepoint",
            f"at {T[3]}: nothing at or after the first savepoint {T[3]} is archived") in banner(at)
    moved = [r["details"] for r in log(at) if r["event"] == "marker_moved"]
    assert moved == [f"Archival boundary (next archival): – → {T[3]}",
                     f"EarliestCommitToNotArchive (proposed): – → {T[3]}", f"ECTR (recomputed): – → {T[4]}",
                     f"Savepoint: – → {T[3]}"]

    played.until(12)  # the clean, then the savepoint deleted: guard A3 holds archival at the replacecommit
    rerun(at)
    guards = [b for b in banner(at) if b[0] == "amber"]
    assert [g[1] for g in guards] == ["Archival held by guard A3"] and guards[0][2].startswith(f"at {T[4]}: ")
    assert "next archival stops at `20240101000400000` (guard A3)" in glance(at)
    assert not [b for b in banner(at) if b[0] == "red"]  # with the guard: nothing would be exposed

    played.next()  # the archival, guarded: t1..t3 archived
    rerun(at)
    archived = [(r["instant"], r["action"]) for r in log(at) if r["event"] == "archived"]
    assert archived == [(T[3], "commit"), (T[2], "commit"), (T[1], "commit")]
    assert at.metric[4].label == "Archived instants" and at.metric[4].value == "3"
    rows = log(at)
    # Every event once: instants, markers, guards and the alerts of the doctor's checks (raised and cleared).
    assert len(rows) == len({str(r) for r in rows}) == 52
    kinds = {k: sum(1 for r in rows if r["event"] == k) for k in ("requested", "inflight", "completed", "archived")}
    # t4..t10 and the clean requested, inflight and completed; the savepoint inflight and completed (no requested)
    assert kinds == {"requested": 8, "inflight": 9, "completed": 9, "archived": 3}
    assert dict(at.query_params)["follow"] == "1"


def test_guard_off_raises_the_exposure_alert_and_shows_it_happen(live_env: Path) -> None:
    play = PausedPlay(unguarded_case_b(), live_env)
    try:
        play.until(11)
        at = follow(live_env, guard="off")
        assert at.checkbox(key="guard::overview").value is False
        assert not [b for b in banner(at) if b[0] == "red"]
        play.next()  # the savepoint deleted: the next archival without the guard would take the replacecommit t4
        rerun(at)
        red = [b for b in banner(at) if b[0] == "red"]
        assert len(red) == 1 and red[0][1] == "Alert: archival_exposes_replaced"
        assert red[0][2].startswith(f"the next archival (without the HUDI-7779 guard) takes replacecommit {T[4]}: "
                                    "region=us/") and "(raised " in red[0][2]
        assert at.toast[0].value.startswith("Raised: the next archival (without the HUDI-7779 guard)")
        alert = next(r for r in log(at) if r["event"] == "alert" and "archival_exposes_replaced" in r["details"])
        assert alert["instant"] == T[4] and alert["details"].startswith("error raised [archival_exposes_replaced] ")
        play.next()  # the archival without the guard takes t1..t5: the replaced group is visible again
        time.sleep(0.3)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        # The Overview's verdict turns red with the exposure (the only error box).
        (verdict,) = [e.value for e in at.error]
        assert verdict.startswith("**Readers of this table fail or see wrong data.** region=us/")
        assert f"replaced by archived {T[4]}, is visible again" in verdict
        red = [b for b in banner(at) if b[0] == "red"]
        # The doctor's check of a group visible again raises its alert with the archival's own banner.
        assert [r[1] for r in red] == ["Alert: replaced_visible_again",
                                       f"Exposed: the archival took replacecommit {T[4]}"]
        # Not good news: the only greens are conditions the archival ended (it ran), never the exposure.
        greens = [b[1] for b in banner(at) if b[0] == "green"]
        assert greens and all(g.startswith("Cleared: ") and "expos" not in g for g in greens)
        archived = sorted(r["instant"] for r in log(at) if r["event"] == "archived")
        assert archived == [T[1], T[2], T[3], T[4], T[5]]
        assert f"Exposed: the archival took replacecommit {T[4]}" in [t.value for t in at.toast]
    finally:
        play.close()


def test_cleaner_page_dry_runs_follow_the_table(played: PausedPlay, live_env: Path) -> None:
    played.until(10)
    at = follow(live_env, CLEANER)
    assert at.toggle(key="follow::cleaner").value is True
    f = live_facts(at)
    assert f["ECTR (next clean)"] == T[7] and f["Would schedule"] == "yes"
    assert answer(at).startswith(f"Archival stops at `{T[3]}`: guard **savepoint**")
    played.next()  # the clean
    rerun(at)
    assert live_facts(at)["Would schedule"] == "no"
    assert any(r["event"] == "completed" and r["action"] == "clean" and r["instant"] == CLEAN for r in log(at))
    played.next()  # the savepoint deleted: A3 now stops archival at the replacecommit
    rerun(at)
    assert answer(at).startswith(f"Archival stops at `{T[4]}`: guard **A3** (HUDI-7779)")
    assert "Without the HUDI-7779 guard the archival would expose 1 replaced file group(s)" in " ".join(
        str(w.value) for w in at.warning)
    assert ("amber", "Archival held by guard A3") in [b[:2] for b in banner(at)]


def answer(at: AppTest) -> str:
    """The Cleaner page's answer (a success, warning or info box, whichever its tone)."""
    return next(str(e.value) for e in [*at.success, *at.warning, *at.info] if str(e.value).startswith("Archival"))


FACT = re.compile(r'<div class="l">(.*?)</div><div class="v(?: mono)?">(.*?)</div>')


def live_facts(at: AppTest) -> dict[str, str]:
    return {html.unescape(k): html.unescape(v) for md in at.markdown for k, v in FACT.findall(str(md.value))}


def test_one_watcher_shared_by_two_sessions_each_with_its_own_log(played: PausedPlay, live_env: Path) -> None:
    first = follow(live_env, interval="10")
    table = live.live_table_for(str(live_env), "local", True)
    polls = table.watcher.follower.polls
    second = follow(live_env, interval="10")  # within half an interval: the first session's poll is reused
    assert live.live_table_for(str(live_env), "local", True) is table
    assert table.watcher.follower.polls == polls
    played.next()  # t2
    time.sleep(5.1)
    first.run()
    assert table.watcher.follower.polls == polls + 1
    assert [r["event"] for r in log(first)] == ["completed", "inflight", "requested"]
    third = follow(live_env, interval="10")  # starts following after t2: its log starts empty
    assert log(third) == [] and circled(third) == []
    second.run()
    assert table.watcher.follower.polls == polls + 1  # the poll of `first` served both
    assert [r["instant"] for r in log(second)] == [T[2]] * 3
    assert circled(second) == [f"new since you followed: commit {T[2]}"]


def test_snapshot_view_when_follow_is_off(played: PausedPlay, live_env: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params["table"] = str(live_env)
    at.run()
    assert_clean(at)
    assert at.toggle(key="follow::overview").value is False and "follow" not in at.query_params
    assert not banner(at) and circled(at) == []
    at.toggle(key="follow::overview").set_value(True).run()
    assert_clean(at)
    assert at.query_params["follow"] == "1" and banner(at)[0][1] == "No change yet"


# -- the pure pieces -----------------------------------------------------------------------------------------


NOW = dt.datetime(2024, 6, 1, 12, 0, 0, tzinfo=dt.UTC)


def event(kind: EventKind, instant: str | None = None, action: str | None = None, at: str = "11:59:50.000",
          **fields: Any) -> WatchEvent:
    return WatchEvent(f"2024-06-01T{at}Z", kind, instant, action, fields)


def finding(check: str, severity: Severity, title: str, instants: tuple[str, ...]) -> HealthFinding:
    return HealthFinding(check, severity, title, Evidence(instants=instants), "why", "what to do")


def test_event_rows_latest_first_with_details() -> None:
    events = [event(EventKind.REQUESTED, T[4], "clustering", state="REQUESTED", file="x.clustering.requested",
                    pending_action="clustering"),
              event(EventKind.ROLLED_BACK, T[5], "commit", state="INFLIGHT", by="20240101000600000",
                    by_action="rollback"),
              event(EventKind.ARCHIVED, T[1], "commit", state="COMPLETED", completion_time="20240101000100300"),
              event(EventKind.MARKER_MOVED, T[7], label="ECTR (recorded)", **{"from": None, "to": T[7]}),
              event(EventKind.GUARD, T[4], guard="A3", status="holding", boundary=T[4], detail="first replace"),
              event(EventKind.ALERT, T[4], check="pending_instant", severity="warning", status="cleared",
                    title="stale", instants=[T[4]], at="11:59:59.123")]
    rows = live.event_rows(events)
    assert list(rows.columns) == ["time", "event", "instant", "action", "details"]
    assert rows.to_dict("records") == [
        {"time": "11:59:59.123", "event": "alert", "instant": T[4], "action": "",
         "details": "warning cleared [pending_instant] stale"},
        {"time": "11:59:50.000", "event": "guard", "instant": T[4], "action": "",
         "details": f"A3 holding archival at {T[4]}: first replace"},
        {"time": "11:59:50.000", "event": "marker_moved", "instant": T[7], "action": "",
         "details": f"ECTR (recorded): – → {T[7]}"},
        {"time": "11:59:50.000", "event": "archived", "instant": T[1], "action": "commit",
         "details": "completed, completed at 20240101000100300"},
        {"time": "11:59:50.000", "event": "rolled_back", "instant": T[5], "action": "commit",
         "details": "by rollback 20240101000600000"},
        {"time": "11:59:50.000", "event": "requested", "instant": T[4], "action": "clustering",
         "details": "planned as clustering · x.clustering.requested"}]
    assert len(live.event_rows(events, limit=2)) == 2
    more = [*events, event(EventKind.COMPLETED, T[3], "savepoint"), event(EventKind.COMPLETED, T[4], "replacecommit")]
    assert live.new_instants(more) == (T[4], (T[3], "savepoint"))


def test_banner_tones() -> None:
    since = NOW - dt.timedelta(minutes=10)
    raised = event(EventKind.ALERT, T[4], check="archival_exposes_replaced", severity="error", status="raised",
                   title="the next archival takes replacecommit", instants=[T[4]], at="11:58:00.000")
    stale = finding("pending_instant", Severity.WARNING, "clean pending for 30 h", (CLEAN,))
    exposure = finding("archival_exposes_replaced", Severity.ERROR, "the next archival takes replacecommit", (T[4],))
    items = live.banner_items([raised], [exposure, stale], HoldingGuard("A3", T[4], "first replace"), NOW, since)
    assert [(i.tone, i.title) for i in items] == [
        ("red", "Alert: archival_exposes_replaced"), ("orange", "Alert: pending_instant"),
        ("amber", "Archival held by guard A3"), ("blue", "No change yet")]
    assert items[0].text == "the next archival takes replacecommit (raised 11:58:00.000 UTC)"
    assert items[1].text == "clean pending for 30 h (in force when you started)"
    cleared = event(EventKind.ALERT, CLEAN, check="pending_instant", severity="warning", status="cleared",
                    title="clean pending for 30 h", instants=[CLEAN], at="11:59:00.000")
    commit = event(EventKind.COMPLETED, T[8], "commit", at="11:59:30.000")
    items = live.banner_items([cleared, commit], [], None, NOW, since)
    assert [(i.tone, i.title, i.text) for i in items] == [
        ("green", "Cleared: pending_instant", "clean pending for 30 h (cleared 11:59:00.000 UTC)"),
        ("blue", "Latest change 11:59:30.000 UTC (30 s ago)", f"commit {T[8]} completed")]
    # A cleared alert leaves the banner after CLEARED_SHOWN_S seconds; an exposure that happened stays, in red.
    later = NOW + dt.timedelta(seconds=live.CLEARED_SHOWN_S)
    assert [i.tone for i in live.banner_items([cleared, commit], [], None, later, since)] == ["blue"]
    gone = event(EventKind.ALERT, T[4], check="archival_exposes_replaced", severity="error", status="cleared",
                 title="the next archival takes replacecommit", instants=[T[4]], at="11:59:40.000")
    took = event(EventKind.ARCHIVED, T[4], "replacecommit", at="11:59:40.000", state="COMPLETED")
    items = live.banner_items([raised, took, gone], [], None, later, since)
    assert [(i.tone, i.title) for i in items] == [("red", f"Exposed: the archival took replacecommit {T[4]}"),
                                                 ("blue", "Latest change 11:59:40.000 UTC (140 s ago)")]
    assert live.notices([took, gone]) == [(f"Exposed: the archival took replacecommit {T[4]}", False)]
    assert live.notices([cleared]) == [("Cleared: clean pending for 30 h", True)]
    markup = live.banner_html([live.BannerItem("red", "<b>", "a & b")])
    assert 'class="hti-live red"' in markup and "&lt;b&gt;" in markup and "a &amp; b" in markup


def test_live_table_memo_computes_once_per_state_and_stays_bounded() -> None:
    table = live.LiveTable(watcher=None)  # type: ignore[arg-type]
    calls: list[int] = []
    for version in (1, 1, 2, 2, 1):
        table.memo(version, "facts", lambda v=version: calls.append(v) or v)
    assert calls == [1, 2, 1]  # an older state's view is not kept once a newer state was asked for
    assert len(table) == 1
    for n in range(live.MEMO_ENTRIES + 10):
        table.memo(3, ("timeline", n), lambda n=n: n)
    assert len(table) == live.MEMO_ENTRIES


def test_url_settings_parse() -> None:
    assert live.parse_flag("1") and live.parse_flag("on") and not live.parse_flag("off")
    assert live.parse_interval("0.5") == 0.5 and 2.0 in live.INTERVALS


def test_heap_helpers_run_on_glibc_and_are_rate_limited() -> None:
    import ctypes.util

    glibc = bool(ctypes.util.find_library("c")) and hasattr(ctypes.CDLL(None), "malloc_trim")
    assert live.fix_mmap_threshold() is glibc
    assert live.release_freed_memory(every_s=0.0) is glibc
    assert live.release_freed_memory(every_s=3600.0) is False  # ran a moment ago: not again within the hour
