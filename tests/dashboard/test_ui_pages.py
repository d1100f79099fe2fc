"""Streamlit AppTest tests of every dashboard page, on fixture tables and built-in scenarios.

Each test opens `app.py` with a table in the URL (as a pasted link would), switches to a page and
checks the key elements: markers, decisions, verdicts. No page may raise or show an error box.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from hudi_core import dashboard
from hudi_core.dashboard import PAGES_DIR
from hudi_core.scenarios.builtin import builtin_names

APP = dashboard.APP  # the entry script shipped in the package, pages/ beside it
OVERVIEW = str(PAGES_DIR / "1_overview.py")
INSTANT = str(PAGES_DIR / "2_instant.py")
CLEANER = str(PAGES_DIR / "3_cleaner.py")
FILE_GROUPS = str(PAGES_DIR / "4_file-groups.py")
LOG_BLOCKS = str(PAGES_DIR / "5_log-blocks.py")
SCENARIOS = str(PAGES_DIR / "6_scenarios.py")
HEALTH = str(PAGES_DIR / "0_health.py")
ALL_PAGES = [OVERVIEW, HEALTH, INSTANT, CLEANER, FILE_GROUPS, LOG_BLOCKS, SCENARIOS]


@pytest.fixture(scope="module")
def ui_env(tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path) -> Iterator[dict[str, Path]]:
    """A private cache (demo and scenario tables are built there) and roots: fixtures + that cache."""
    cache = tmp_path_factory.mktemp("ui-cache")
    extra = tmp_path_factory.mktemp("ui-tables")
    mp = pytest.MonkeyPatch()
    mp.setenv("HUDI_INSPECTOR_CACHE", str(cache))
    mp.setenv("HUDI_INSPECTOR_ROOTS", f"{fixtures_dir},{extra}")
    yield {"cache": cache, "extra": extra}
    mp.undo()


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()


def open_page(page: str, table: Path | str | None = None, **params: Any) -> AppTest:
    """Run the app with `table` (and other query parameters) in the URL, then switch to `page`."""
    at = AppTest.from_file(str(APP), default_timeout=90)
    if table is not None:
        at.query_params["table"] = str(table)
    for key, value in params.items():
        at.query_params[key] = str(value)
    at.run()
    if page != OVERVIEW:
        at.switch_page(page).run()
    assert_clean(at)
    return at


def assert_clean(at: AppTest) -> None:
    """No exception and no error box anywhere on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


FACT = re.compile(r'<div class="l">(.*?)</div><div class="v( mono)?">(.*?)</div>')


def facts(at: AppTest) -> dict[str, tuple[str, bool]]:
    """Label → (value, shown in the monospace never-truncated style) of every `render.facts` strip."""
    return {html.unescape(label): (html.unescape(value), bool(mono)) for md in at.markdown
            for label, mono, value in FACT.findall(str(md.value))}


def metrics(at: AppTest) -> dict[str, str]:
    """Every labelled value on the page: `st.metric`s and `render.facts` strips."""
    return {**{m.label: m.value for m in at.metric}, **{k: v for k, (v, _) in facts(at).items()}}


def timeline_spec(at: AppTest) -> dict[str, Any]:
    """The timeline chart (the one with lanes on its y axis)."""
    return next(s for s in chart_specs(at) if s["layout"].get("yaxis", {}).get("ticktext"))


def chart_specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def frames_text(at: AppTest) -> str:
    return " ".join(d.value.to_csv() for d in at.dataframe)


def texts(elements: Any) -> str:
    return " ".join(str(e.value) for e in elements)


# -- the picker -------------------------------------------------------------------------------------


def test_the_phase_tables_are_drawn_when_asked_for(ui_env: dict[str, Path]) -> None:
    """The open Phase timings tab sends its two tables only when their toggle is on: a table in a closed
    expander would be sent and drawn with every reload."""
    at = open_page(OVERVIEW)
    columns = [set(d.value.columns) for d in at.dataframe]
    assert not any("median_ms" in c or "p95_ms" in c for c in columns)
    at.toggle(key="show_durations").set_value(True).run()
    assert_clean(at)
    durations = next(d.value for d in at.dataframe if "median_ms" in d.value.columns)
    assert set(durations["action"]) >= {"commit", "clean"}


