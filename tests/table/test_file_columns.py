"""Files classified as columns give the view exactly what classifying them one by one gives.

Above a few thousand files the file-system view parses names together with Arrow and makes a partition's
file objects only when its groups are asked for (`hudi_core.table.file_columns`); below, and for every name
the vectorised grammar does not take, files go through `classify_files`. Both ways must agree file for file,
finding for finding, on tricky names, on real tables (hudi-rs fixtures: table versions 6, 8 and 9) and on
built scenarios with rollbacks, replaced groups, savepoints, pending compactions and log files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_NAMES

from hudi_core.table import file_columns, open_table
from hudi_core.table.file_columns import PartitionFileColumns
from hudi_core.table.file_group import classify_files
from hudi_core.table.listing import ListedFile

SCENARIOS = ("hudi7779_case_a", "hudi7779_case_b", "blog_rollback_t20", "blog_restore_t40", "blog_clustering_t5",
             "blog_async_compaction", "blog_clean_t1_t4", "hudi7779_option_c", "writers_dead_writer",
             "hudi7779_summary_i")

FID = "5a5a1f5e-7d3c-4f6b-9a44-8c0f6e4c0b21-0"
TRICKY_NAMES = [
    f"{FID}_0-1-1_20240101000000000.parquet",
    f"{FID}_0-1-1_20240101000000000.PARQUET",            # extension compared case-blind
    f"{FID}_0-1-1_20240101000000000.orc",                # another format: a finding
    f"{FID}_0-1-1_20240101000000000.parquet.bak",        # suffix after the first dot
    f"{FID}_0-1-1_2024010100000000x.parquet",            # instant not digits: not a base file
    f"{FID}_0-1-1_٢٠٢٤.parquet",                          # non-ASCII digits: not a base file
    f"{FID}_0-1-1_20240101000000000.parquet\n",          # a line break: the regex's own answer
    "x_y_z_1.parquet",                                  # underscores after the token: not a base file
    f".{FID}_20240101000000000.log.1_0-1-1",
    f".{FID}_20240101000000000.log.2",                   # no write token
    f".{FID}_20240101000000000.log.0012_10-20-30",       # leading zeros in the version
    f".{FID}_20240101000000000.log.1234567890_0-1-1",    # a ten-digit version
    f".{FID}_20240101000000000.log.1_0-1-1.cdc",         # change-data-capture side log
    f".{FID}_20240101000000000.archive.1_0-1-1",         # archive-style name: a finding
    f".{FID}_20240101000000000.log.١_0-1-1",              # non-ASCII version digits
    ".legacy.id_with_dots_20240101000000000.log.3_1-2-3",  # legacy file id
    f".{FID}_.log.1_0-1-1",                              # empty instant
    ".hoodie_partition_metadata",
    ".hoodie_partition_metadata.parquet",
    f".{FID}_0-1-1_20240101000000000.parquet.crc",       # Hadoop checksum side file
    "README.txt",
    "",
]


def _classified(files: dict[str, list[ListedFile]], monkeypatch: pytest.MonkeyPatch,
                columns: bool) -> tuple[Any, list[Any], list[str]]:
    monkeypatch.setattr(file_columns, "COLUMNS_MIN_FILES", 0 if columns else 10**12)
    monkeypatch.setattr(file_columns, "CLASSIFY_CHUNK", 1000)  # several chunks
    findings: list[Any] = []
    cdc: list[str] = []
    classified = PartitionFileColumns.classify(files, ".parquet", lambda p: f"file:///t/{p}", findings, cdc)
    return {p: classified.files_of(p) for p in files}, findings, cdc


def test_tricky_names_classify_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    files = {
        "p=1": [ListedFile(n, 100 + k) for k, n in enumerate(TRICKY_NAMES)],
        "": [ListedFile(n, 7) for n in reversed(TRICKY_NAMES)],
        "p=empty": [],
    }
    columns = _classified(files, monkeypatch, columns=True)
    objects = _classified(files, monkeypatch, columns=False)
    assert columns == objects
    # And that is what `classify_files` says, partition by partition.
    findings: list[Any] = []
    cdc: list[str] = []
    for partition, listed in files.items():
        assert columns[0][partition] == classify_files(partition, listed, ".parquet", lambda p: f"file:///t/{p}",
                                                       findings, cdc)
    assert (columns[1], columns[2]) == (findings, cdc)
    bases, logs = columns[0]["p=1"]
    # The trailing line break: Python's `$` matches before it, and the view keeps Hudi-era answers as they were.
    assert [b.name for b in bases] == [TRICKY_NAMES[0], TRICKY_NAMES[1], TRICKY_NAMES[6]]
    assert [(lg.version, lg.write_token) for lg in logs] == [
        (1, "0-1-1"), (2, None), (12, "10-20-30"), (1234567890, "0-1-1"), (1, "0-1-1"), (3, "1-2-3"), (1, "0-1-1")]
    assert len(columns[1]) == 2 * 8 and columns[2] == [f"p=1/.{FID}_20240101000000000.log.1_0-1-1.cdc",
                                                      f".{FID}_20240101000000000.log.1_0-1-1.cdc"]


def _object_log_paths(view: Any, partition: str | None = None, file_id: str | None = None) -> list[str]:
    """Every log file's path in group order and reader order, read off the file objects."""
    paths: list[str] = []
    for group in view.file_groups(partition, include_replaced=True):
        if file_id is None or group.file_id == file_id:
            logs = {lf.path: lf for s in group.slices for lf in s.log_files}
            paths.extend(sorted(logs, key=lambda p: logs[p].sort_key()))
    return paths


