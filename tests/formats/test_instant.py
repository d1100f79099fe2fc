"""Instant file-name grammar, grouping and Hudi's ordering (spec 01 §1.4-1.7)."""

from __future__ import annotations

import pytest

from hudi_core.formats.timeline.instant import (
    State,
    epoch_ms_to_instant_time,
    group_instant_files,
    instant_file_name,
    parse_instant_file_name,
    parse_instant_time,
)


@pytest.mark.parametrize(
    ("name", "layout", "expected"),
    [
        ("20250126040823628.deltacommit", 1, ("20250126040823628", "deltacommit", State.COMPLETED, None)),
        ("20250126040823628.inflight", 1, ("20250126040823628", "commit", State.INFLIGHT, None)),
        ("20250126040823628.commit.requested", 1, ("20250126040823628", "commit", State.REQUESTED, None)),
        ("20250126040823628.savepoint.inflight", 1, ("20250126040823628", "savepoint", State.INFLIGHT, None)),
        ("20260307162618152_20260307162619230.commit", 2,
         ("20260307162618152", "commit", State.COMPLETED, "20260307162619230")),
        ("20260307162619269.clustering.requested", 2,
         ("20260307162619269", "clustering", State.REQUESTED, None)),
        ("20260307162619269.inflight", 2, ("20260307162619269", "commit", State.INFLIGHT, None)),
        # A legacy completed file in a layout-2 timeline (upgraded table): no completion time.
        ("20250126040823628.deltacommit", 2, ("20250126040823628", "deltacommit", State.COMPLETED, None)),
        ("00000000000000000_00000000000000001.deltacommit", 2,
         ("00000000000000000", "deltacommit", State.COMPLETED, "00000000000000001")),
    ],
)
def test_parse_instant_file_names(name: str, layout: int, expected: tuple) -> None:
    parsed = parse_instant_file_name(name, layout)
    assert parsed is not None
    assert (parsed.requested_time, parsed.action, parsed.state, parsed.completion_time) == expected
    assert instant_file_name(*expected[:3], layout, expected[3]) == name or expected[1] == "savepoint"


@pytest.mark.parametrize(
    "name",
    ["hoodie.properties", "20250126.unknownaction", "abc.commit", "2025_x.commit", "20250126.commit.crc",
     "20250126040823628_20250126040823700.commit.requested", "archived", ".20250126.commit.crc"],
)
def test_non_instant_names_are_rejected(name: str) -> None:
    assert parse_instant_file_name(name, 2) is None


def test_layout1_rejects_completion_suffix() -> None:
    assert parse_instant_file_name("20260307162618152_20260307162619230.commit", 1) is None


def test_grouping_keeps_highest_state_and_knows_both_actions() -> None:
    names = [
        "100.compaction.requested", "100.compaction.inflight", "100_150.commit",
        "110.deltacommit.requested", "110.deltacommit.inflight", "110_120.deltacommit",
        "130.clustering.requested", "130.clustering.inflight",
        "140.savepoint.inflight",
        "100.commit.requested",
    ]
    files = [parse_instant_file_name(n, 2) for n in names]
    instants = group_instant_files([f for f in files if f], 2)
    summary = [(i.requested_time, i.action, i.state, i.pending_action, i.completed_action) for i in instants]
    # compaction (→commit) and a plain commit.requested share T=100 and group together, as Hudi's
    # comparable-action grouping does.
    assert summary == [
        ("100", "commit", State.COMPLETED, "commit", "commit"),
        ("110", "deltacommit", State.COMPLETED, "deltacommit", "deltacommit"),
        ("130", "clustering", State.INFLIGHT, "clustering", "replacecommit"),
        ("140", "savepoint", State.INFLIGHT, "savepoint", "savepoint"),
    ]
    assert instants[0].completion_time == "150"
    assert len(instants[0].files) == 4


def test_compaction_completes_as_commit_in_layout_one() -> None:
    names = ["100.compaction.requested", "100.compaction.inflight", "100.commit"]
    instants = group_instant_files([parse_instant_file_name(n, 1) for n in names], 1)
    assert len(instants) == 1
    inst = instants[0]
    assert (inst.action, inst.pending_action, inst.completed_action) == ("commit", "compaction", "commit")
    # Layout 1 has no clustering action: a clustering.requested stays its own group.
    clustering = group_instant_files(
        [parse_instant_file_name(n, 1) for n in ["200.replacecommit.requested", "200.replacecommit"]], 1)
    assert clustering[0].pending_action == "replacecommit"


def test_ordering_requested_time_then_action_then_state() -> None:
    names = ["200.rollback.requested", "200_210.commit", "150.clean.requested", "200.clean.inflight"]
    instants = group_instant_files([parse_instant_file_name(n, 2) for n in names], 2)
    assert [(i.requested_time, i.action) for i in instants] == [
        ("150", "clean"), ("200", "clean"), ("200", "commit"), ("200", "rollback"),
    ]
    by_completion = sorted(instants, key=lambda i: i.completion_sort_key())
    assert by_completion[0].action == "commit"


def test_instant_times() -> None:
    assert epoch_ms_to_instant_time(1737864503071, "UTC") == "20250126040823071"
    parsed = parse_instant_time("20250126040823071")
    assert parsed is not None and parsed.microsecond == 71000
    assert parse_instant_time("20250126040823") is not None
    assert parse_instant_time("0") is None
    # 17 digits that are not a date: epoch millis, as hudi-rs reads them.
    epoch = parse_instant_time("00001737864503071")
    assert epoch is not None and epoch.year == 2025