def test_first_start_opens_the_demo_scenario_with_its_markers(ui_env: dict[str, Path]) -> None:
    at = open_page(OVERVIEW)
    demo = at.query_params["table"]
    assert demo.endswith("scenario-hudi7779_case_b-v9") and demo.startswith(str(ui_env["cache"]))
    frame = frames_text(at)
    for label in ("ECTR (recorded)", "ECTR (recomputed)", "EarliestCommitToNotArchive (proposed)",
                  "EarliestCommitToNotArchive (Hudi)", "Archival boundary (next archival)", "Archived | active"):
        assert label in frame
    timeline = timeline_spec(at)
    shapes = {s.get("name") for s in timeline["layout"]["shapes"]}
    assert {"ectr_recorded", "ectr_recomputed", "ectna_proposed", "ectna_hudi", "archival_boundary",
            "archived region", "active region"} <= shapes
    m = metrics(at)
    assert int(m["Archived instants"]) > 0 and m["Type"] == "COW"
    glance = next(md.value for md in at.markdown if str(md.value).startswith("**At a glance**"))
    assert "next archival stops at `20240101000400000` (guard A3)" in glance
    assert "recorded ECTR `20240101000700000`" in glance
    labels = [a["text"] for a in timeline["layout"]["annotations"]]
    assert any("<b>20240101000700000</b>" in t and "ECTR" in t for t in labels)  # full instant time on the chart
    assert len({a["yshift"] for a in timeline["layout"]["annotations"]}) >= 2  # crowded labels are stacked
    # Dates and times on the axis (the demo table's zone), instant strings in the hover.
    assert "tickformat" not in timeline["layout"]["xaxis"] and timeline["layout"]["xaxis"]["type"] == "date"
    assert timeline["layout"]["xaxis"]["title"]["text"].startswith("time (")
    hover = " ".join(h for t in timeline["data"] for h in (t.get("hovertext") or []) if isinstance(h, str))
    assert "20240101000700000" in hover
    # No note about engine parts that are "not built in yet": every part is.
    everything = texts([*at.info, *at.caption, *at.markdown])
    assert "built in" not in everything and "not available" not in everything


def test_paths_outside_the_roots_are_refused(ui_env: dict[str, Path], fixtures_dir: Path) -> None:
    for bad in ("/etc", f"{fixtures_dir}/../..", str(ui_env["extra"]) + "/../elsewhere"):
        at = AppTest.from_file(str(APP), default_timeout=90)
        at.query_params["table"] = bad
        at.run()
        assert not at.exception
        assert "outside the allowed roots" in texts(at.sidebar.error)
        assert at.query_params["table"] != bad  # the demo stays open instead
    link = ui_env["extra"] / "link-out"
    link.symlink_to("/etc")
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params["table"] = str(link)
    at.run()
    assert "resolves to /etc" in texts(at.sidebar.error)


def test_sidebar_form_opens_a_table_and_remembers_it(ui_env: dict[str, Path],
                                                     table_path: Callable[[str], Path]) -> None:
    at = open_page(OVERVIEW)
    target = table_path("v6_nonpartitioned")
    at.sidebar.text_input[0].set_value(str(target))
    at.sidebar.button[0].click().run()  # the form's "Open"
    assert_clean(at)
    assert at.query_params["table"] == str(target.resolve())
    assert at.title[0].value == "v6_nonpartitioned"
    recent = json.loads((ui_env["cache"] / "recent.json").read_text())
    assert recent[0] == str(target.resolve())


# -- pages on fixture tables ----------------------------------------------------------------------


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_page_renders_on_a_fixture_table(ui_env: dict[str, Path], table_path: Callable[[str], Path],
                                              page: str) -> None:
    at = open_page(page, table_path("v9_txns_simple_meta"))
    assert at.title, "every page has a title"


def test_overview_counts_filters_and_replacecommit_hover(ui_env: dict[str, Path],
                                                         table_path: Callable[[str], Path]) -> None:
    table = table_path("v6_simplekeygen_nonhivestyle_overwritetable")
    at = open_page(OVERVIEW, table, tab="counts")  # only the open tab is drawn
    counts = next(d.value for d in at.dataframe if list(d.value.columns)[:2] == ["action", "COMPLETED"])
    assert counts.set_index("action")["COMPLETED"].to_dict() == {"commit": 2, "replacecommit": 1}
    timeline = timeline_spec(at)
    hover = " ".join(h for t in timeline["data"] for h in (t.get("hovertext") or []) if isinstance(h, str))
    assert "replaced" in hover and "file group(s)" in hover and "operation INSERT_OVERWRITE_TABLE" in hover
    filtered = open_page(OVERVIEW, table, actions="replacecommit")
    assert timeline_spec(filtered)["layout"]["yaxis"]["ticktext"] == ["replacecommit"]
    assert filtered.query_params["actions"] == "replacecommit"
    assert "1 of 3 instants shown" in texts(filtered.caption)


def test_overview_draws_only_the_open_tab_and_keeps_it_through_a_filter(
        ui_env: dict[str, Path], table_path: Callable[[str], Path]) -> None:
    """Only the open tab's content is drawn (the others' labels only); the tab is in the URL; a timeline filter
    relabels the Instants tab and filters its rows while that tab stays open."""
    table = table_path("v6_simplekeygen_nonhivestyle_overwritetable")
    at = open_page(OVERVIEW, table)
    assert [t.label for t in at.tabs] == ["Phase timings", "Durations", "Counts", "Instants (3)",
                                          "Configuration and facts", "Timeline decode findings (0)"]
    assert not any(list(d.value.columns)[:2] == ["action", "COMPLETED"] for d in at.dataframe)  # Counts: closed
    assert "tab" not in at.query_params  # the first tab is the default
    at = open_page(OVERVIEW, table, tab="instants")
    assert at.query_params["tab"] == "instants"
    assert not any(s["layout"].get("yaxis", {}).get("title", {}).get("text") == "duration (s)"
                   for s in chart_specs(at))  # Durations: closed
    next(m for m in at.multiselect if m.label == "Actions").set_value(["replacecommit"]).run()
    assert_clean(at)
    assert [t.label for t in at.tabs][3] == "Instants (1)"
    instants = next(d.value for d in at.dataframe if "requested_time" in d.value.columns and "action" in d.value)
    assert instants["action"].tolist() == ["replacecommit"]
    assert at.query_params["tab"] == "instants" and at.query_params["actions"] == "replacecommit"