def _view_answers(path: Path, monkeypatch: pytest.MonkeyPatch, columns: bool) -> dict[str, Any]:
    from hudi_core.services.log_inventory import log_file_paths

    monkeypatch.setattr(file_columns, "COLUMNS_MIN_FILES", 0 if columns else 10**12)
    monkeypatch.setattr(file_columns, "CLASSIFY_CHUNK", 1000)  # several chunks
    table = open_table(str(path))
    view = table.fs_view()
    some_partition = view.partitions[len(view.partitions) // 2] if view.partitions else None
    one = view.file_groups(some_partition, include_replaced=True)  # one partition asked for before the whole
    return {
        "one_partition": one,
        "groups": list(view.groups.items()),
        "findings": view.findings,
        "cdc": view.cdc_log_files,
        "replaced": view.replaced,
        "unknown_replaced": view.unknown_replaced,
        "savepoints": view.savepoints,
        "slices": view.slice_rows(),
        "latest_rows": view.slice_rows(latest_only=True),
        "latest_file_keys": view.latest_file_keys(),
        "latest_file_keys_of_one": view.latest_file_keys([some_partition] if some_partition is not None else []),
        "latest_merged": view.latest_merged_slices(),
        "latest_slices": view.latest_slices(),
        "latest_base": view.latest_base_files(),
        "log_paths": log_file_paths(table),
        "log_paths_one": log_file_paths(table, some_partition),
        "log_paths_group": log_file_paths(table, some_partition, one[0].file_id if one else "none"),
        "object_log_paths": _object_log_paths(view),
    }


def _assert_alike(path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    columns = _view_answers(path, monkeypatch, columns=True)
    objects = _view_answers(path, monkeypatch, columns=False)
    for key, value in objects.items():
        assert columns[key] == value, key
    assert columns["latest_rows"] == [r for r in columns["slices"] if r["is_latest"]]
    assert columns["log_paths"] == columns["object_log_paths"]
    assert columns["latest_file_keys"] == {(s.partition, n) for s in columns["latest_slices"] for n in s.file_names}
    return columns


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_fixture_tables_view_alike_from_columns(fixture: str, table_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _assert_alike(table_path(fixture), monkeypatch)
    assert answers["groups"] or fixture.endswith("_empty")


@pytest.mark.parametrize("version", [6, 8, 9])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_built_scenarios_view_alike_from_columns(scenario: str, version: int, builtin_table: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _assert_alike(builtin_table(scenario, version), monkeypatch)
    assert answers["groups"]
    if scenario == "blog_clustering_t5":
        assert answers["replaced"]
    if scenario == "blog_async_compaction":
        assert any(r["is_pending_compaction"] for r in answers["slices"]) or answers["latest_merged"]


@pytest.mark.parametrize("scenario_table", [6, 9], indirect=True)
def test_log_scenario_table_views_alike_from_columns(scenario_table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _assert_alike(Path(scenario_table.path), monkeypatch)
    assert sum(len(s["log_files"]) for s in answers["slices"]) > 10


@pytest.mark.parametrize("version", [6, 8, 9])
@pytest.mark.parametrize("step", range(8))
def test_async_compaction_views_alike_from_columns_at_every_step(step: int, version: int, builtin_table: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Pending compaction requested and inflight (its partial base file), a delta commit still writing its log,
    and both completing in either order: every state of the merge-on-read scenario."""
    answers = _assert_alike(builtin_table("blog_async_compaction", version, upto_step=step), monkeypatch)
    assert answers["latest_rows"]


def test_groups_whose_logs_open_slices_view_alike_from_columns(builtin_table: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Log-only groups, a log whose delta commit completed before every base file of its group (it opens a slice
    of its own on table version 8+), two base files at one instant and a log of an unknown instant, beside the
    scenario's own files: the columns take the regular groups and the file objects the others."""
    from hudi_core.table.fsview import FileSystemView

    table = open_table(str(builtin_table("blog_async_compaction", 9)))
    t90, t95, t100, t110 = (i.requested_time for i in table.timeline.all_instants)
    listing = {p: list(fs) for p, fs in table.fs_view().partition_files.items()}
    synthetic = []
    for n in range(3000):  # enough files for the columns
        fid = f"{n:08x}-0000-4000-8000-000000000000-0"
        kind = n % 5
        if kind == 0:  # log only: no slice to join
            synthetic += [ListedFile(f".{fid}_{t95}.log.1_0-1-1", 10), ListedFile(f".{fid}_{t110}.log.1_0-1-1", 11)]
        elif kind == 1:  # the log's delta commit completed before the group's only base file
            synthetic += [ListedFile(f"{fid}_0-1-1_{t100}.parquet", 20), ListedFile(f".{fid}_{t95}.log.1_0-1-1", 21)]
        elif kind == 2:  # two base files at one instant: the later name wins
            synthetic += [ListedFile(f"{fid}_0-1-2_{t90}.parquet", 30), ListedFile(f"{fid}_0-1-1_{t90}.parquet", 31)]
        elif kind == 3:  # regular: the log joins the base file's slice; a second log of an unknown instant
            synthetic += [ListedFile(f"{fid}_0-1-1_{t90}.parquet", 40), ListedFile(f".{fid}_{t95}.log.2_0-1-1", 41),
                          ListedFile(f".{fid}_{t95}.log.1_0-1-1", 42), ListedFile(f".{fid}_29990101.log.1_0-1-1", 43)]
        else:  # a base file of a later, still unknown instant and a log of a pending one
            synthetic += [ListedFile(f"{fid}_0-1-1_{t110}.parquet", 50), ListedFile(f".{fid}_{t110}.log.1_0-1-1", 51)]
    listing["region=synthetic"] = synthetic

    def latest_rows(columns: bool) -> tuple[list[dict[str, Any]], Any, Any]:
        from hudi_core.table import slice_columns

        monkeypatch.setattr(file_columns, "COLUMNS_MIN_FILES", 0 if columns else 10**12)
        monkeypatch.setattr(file_columns, "CLASSIFY_CHUNK", 1000)  # several chunks
        view = FileSystemView.from_listing(listing, table.timeline, 9, "parquet", storage=table.storage)
        assert view.files.all_in_columns is columns
        logs = slice_columns.log_file_paths(view) if columns else _object_log_paths(view)
        return view.slice_rows(latest_only=True), view.latest_base_files(), logs

    rows, bases, logs = latest_rows(columns=True)
    assert (rows, bases, logs) == latest_rows(columns=False)
    assert len(logs) == 3000 // 5 * 2 + 3000 // 5 + 3000 // 5 * 3 + 3000 // 5 + 2
    by_kind: dict[int, dict[str, Any]] = {}
    for r in rows:
        if r["partition"] == "region=synthetic":
            by_kind.setdefault(int(r["file_id"][:8], 16) % 5, r)
    fid = "-0000-4000-8000-000000000000-0"
    assert by_kind[0]["log_files"] == [f".00000000{fid}_{t95}.log.1_0-1-1", f".00000000{fid}_{t110}.log.1_0-1-1"]
    assert by_kind[1]["base_instant"] == t100 and by_kind[1]["log_files"] == []  # the log's slice is older
    assert by_kind[2]["base_file"] == f"00000002{fid}_0-1-2_{t90}.parquet"
    assert by_kind[3]["log_files"] == [f".00000003{fid}_{t95}.log.1_0-1-1", f".00000003{fid}_{t95}.log.2_0-1-1"]
    assert by_kind[4]["base_instant"] == t110 and by_kind[4]["log_files"] == [f".00000004{fid}_{t110}.log.1_0-1-1"]


CLEAN_CONFS = (
    {},
    {"hoodie.clean.commits.retained": "1"},
    {"hoodie.clean.commits.retained": "1", "hoodie.cleaner.incremental.mode": "false"},
    {"hoodie.clean.policy": "KEEP_LATEST_BY_HOURS", "hoodie.clean.hours.retained": "0"},
)


def _clean_answers(path: Path, monkeypatch: pytest.MonkeyPatch, columns: bool) -> list[Any]:
    import datetime as dt

    from hudi_core.services.clean import LATEST_SLICE, SAVEPOINTED, plan_clean

    monkeypatch.setattr(file_columns, "COLUMNS_MIN_FILES", 0 if columns else 10**12)
    monkeypatch.setattr(file_columns, "CLASSIFY_CHUNK", 1000)  # several chunks
    table = open_table(str(path))
    view = table.fs_view()
    now = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    out = []
    for conf in CLEAN_CONFS:
        plan = plan_clean(table, conf, now=now, view=view)
        out.append((plan.files_if_forced, plan.kept, plan.partitions_if_forced, plan.to_dict()))
        assert plan.paths_to_delete() == [d.path for d in plan.files_to_delete]
        # Kept files of some reasons only (the doctor's plan): the same plan, the other kept files left out.
        reasons = frozenset({SAVEPOINTED, LATEST_SLICE})
        some = plan_clean(table, conf, now=now, view=view, kept_reasons=reasons)
        assert some.kept == [d for d in plan.kept if d.reason in reasons]
        assert {**some.to_dict(), "kept": None} == {**plan.to_dict(), "kept": None}
    return out


def _assert_clean_alike(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    columns = _clean_answers(path, monkeypatch, columns=True)
    assert columns == _clean_answers(path, monkeypatch, columns=False)
    return columns


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_fixture_tables_clean_alike_from_columns(fixture: str, table_path: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_clean_alike(table_path(fixture), monkeypatch)


@pytest.mark.parametrize("version", [6, 8, 9])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_built_scenarios_clean_alike_from_columns(scenario: str, version: int, builtin_table: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_clean_alike(builtin_table(scenario, version), monkeypatch)


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("step", range(8))
def test_async_compaction_cleans_alike_from_columns_at_every_step(step: int, version: int, builtin_table: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_clean_alike(builtin_table("blog_async_compaction", version, upto_step=step), monkeypatch)


@pytest.mark.parametrize("scenario_table", [6, 9], indirect=True)
def test_log_scenario_table_cleans_alike_from_columns(scenario_table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_clean_alike(Path(scenario_table.path), monkeypatch)


@pytest.mark.parametrize("version", [6, 9])
def test_synthetic_groups_clean_alike_from_columns(version: int, builtin_table: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices older and newer than the ECTR, an uncommitted slice, a slice a pending compaction needs, two base
    files at one instant and log-only groups, beside a scheduled compaction: every decision the planner makes,
    the same from the columns as from the objects."""
    import datetime as dt

    from hudi_core.services.clean import plan_clean
    from hudi_core.table.fsview import FileSystemView

    table = open_table(str(builtin_table("blog_async_compaction", version, upto_step=2)))
    t90, t95, t100 = (i.requested_time for i in table.timeline.all_instants)
    listing = {p: list(fs) for p, fs in table.fs_view().partition_files.items()}
    fg1 = next(f.name.split("_")[0] for f in listing["region=us"] if f.name.endswith(".parquet"))
    listing["region=us"] = sorted([*listing["region=us"], ListedFile(f"{fg1}_0-9-9_{t95}.parquet", 5)],
                                  key=lambda f: f.name)
    later = str(int(t100) + 1000)  # no instant: its slice is not committed
    before_start = str(int(t90) - 10**10)  # before the timeline starts: committed
    synthetic = []
    for n in range(3000):
        fid = f"{n:08x}-0000-4000-8000-000000000000-0"
        kind = n % 4
        if kind == 0:
            synthetic += [ListedFile(f"{fid}_0-1-1_{t}.parquet", 10) for t in (before_start, t90, t95, t100, later)]
        elif kind == 1:
            synthetic += [ListedFile(f"{fid}_0-1-1_{t90}.parquet", 20), ListedFile(f"{fid}_0-1-2_{t90}.parquet", 21),
                          ListedFile(f".{fid}_{t90}.log.1_0-1-1", 22), ListedFile(f"{fid}_0-1-1_{t95}.parquet", 23)]
        elif kind == 2:
            synthetic += [ListedFile(f".{fid}_{t95}.log.1_0-1-1", 30)]
        else:
            synthetic += [ListedFile(f"{fid}_0-1-1_{t95}.parquet", 40), ListedFile(f".{fid}_{t95}.log.2_0-1-1", 41),
                          ListedFile(f".{fid}_{t95}.log.1_0-1-1", 42), ListedFile(f".{fid}_{t95}.log.1_0-1-10", 43)]
    listing["region=synthetic"] = sorted(synthetic, key=lambda f: f.name)
    now = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    confs = [{"hoodie.clean.commits.retained": str(n), "hoodie.cleaner.incremental.mode": "false"} for n in (1, 2, 5)]

    def plans(columns: bool) -> list[Any]:
        monkeypatch.setattr(file_columns, "COLUMNS_MIN_FILES", 0 if columns else 10**12)
        monkeypatch.setattr(file_columns, "CLASSIFY_CHUNK", 1000)  # several chunks
        view = FileSystemView.from_listing(listing, table.timeline, version, "parquet", storage=table.storage)
        out = []
        for conf in confs:
            plan = plan_clean(table, conf, now=now, view=view)
            out.append((plan.files_if_forced, plan.kept, plan.partitions_if_forced))
        return out

    columns = plans(columns=True)
    assert columns == plans(columns=False)
    reasons = {d.reason for files, kept, _ in columns for d in [*files, *kept]}
    assert {"latest_slice", "last_slice_before_ectr", "uncommitted", "needed_by_pending_compaction",
            "not_older_than_ectr", "older_than_ectr"} <= reasons