def test_overview_phase_cards_and_table_configuration(ui_env: dict[str, Path]) -> None:
    """Summary cards (instants per state, time span, median / p95 per action), the duration chart, the
    timeline's two-shade phase bars, and the filterable table configuration with the backup's differences."""
    from hudi_core.scenarios.build import build_scenario
    from hudi_core.scenarios.builtin import load_builtin

    r = build_scenario(load_builtin("hudi7779_case_b"), ui_env["extra"] / "phases-case-b", 9, metadata_table=True)
    props = Path(r.uri) / ".hoodie" / "hoodie.properties"
    (props.parent / "hoodie.properties.backup").write_text(props.read_text())
    props.write_text(props.read_text().replace("hoodie.table.version=9", "hoodie.table.version=8")
                     + "my.team.owner=data-eng\n")
    at = open_page(OVERVIEW, r.uri)
    m = metrics(at)
    assert (m["Completed"], m["Inflight"], m["Requested"]) == ("11", "0", "0")
    assert m["Time span"] == "9 min 2 s"  # the first request (t1) to the last completion (the clean)
    assert m["commit"] == "median 600 ms" and m["clean"] == "median 900 ms"
    sub = " ".join(str(md.value) for md in at.markdown)
    assert "p95 840 ms" in sub and "mdt 500 ms" in sub
    assert not any(s["layout"].get("yaxis", {}).get("title", {}).get("text") == "duration (s)"
                   for s in chart_specs(at))  # the duration chart has a tab of its own
    names = {t.get("name") for t in timeline_spec(at)["data"]}
    assert {"commit: requested → inflight", "commit: inflight → completed", "requested → inflight"} <= names
    at = open_page(OVERVIEW, r.uri, tab="durations")
    durations = next(s for s in chart_specs(at) if s["layout"].get("yaxis", {}).get("title", {}).get("text")
                     == "duration (s)")
    assert {t["name"] for t in durations["data"]} == {"commit", "clean", "clustering"}
    names = {t.get("name") for t in timeline_spec(at)["data"]}
    assert {"commit: requested → inflight", "commit: inflight → completed", "requested → inflight"} <= names
    at = open_page(OVERVIEW, r.uri, tab="configuration")
    config = next(d.value for d in at.dataframe if "differs_from_backup" in d.value.columns)
    rows = config.set_index("key")
    assert rows.loc["my.team.owner", "known"] == False  # noqa: E712 (numpy bool)
    assert rows.loc["hoodie.table.version", "differs_from_backup"] == True  # noqa: E712
    assert rows.loc["hoodie.table.type", "default"] == "COPY_ON_WRITE"
    backup = next(d.value for d in at.dataframe if "backup_value" in d.value.columns)
    assert backup.to_dict("records") == [
        {"key": "hoodie.table.version", "change": "changed", "value": "8", "backup_value": "9"},
        {"key": "my.team.owner", "change": "added", "value": "data-eng", "backup_value": None}]
    assert any("hoodie.properties.backup` is left over" in str(w.value) for w in at.warning)
    filtered = open_page(OVERVIEW, r.uri, config="merge", tab="configuration")
    shown = next(d.value for d in filtered.dataframe if "differs_from_backup" in d.value.columns)
    assert "hoodie.record.merge.mode" in shown["key"].tolist() and len(shown) < len(config)
    assert all("merge" in f"{r.key} {r.value} {r.meaning}".lower() for r in shown.itertuples())
    assert filtered.query_params["config"] == "merge"


def test_instant_detail_shows_replaced_groups_and_write_stats(ui_env: dict[str, Path],
                                                              table_path: Callable[[str], Path]) -> None:
    at = open_page(INSTANT, table_path("v6_simplekeygen_nonhivestyle_overwritetable"), instant="20240707001303088")
    m = metrics(at)
    assert m["Action"] == "replacecommit" and m["Operation"] == "INSERT_OVERWRITE_TABLE"
    assert at.query_params["instant"] == "20240707001303088"
    replaced = next(d.value for d in at.dataframe if list(d.value.columns) == ["partition", "file_id"])
    assert len(replaced) >= 1 and replaced["file_id"].str.len().min() > 10
    stats = next(d.value for d in at.dataframe if "num_writes" in d.value.columns)
    assert stats["num_writes"].sum() > 0
    labels = [b.label for b in at.get("download_button")]
    assert any(label.startswith("⬇ replaced_20240707001303088") for label in labels)
    assert any(label.startswith("⬇ instant_20240707001303088.json") for label in labels)


def test_instant_detail_of_a_rollback_names_what_it_rolled_back(ui_env: dict[str, Path],
                                                               table_path: Callable[[str], Path]) -> None:
    at = open_page(INSTANT, table_path("v6_nonpartitioned_rollback"), instant="20250126040936578")
    assert metrics(at)["Action"] == "rollback"
    assert "20250126040823628" in frames_text(at)


def test_file_groups_as_of_and_replaced_groups(ui_env: dict[str, Path], table_path: Callable[[str], Path]) -> None:
    table = table_path("v6_simplekeygen_nonhivestyle_overwritetable")
    latest_at = open_page(FILE_GROUPS, table)
    latest = metrics(latest_at)
    answer = texts([*latest_at.success, *latest_at.warning])
    assert (f"{latest['File groups']} file group(s) in {latest['Partitions']} partition(s), latest; "
            f"{latest['Replaced groups']} replaced") in answer
    assert sum("latest_base_file" in d.value.columns for d in latest_at.dataframe) == 1  # shown once, styled
    early = open_page(FILE_GROUPS, table, as_of="20240707001301554")
    assert early.query_params["as_of"] == "20240707001301554"
    assert int(latest["Replaced groups"]) > 0
    assert int(metrics(early)["Slices"]) < int(latest["Slices"])


def test_log_blocks_on_a_mor_fixture(ui_env: dict[str, Path], table_path: Callable[[str], Path]) -> None:
    at = open_page(LOG_BLOCKS, table_path("v6_nonpartitioned_rollback"))
    m = metrics(at)
    assert int(m["Log files"]) > 0 and int(m["Blocks"]) > 0
    assert "commit_metadata" in frames_text(at)


def test_log_blocks_verdicts_and_risk_flags_on_the_hudi6758_table(ui_env: dict[str, Path]) -> None:
    from hudi_core.scenarios.log_tables import build_log_scenario_table

    root = ui_env["extra"] / "hudi6758"
    build_log_scenario_table(root, 9, ["s2_retry_longer", "speculative_lower_committed"])
    at = open_page(LOG_BLOCKS, root)
    m = metrics(at)
    assert int(m["Instants with duplicates"]) == 2 and int(m["Risk flags"]) >= 1
    severe = [w.value for w in at.warning if w.proto.icon == ":material/dangerous:"]
    assert any("DROPS_COMMITTED_BLOCKS" in w and "(proposal)" in w for w in severe)
    assert any("DROPS_COMMITTED_BLOCKS" in w and "(hudi_014)" in w for w in severe)
    verdicts = next(d.value for d in at.dataframe if "proposal" in d.value.columns and "risk" in d.value.columns)
    rows = verdicts.set_index("partition")
    spec = rows.loc["scenario=speculative_lower_committed"]
    assert spec["attempts"] == "attempt:0[0,1] attempt:1[0,1]" and spec["risk"] == "error"
    assert spec["proposal"] == "applied: keeps ['attempt:1']"
    assert spec["hudi_014"] == "applied: keeps ['attempt:1']"
    assert spec["commit_metadata"] == "applied: keeps ['attempt:0']"
    retry = rows.loc["scenario=s2_retry_longer"]
    assert retry["risk"] == "info" and retry["commit_metadata"] == "applied: keeps ['attempt:1']"
    assert len(chart_specs(at)) == 1
    assert any(label.startswith("⬇ duplicate_analysis.json") for label in
               [b.label for b in at.get("download_button")])


def test_log_blocks_large_tables_are_cut_riskiest_first_and_shared_across_sessions(
        ui_env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """On a 10k-log-file table the page sends the riskiest pairs and the first slices only (limits made small
    here: one row), says so, and a second session (a reload) reuses the analysis instead of rescanning."""
    from hudi_core.dashboard import loaders, render
    from hudi_core.scenarios.log_tables import build_log_scenario_table

    root = ui_env["extra"] / "hudi6758_cut"
    build_log_scenario_table(root, 9, ["s2_retry_longer", "speculative_lower_committed"])
    monkeypatch.setattr(render, "MAX_SHOWN_ROWS", 1)
    scans: list[str | None] = []
    real_inventory = loaders.log_block_inventory

    def counting(table: Any, partition: str | None, *args: Any, **kwargs: Any) -> Any:
        scans.append(partition)
        return real_inventory(table, partition, *args, **kwargs)

    monkeypatch.setattr(loaders, "log_block_inventory", counting)
    at = open_page(LOG_BLOCKS, root)
    verdicts = next(d.value for d in at.dataframe if "proposal" in d.value.columns and "risk" in d.value.columns)
    assert list(verdicts["risk"]) == ["error"]
    assert list(verdicts["partition"]) == ["scenario=speculative_lower_committed"]
    captions = texts(at.caption)
    assert "the first 1 of 2 pairs are shown, riskiest first; the CSV holds all" in captions
    assert "slices have log files: the list offers the first 1 (risky ones first)" in captions
    assert len(scans) == 1
    open_page(LOG_BLOCKS, root)  # another session on the same table: the analysis is reused
    assert len(scans) == 1


# -- pages on the built-in scenario ---------------------------------------------------------------


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_page_renders_on_the_demo_scenario(ui_env: dict[str, Path], page: str) -> None:
    at = open_page(page)
    assert at.title


def test_health_page_on_hudi7779_case_b(ui_env: dict[str, Path]) -> None:
    at = open_page(HEALTH)
    assert "**warning**: 0 errors, 4 warnings, 0 info (33 checks)" in texts(at.warning)
    titles = [e.label for e in at.main.expander]
    assert [t.split(" · ")[:2] for t in titles] == [
        ["WARNING", "archival_blocked"], ["WARNING", "active_timeline_size"], ["WARNING", "deleted_savepoint"],
        ["WARNING", "replaced_not_cleaned"]]
    assert "Why it matters." in texts(at.markdown)
    assert not at.error  # the verdict box: warnings only
    # Without the guard the archival would expose fg2: an error, first and expanded, and the verdict above says so.
    at.toggle[0].set_value(False).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value.split(" (without")[0] for e in at.error] == [
        "**Readers of this table fail or see wrong data.** the next archival"]
    assert "**error**: 1 errors, 3 warnings, 0 info (33 checks)" in texts(at.warning)
    assert at.main.expander[0].label.startswith("ERROR · archival_exposes_replaced · the next archival (without the "
                                           "HUDI-7779 guard) takes replacecommit 20240101000400000")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    download = at.get("download_button")
    assert len(download) == 1


def test_file_group_history_on_the_file_groups_page(ui_env: dict[str, Path]) -> None:
    at = open_page(FILE_GROUPS)
    fg1 = "region=us/58f2d0ed-e8cf-5f6f-9c23-b3b327af85bf-0"  # fg1 of the demo scenario (ids are stable)
    assert fg1 in at.selectbox(key="history").options
    at.selectbox(key="history").set_value(fg1).run()
    assert_clean(at)
    assert at.query_params["history"] == fg1
    history = at.dataframe[-1].value
    rows = list(zip(history["requested_time"], history["event"], history["source"], strict=True))
    assert rows == [("20240101000100000", "created", "archived"), ("20240101000200000", "wrote_base", "archived"),
                    *((f"2024010100{m:02d}00000", "wrote_base", "active") for m in range(5, 11)),
                    ("20240101001001000", "cleaned", "active")]


def test_instant_detail_of_an_archived_instant(ui_env: dict[str, Path]) -> None:
    at = open_page(INSTANT, instant="20240101000100000")  # t1 of the demo scenario, archived at step 13
    assert "archived instant" in texts(at.info)
    f = facts(at)
    assert f["Requested"] == ("20240101000100000", True) and f["Completed"][1] and len(f["Completed"][0]) == 17
    assert "**commit 20240101000100000** wrote 1 file(s), 2 record(s)." in texts(at.markdown)
    m = metrics(at)
    assert m["Action"] == "commit" and m["Records written"] == "2" and m["Operation"] == "INSERT"


def test_cleaner_and_archival_decisions_on_hudi7779_case_b(ui_env: dict[str, Path]) -> None:
    at = open_page(CLEANER)
    m = metrics(at)
    assert m["Binding guard"] == "A3" and m["Boundary"] == "20240101000400000"
    assert m["Keep min / max"] == "5 / 6"
    # Long values are shown whole (no st.metric ellipsis): instant times and the policy in monospace.
    f = facts(at)
    assert f["Boundary"] == ("20240101000400000", True) and f["ECTR (next clean)"] == ("20240101000700000", True)
    assert f["Policy"] == ("KEEP_LATEST_COMMITS", True) and f["Archiver"] == ("TimelineArchiverV2", True)
    assert not {"Boundary", "Policy", "ECTR (next clean)"} & {mm.label for mm in at.metric}
    # The answer first: the first alert of the page says where archival stops and why.
    answer = at.warning[0].value
    assert answer.startswith("Archival stops at `20240101000400000`: guard **A3** (HUDI-7779)")
    assert "archive **0** instant(s)" in answer and "expose 1 replaced file group(s)" in answer
    # Each table is shown once (styled), not twice.
    exposed = [d for d in at.dataframe if "replacement_file_ids" in str(d.proto)]
    assert len(exposed) == 1
    decisions = next(d.value for d in at.dataframe if "decision" in d.value.columns)
    assert set(decisions["decision"]) <= {"archive", "keep"} and decisions["reasons"].str.len().sum() > 0
    assert "Without the HUDI-7779 guard the archival would expose 1 replaced file group(s)" in texts(at.warning)
    assert len(chart_specs(at)) == 1
    # Switch the guard off and run the form: this archival itself now exposes the group.
    at.checkbox(key="conf::guard").uncheck()
    next(b for b in at.button if b.label == "Run dry-run").click().run()
    assert_clean(at)
    assert "This archival would expose 1 replaced file group(s)" in texts(at.warning)
    assert int(metrics(at)["Instants to archive"]) > 0


def test_scenario_steps_show_markers_and_decisions_changing(ui_env: dict[str, Path]) -> None:
    at = open_page(SCENARIOS, scenario="hudi7779_case_b", step="3")  # savepoint t3 shares t3's time
    spec = chart_specs(at)[0]
    circled = [t for t in spec["data"] if t.get("name") == "changed by this step"]
    assert len(circled) == 1 and circled[0]["yaxis"] == "y2"  # only the new savepoint, not commit t3
    assert [t.get("showlegend") for t in circled] == [True]
    at = open_page(SCENARIOS, scenario="hudi7779_case_b", step="13")
    assert at.success[0].value.startswith("After step 13:") or at.warning[0].value.startswith("After step 13:")
    markers_table = next(d.value for d in at.dataframe if "marker" in d.value.columns)
    assert "ECTR (recorded)" in set(markers_table["marker"])
    assert sum("marker" in d.value.columns for d in at.dataframe) == 1  # shown once, styled
    assert "without the guard would expose 1 replaced file group(s)" in texts(at.warning)
    assert "with the HUDI-7779 guard exposes no replaced file group" in texts(at.success)
    assert len(chart_specs(at)) == 1
    at.select_slider(key="step").set_value(11).run()  # the clean step: ECTR appears
    assert_clean(at)
    assert at.query_params["step"] == "11"
    markers_table = next(d.value for d in at.dataframe if "marker" in d.value.columns)
    ectr = markers_table.set_index("marker").loc["ECTR (recorded)"]
    assert ectr["before"] == "–" and ectr["after"] == "20240101000700000" and bool(ectr["changed"])


def test_scenario_page_every_builtin_builds(ui_env: dict[str, Path]) -> None:
    names = builtin_names()
    assert "hudi7779_case_a" in names
    at = open_page(SCENARIOS, scenario="blog_clustering_t5", step="0")
    assert at.query_params["scenario"] == "blog_clustering_t5"


def test_picker_lists_the_tables_under_the_roots(ui_env: dict[str, Path]) -> None:
    """"Look for tables" lists the folders holding .hoodie/hoodie.properties under each root; a click
    opens one."""
    from hudi_core.scenarios.build import build_scenario
    from hudi_core.scenarios.builtin import load_builtin

    nested = ui_env["extra"] / "warehouse" / "db1"
    built = build_scenario(load_builtin("hudi7779_case_b"), nested / "case_b", 9, 3).path
    at = open_page(OVERVIEW)
    at.sidebar.button[[b.label for b in at.sidebar.button].index("Look for tables")].click().run()
    assert_clean(at)
    labels = [b.label for b in at.sidebar.button]
    assert "warehouse/db1/case_b" in labels
    at.sidebar.button[labels.index("warehouse/db1/case_b")].click().run()
    assert_clean(at)
    assert at.query_params["table"] == str(Path(built).resolve())


def test_cleaner_page_separates_a_clean_that_will_not_run_from_a_forced_one(ui_env: dict[str, Path]) -> None:
    """`hoodie.clean.max.commits=2` with one commit since the last clean: the page says the clean is
    not scheduled, deletes nothing, and lists what a forced clean would delete under its own heading."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from services_tables import T, TableWriter

    w = TableWriter(ui_env["extra"] / "not_triggered", version=9)
    for n in range(1, 5):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    assert w.clean(T(5), {"hoodie.cleaner.commits.retained": "2"}).would_schedule
    w.commit(T(6), [("p1", "f1"), ("p2", "f2")])
    at = open_page(CLEANER, w.scratch.root)
    uri = at.query_params["table"]
    at.number_input(key=f"conf::{uri}::hoodie.clean.commits.retained").set_value(1)
    at.number_input(key=f"conf::{uri}::hoodie.clean.max.commits").set_value(2)
    next(b for b in at.button if b.label == "Run dry-run").click().run()
    assert_clean(at)
    m = metrics(at)
    assert m["Would schedule"] == "no" and m["Files to delete (next clean)"] == "0" and m["If forced"] == "4"
    assert any("would **not** schedule this clean: trigger not met" in w.value and "Nothing is deleted" in w.value
               for w in at.warning)
    headers = texts(at.subheader)
    assert "Files to delete by the next clean (0)" in headers
    assert "If forced: files a forced clean would delete (4)" in headers
    forced = [d.value for d in at.dataframe if "reason" in d.value.columns and len(d.value) == 4]
    assert forced and set(forced[0]["reason"]) == {"older_than_ectr"}
    # The emulated release is a choice (the newest by default) and recorded with the plan.
    assert "Emulating Hudi 1.2.x" in texts(at.caption)
    at.selectbox(key="conf::release").set_value("1.1")
    next(b for b in at.button if b.label == "Run dry-run").click().run()
    assert_clean(at)
    assert "Emulating Hudi 1.1.x" in texts(at.caption) and metrics(at)["If forced"] == "4"
    # A key whose spelling is unverified (A6) is emulated and said to be unverified.
    at.checkbox(key=f"conf::{uri}::hoodie.archive.keep.clean.plan.retain.instant").check()
    next(b for b in at.button if b.label == "Run dry-run").click().run()
    assert_clean(at)
    assert any(w.value.startswith("Unverified key: `hoodie.archive.keep.clean.plan.retain.instant=True`")
               for w in at.warning)


def test_cleaner_page_shows_a_planning_failure_and_where_the_releases_differ(ui_env: dict[str, Path]) -> None:
    """A 1.2 partition filter with incremental cleaning on makes Hudi's planner throw: the page says so
    as an error and deletes nothing; the release comparison lists the planning failure and the files only 1.1
    would delete (1.1 does not read the filter)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from services_tables import T, TableWriter

    w = TableWriter(ui_env["extra"] / "filtered", version=9)
    for n in range(1, 5):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    at = open_page(CLEANER, w.scratch.root)
    uri = at.query_params["table"]
    at.number_input(key=f"conf::{uri}::hoodie.clean.commits.retained").set_value(2)
    at.text_input(key=f"conf::{uri}::hoodie.clean.partition.filter.regex").set_value("p1")
    next(b for b in at.button if b.label == "Run dry-run").click().run()
    assert_clean(at)
    assert any("clean planning would **fail**" in e.value and "Partition filter for clean cannot be used" in e.value
               for e in at.warning)
    assert metrics(at)["If forced"] == "0"
    at.toggle(key="conf::compare_releases").set_value(True).run()
    assert_clean(at)
    assert any("differ on" in w.value for w in at.warning)
    table = next(d.value for d in at.dataframe if "aspect" in d.value.columns)
    assert {"clean.planning_failure", "clean.files_to_delete"} <= set(table["aspect"])


def test_a_table_with_problems_opens_on_the_health_page(ui_env: dict[str, Path]) -> None:
    """HUDI-7779 case b archived without the guard (a replaced file group is visible again):
    the app opens on Health, worst finding first; a healthy table still opens on the Overview."""
    import json

    from hudi_core.scenarios.build import build_scenario
    from hudi_core.scenarios.model import scenario_from_dict

    data = json.loads((Path(__file__).resolve().parents[2] / "hudi_core/scenarios/builtin"
                       / "hudi7779_case_b.json").read_text())
    data["steps"][-1].update({"savepoint_guard": False})
    bad = build_scenario(scenario_from_dict(data, "hudi7779_case_b"), ui_env["extra"] / "exposed", 9).path
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params["table"] = str(bad)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # The one error box is the verdict, in red, naming the exposed group.
    (verdict,) = [e.value for e in at.error]
    assert verdict.startswith("**Readers of this table fail or see wrong data.** region=us/")
    assert "is visible again next to" in verdict
    assert [t.value for t in at.title] == ["Health"]
    assert at.expander[0].label.startswith("ERROR · replaced_visible_again")
    healthy = AppTest.from_file(str(APP), default_timeout=90)
    healthy.run()  # the demo table (case b with the guard): warnings only
    assert_clean(healthy)
    assert "Health" not in [t.value for t in healthy.title]
    assert any(str(md.value).startswith("**At a glance**") for md in healthy.markdown)


def test_large_timelines_send_their_newest_rows_and_any_instant_stays_reachable(
        ui_env: dict[str, Path], table_path: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Above `render.MAX_SHOWN_ROWS` instants, the Overview's instants table and picker hold the
    newest rows only (the CSV all of them); Instant detail lists the newest and jumps to any other one
    typed in. Shown here with the limit lowered to 2 on a fixture table."""
    from hudi_core.dashboard import render

    monkeypatch.setattr(render, "MAX_SHOWN_ROWS", 2)
    table = table_path("v6_simplekeygen_nonhivestyle_overwritetable")
    at = open_page(OVERVIEW, table, tab="instants")
    instants = next(d.value for d in at.dataframe if "requested_time" in d.value.columns
                    and "action" in d.value.columns and len(d.value) <= 2)
    assert len(instants) == 2
    total = int(metrics(at)["Active instants"]) + int(metrics(at)["Archived instants"])
    assert total > 2
    assert f"The newest 2 of {total} instants" in texts(at.caption)
    picker = next(s for s in at.selectbox if s.label == "Instant")
    assert picker.options == list(instants["requested_time"])

    detail = open_page(INSTANT, table)
    box = next(s for s in detail.selectbox if s.label == "Instant")
    assert len(box.options) == 2
    assert [t.label for t in detail.text_input if t.label.startswith("Go to")] == [
        f"Go to any of the {total} instants (requested time)"]
    oldest = "20240707001301554"
    assert not any(o.startswith(oldest) for o in box.options)
    # An older instant from a link is offered first and opened.
    linked = open_page(INSTANT, table, instant=oldest)
    assert next(s for s in linked.selectbox if s.label == "Instant").options[0].startswith(oldest)
    assert metrics(linked)["Requested"] == oldest


def test_jump_callback_and_picker_options() -> None:
    from hudi_core.dashboard import state

    ss: dict[str, str] = {"instant": "3", "instant_jump": " 1 "}
    state.jump_callback(ss, "instant", "instant_jump", {"1", "2", "3"})()
    assert ss == {"instant": "1", "instant_jump": ""}
    ss["instant_jump"] = "9"
    state.jump_callback(ss, "instant", "instant_jump", {"1", "2", "3"})()
    assert ss == {"instant": "1", "instant_jump": "9"}  # unknown: kept typed, nothing selected
    assert state.picker_options(["2", "3"], "1", {"1", "2", "3"}) == ["1", "2", "3"]
    assert state.picker_options(["2", "3"], "3", {"1", "2", "3"}) == ["2", "3"]
    assert state.picker_options(["2", "3"], "9", {"1", "2", "3"}) == ["2", "3"]


def test_cleaner_page_shows_the_lsm_side_of_an_archival(ui_env: dict[str, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a layout-2 table the archiver section says what the archival does to the LSM timeline: the L0
    file and its snapshot, then which old manifests cleaning deletes (LSMTimelineWriter, 1.2's
    hoodie.timeline.manifest.retained.versions). Large inputs are cut as on a 100k-file table (limits made
    small here): the file tables show their first rows and say so, the chart draws the newest archived
    instants and counts the rest."""
    from hudi_core.dashboard import frames, render

    monkeypatch.setattr(render, "MAX_SHOWN_ROWS", 2)
    monkeypatch.setattr(frames, "ARCHIVED_CONTEXT_ROWS", 2)
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from services_tables import T, TableWriter

    from hudi_core.formats.timeline import archive_encode as ae
    from hudi_core.scenarios import archive_writer as aw

    w = TableWriter(ui_env["extra"] / "lsm", version=9)
    for n in range(1, 16):
        w.commit(T(n), [("p1", "f1")])
    table = w.open()
    for inst in list(table.timeline)[:6]:  # six archivals of one instant each: manifests 1..6, no cleaning
        writer = aw.LSMTimelineWriter(w.scratch, ".hoodie/timeline/history", compaction_batch=99, clean=False)
        writer.append([ae.lsm_instant_row(b) for b in aw.collect_instant_bodies(w.scratch, table.properties, [inst])])
        for f in inst.files:
            w.scratch.delete(f"{table.properties.timeline_dir}/{f.name}")
    at = open_page(CLEANER, w.scratch.root)
    uri = at.query_params["table"]
    at.number_input(key=f"conf::{uri}::hoodie.keep.min.commits").set_value(4)
    at.number_input(key=f"conf::{uri}::hoodie.keep.max.commits").set_value(5)
    at.number_input(key=f"conf::{uri}::hoodie.clean.commits.retained").set_value(1)
    next(b for b in at.button if b.label == "Run dry-run").click().run()
    assert_clean(at)
    assert "LSM timeline after this archival" in texts(at.subheader)
    f = facts(at)
    assert f["Snapshot"][0] == "6 → 7" and f["Snapshots kept"][0] == "3" and f["Files deleted"][0] == "4"
    steps = next(d.value for d in at.dataframe if "kind" in d.value.columns)
    assert list(steps["file"]) == [f"{T(7)}_{T(11)}_0.parquet"] and list(steps["version"]) == [7]
    gone = next(d.value for d in at.dataframe if {"file", "kind", "reason", "size"} == set(d.value.columns))
    assert list(gone["file"]) == [f"manifest_{v}" for v in (1, 2, 3, 4)]
    # Six archived instants, two drawn; the clean plan's kept files: the first two shown, all in the CSV.
    captions = texts(at.caption)
    assert "The active timeline and the newest 2 archived instants are drawn; 4 older archived instants" in captions
    assert "The first 2 of 13 files: the CSV holds every row." in captions


def test_metadata_table_drift_on_the_health_and_file_groups_pages(ui_env: dict[str, Path],
                                                                  table_path: Callable[[str], Path]) -> None:
    """A v9 table whose metadata table lists a file storage lacks, and storage holds a file it does not
    list. The Health page shows validate-metadata's answer; the File groups page lists as Hudi 1.x does (the
    metadata table), marks the groups holding a disputed file, and switches to the storage listing."""
    import shutil

    table = ui_env["extra"] / "mdt_drift"
    shutil.copytree(table_path("v9_txns_simple_meta"), table)
    gone = table / "region=eu" / "694491b7-ed54-402d-ad59-c36ed6c1d6a2-0_0-263-694_20260307162620509.parquet"
    gone.unlink()
    stray = table / "region=eu" / "feedface-0000-0000-0000-000000000000-0_0-1-1_20260307162620509.parquet"
    shutil.copy(next((table / "region=us").glob("*.parquet")), stray)
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params["table"] = str(table)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # Readers fail on the missing file: the table opens on Health, whose verdict names it in red.
    assert [t.value for t in at.title] == ["Health"]
    (verdict,) = [e.value for e in at.error]
    assert verdict.endswith(f"(FileNotFoundException) — `region=eu/{gone.name}`; 1 warning")
    health = at
    assert "**2 difference(s)** between the metadata table" in texts(health.warning)
    diffs = next(d.value for d in health.dataframe if "hudi_effect" in d.value.columns)
    assert sorted(zip(diffs["kind"], diffs["file"], strict=True)) == [
        ("missing_in_metadata", stray.name), ("missing_on_storage", gone.name)]
    assert any(e.label.split(" · ")[1] == "metadata_listing" for e in health.main.expander)
    groups_at = at.switch_page(FILE_GROUPS).run()
    assert not groups_at.exception
    assert "Listed from **the metadata table**" in texts(groups_at.caption)
    groups = next(d.value for d in groups_at.dataframe if "latest_base_file" in d.value.columns)
    # The metadata-listed view holds the group whose file is gone (the stray file's group is not in it).
    assert list(groups[groups["storage_check"] != ""]["storage_check"]) == ["missing on storage"]
    storage_at = open_page(FILE_GROUPS, table, listing="storage")
    assert "Listed from **storage**" in texts(storage_at.caption)
    storage_groups = next(d.value for d in storage_at.dataframe if "latest_base_file" in d.value.columns)
    assert stray.name in set(storage_groups["latest_base_file"])
    assert list(storage_groups[storage_groups["storage_check"] != ""]["storage_check"]) == ["missing in metadata"]
    assert gone.name in set(groups["latest_base_file"]) and gone.name not in set(storage_groups["latest_base_file"])
    overview = at.switch_page(OVERVIEW).run()
    assert not overview.exception
    assert [e.value for e in overview.error] == [verdict]  # the same verdict opens the Overview
    assert "Files listed from **the metadata table**" in texts(overview.caption)
