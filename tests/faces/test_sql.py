"""`hudi-inspect sql` and the SQL views on built scenario tables.

Every view is checked row for row against an expectation computed another way: the scenario's known steps
(HUDI-7779 case (b): t1..t3 archived, t4 the replacecommit, t5..t10 upserts, the clean t10.1), the raw
instant files and LSM rows decoded here with fastavro / json, the files on disk, the log scenario's written
blocks, and the JSON of `plan-clean` / `plan-archive`. Then the refusals (a bad query, a write, a file read:
exit 1, no answer, one line), `--schema`, the formats, the laziness of the views, and the column-wise decoder against
fastavro on generated commit metadata.
"""

from __future__ import annotations

import io
import json
import os
import random
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import own_answer

from hudi_core.cli import main
from hudi_core.dashboard import PAGES_DIR
from hudi_core.formats.timeline.write_stats import _add_slow, _Rows, write_stats_of_bodies
from hudi_core.inspect.sql import VIEW_DOCS, SqlError, referenced_views, run_query
from hudi_core.scenarios.log_tables import C1, C2, KEYS, SCENARIOS, build_log_scenario_table
from hudi_core.table import open_table

CASE_B = "hudi7779_case_b"
FG1, FG2, FG3 = ("58f2d0ed-e8cf-5f6f-9c23-b3b327af85bf-0", "fbf5afc3-557d-5f74-b209-fd620415d2f2-0",
                 "1d05b028-fc91-5a34-9233-e44e53040b02-0")


def t(k: int) -> str:
    """The scenario's instant time t<k> (t1 = 20240101000100000)."""
    return f"2024010100{k:02d}00000"


def done(k: int) -> str:
    """Its completion time (the builder completes an instant 300 ms after it starts)."""
    return f"2024010100{k:02d}00300"


CLEAN = "20240101001001000"
CLEAN_DONE = "20240101001001300"


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory, builtin_table: Any) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sql")
    out = {f"case_b_v{v}": builtin_table(CASE_B, v) for v in (6, 9)}
    out["case_b_mdt"] = builtin_table(CASE_B, 9, metadata_table=True)
    for v in (6, 9):
        out[f"logs_v{v}"] = Path(build_log_scenario_table(root / f"logs_v{v}", v).path)
    return out


def sql(capsys: pytest.CaptureFixture[str], table: Path | None, query: str | None, *extra: str,
        fmt: str = "json") -> tuple[int, Any, str]:
    """(exit code, parsed stdout (JSON) or text, stderr) of `hudi-inspect sql`."""
    argv = ["sql", *([str(table)] if table is not None else []), *([query] if query is not None else []),
            "--format", fmt, "--engine", "local", *extra]
    code = main(own_answer(argv))
    captured = capsys.readouterr()
    out: Any = captured.out
    if fmt == "json" and code in (0, 1) and captured.out.strip():
        out = json.loads(captured.out)
    return code, out, captured.err


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main(own_answer([*argv, "--format", "json", "--engine", "local"]))
    assert code in (0, 1, 2), argv  # 2: the plan exposes replaced file groups
    return json.loads(capsys.readouterr().out)


# -- instants ------------------------------------------------------------------------------------------


def expected_case_b_instants(active_source: str) -> list[tuple[str, str, str, str, str, str]]:
    """(requested, completion, action, state, source, completion_time_source) of case (b) after every step:
    t1..t3 archived (the savepoint on t3 was deleted), t4..t10 and the clean active."""
    rows = [(t(k), done(k), "commit", "COMPLETED", "archived", "archive") for k in (1, 2, 3)]
    rows.append((t(4), done(4), "replacecommit", "COMPLETED", "active", active_source))
    rows += [(t(k), done(k), "commit", "COMPLETED", "active", active_source) for k in range(5, 11)]
    rows.append((CLEAN, CLEAN_DONE, "clean", "COMPLETED", "active", active_source))
    return rows


@pytest.mark.parametrize("version, active_source", [(6, "mtime"), (9, "file_name")])
def test_instants_view_holds_the_active_and_archived_instants(tables: dict[str, Path], version: int,
                                                              active_source: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    table = tables[f"case_b_v{version}"]
    code, rows, err = sql(capsys, table, "SELECT * FROM instants ORDER BY requested_time")
    assert code == 0, err
    got = [(r["requested_time"], r["completion_time"], r["action"], r["state"], r["source"],
            r["completion_time_source"]) for r in rows]
    assert got == expected_case_b_instants(active_source)
    # The rows of `timeline --all`, column for column.
    assert rows == cli_json(capsys, "timeline", str(table), "--all")


def test_instants_view_matches_the_raw_timeline_files(tables: dict[str, Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    table = tables["case_b_v9"]
    expected = set()
    for name in os.listdir(table / ".hoodie" / "timeline"):
        stem, _, action = name.partition(".")
        if "_" in stem and "." not in action:  # <requested>_<completion>.<action>: a completed instant
            requested, completion = stem.split("_")
            expected.add((requested, completion, action, "active"))
    for path in (table / ".hoodie" / "timeline" / "history").glob("*.parquet"):
        raw = pq.read_table(path, columns=["instantTime", "completionTime", "action"]).to_pylist()
        expected |= {(r["instantTime"], r["completionTime"], r["action"], "archived") for r in raw}
    _, rows, _ = sql(capsys, table, "SELECT requested_time, completion_time, action, source FROM instants")
    assert {(r["requested_time"], r["completion_time"], r["action"], r["source"]) for r in rows} == expected
    assert len(rows) == len(expected) == 11


# -- write_stats ---------------------------------------------------------------------------------------

WS_COLUMNS = ("requested_time", "completion_time", "action", "source", "partition", "file_id", "path", "prev_commit",
              "num_writes", "num_inserts", "num_update_writes", "num_deletes")


def expected_case_b_write_stats() -> list[tuple[Any, ...]]:
    """One row per written file, from the scenario's steps: t1 inserts fg1 (k1, k2), t2 upserts it, t3 inserts
    fg2 (k3, k4), t4 clusters fg2 into fg3, t5..t10 upsert fg1 (each on the previous fg1 commit). The builder
    names files <file id>_0-<k>-<3k>_<instant>.parquet."""

    def path(fg: str, k: int) -> str:
        return f"region=us/{fg}_0-{k}-{3 * k}_{t(k)}.parquet"

    rows = [
        (t(1), done(1), "commit", "archived", "region=us", FG1, path(FG1, 1), "null", 2, 2, 0, 0),
        (t(2), done(2), "commit", "archived", "region=us", FG1, path(FG1, 2), t(1), 2, 0, 2, 0),
        (t(3), done(3), "commit", "archived", "region=us", FG2, path(FG2, 3), "null", 2, 2, 0, 0),
        (t(4), done(4), "replacecommit", "active", "region=us", FG3, path(FG3, 4), "null", 2, 2, 0, 0),
    ]
    previous = 2
    for k in range(5, 11):
        rows.append((t(k), done(k), "commit", "active", "region=us", FG1, path(FG1, k), t(previous), 2, 0, 2, 0))
        previous = k
    return rows


@pytest.mark.parametrize("version", [6, 9])
def test_write_stats_view_reads_active_and_archived_commits(tables: dict[str, Path], version: int,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    table = tables[f"case_b_v{version}"]
    code, rows, err = sql(capsys, table, "SELECT * FROM write_stats")
    assert code == 0, err
    assert [tuple(r[c] for c in WS_COLUMNS) for r in rows] == expected_case_b_write_stats()
    on_disk = {p.name: p.stat().st_size for p in (table / "region=us").glob("*.parquet")}
    for r in rows:
        name = r["path"].rsplit("/", 1)[1]
        if name in on_disk:  # t1's file was cleaned at t10.1
            assert r["file_size_in_bytes"] == r["total_write_bytes"] == on_disk[name]
        assert r["log_files"] == [] and r["base_file"] is None and r["log_version"] is None


def _fastavro_stats(data: bytes) -> list[dict[str, Any]]:
    record = next(iter(fastavro.reader(io.BytesIO(data))))
    return [dict(s, _key=p) for p, stats in (record.get("partitionToWriteStats") or {}).items() for s in stats]


def test_write_stats_view_matches_the_raw_bodies(tables: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Layout 2: the completed instant files and the LSM rows' `metadata`, decoded here with fastavro."""
    table = tables["case_b_v9"]
    expected = []
    timeline = table / ".hoodie" / "timeline"
    for name in sorted(os.listdir(timeline)):
        stem, _, action = name.partition(".")
        if "_" in stem and action in ("commit", "deltacommit", "replacecommit"):
            for s in _fastavro_stats((timeline / name).read_bytes()):
                expected.append((stem.split("_")[0], action, "active", s))
    for path in sorted((timeline / "history").glob("*.parquet")):
        for row in pq.read_table(path).to_pylist():
            if row["action"] in ("commit", "deltacommit", "replacecommit"):
                for s in _fastavro_stats(row["metadata"]):
                    expected.append((row["instantTime"], row["action"], "archived", s))
    expected.sort(key=lambda e: e[0])
    _, rows, _ = sql(capsys, table, "SELECT * FROM write_stats")
    assert len(rows) == len(expected) == 10
    for r, (requested, action, source, s) in zip(rows, expected, strict=True):
        assert (r["requested_time"], r["action"], r["source"]) == (requested, action, source)
        assert r["partition"] == (s["partitionPath"] if s["partitionPath"] is not None else s["_key"])
        for column, field in (("file_id", "fileId"), ("path", "path"), ("prev_commit", "prevCommit"),
                              ("num_writes", "numWrites"), ("num_inserts", "numInserts"),
                              ("num_update_writes", "numUpdateWrites"), ("num_deletes", "numDeletes"),
                              ("total_write_bytes", "totalWriteBytes"), ("file_size_in_bytes", "fileSizeInBytes")):
            assert r[column] == s[field], (column, r, s)


@pytest.mark.parametrize("version", [6, 9])
def test_write_stats_of_a_mor_table(tables: dict[str, Path], version: int, capsys: pytest.CaptureFixture[str]) -> None:
    """The log scenario table (v6: JSON bodies, v9: Avro): C1 writes each base file, C2 the log files of the
    attempt the driver committed (`logFiles`, `baseFile`, `logVersion`)."""
    table = tables[f"logs_v{version}"]
    code, rows, err = sql(capsys, table, "SELECT * FROM write_stats ORDER BY requested_time, partition, path")
    assert code == 0, err
    scan_groups = {f"scenario={s.name}": s for s in SCENARIOS}
    got = [(r["requested_time"], r["action"], r["partition"], r["path"].rsplit("/", 1)[1], r["num_inserts"],
            r["num_update_writes"], r["log_files"], r["log_version"]) for r in rows]
    expected = []
    for partition in sorted(scan_groups):  # C1: the base file of each scenario's group
        base = next((table / partition).glob(f"*_0-1-0_{C1}.parquet")).name
        expected.append((C1, "deltacommit", partition, base, len(KEYS), 0, [], None))
    for partition in sorted(scan_groups):
        sc = scan_groups[partition]
        committed = [w for w in sc.writes if w.attempt == sc.committed_attempt]
        files: dict[str, int] = {}
        for w in committed:
            if not w.partial:
                files[w.file] = files.get(w.file, 0) + len(w.keys)
        logs = sorted((table / partition).glob(".*.log.*"))
        by_label = _log_labels(sc, logs)
        for label, n in files.items():
            fname = by_label[label]
            expected.append((C2, "deltacommit", partition, fname, 0, n, [fname], int(fname.split(".log.")[1][0])))
    assert sorted(got, key=str) == sorted(expected, key=str)


def _log_labels(sc: Any, logs: list[Path]) -> dict[str, str]:
    """Scenario log-file label (lf1, lf2, …) → file name: versions are given in order of first write."""
    order = list(dict.fromkeys(w.file for w in sc.writes))
    by_version = {int(p.name.split(".log.")[1].split("_")[0]): p.name for p in logs}
    return {label: by_version[i + 1] for i, label in enumerate(order)}


# -- log_blocks ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 9])
def test_log_blocks_view_lists_every_written_block(tables: dict[str, Path], version: int,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Each scenario's writes in storage order: an Avro data block of C2 stamped (attempt, seq), and a
    CORRUPT_BLOCK where a writer crashed mid-append (the HDFS case)."""
    table = tables[f"logs_v{version}"]
    code, rows, err = sql(capsys, table, "SELECT partition, path, block_index, block_type, instant_time, attempt, "
                                         "seq, corrupt FROM log_blocks ORDER BY partition, path, block_index")
    assert code == 0, err
    expected = []
    for sc in SCENARIOS:
        partition = f"scenario={sc.name}"
        logs = sorted((table / partition).glob(".*.log.*"))
        by_label = _log_labels(sc, logs)
        index: dict[str, int] = {}
        for w in sc.writes:
            name = by_label[w.file]
            k = index.get(name, 0)
            if w.partial:
                expected.append((partition, f"{partition}/{name}", k, "CORRUPT_BLOCK", None, None, None, True))
            else:
                expected.append((partition, f"{partition}/{name}", k, "AVRO_DATA_BLOCK", C2, w.attempt, w.seq, False))
            index[name] = k + 1
    expected.sort(key=lambda e: (e[0], e[1], e[2]))
    got = [(r["partition"], r["path"], r["block_index"], r["block_type"], r["instant_time"], r["attempt"], r["seq"],
            r["corrupt"]) for r in rows]
    assert got == expected


# -- file_slices, metadata_files -------------------------------------------------------------------------


def test_file_slices_view_from_the_files_on_disk(tables: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Copy-on-write: one slice per base file on storage; the newest of each group is its latest; fg2 was
    replaced by the replacecommit t4."""
    table = tables["case_b_v9"]
    files = sorted((table / "region=us").glob("*.parquet"))
    newest: dict[str, str] = {}
    for f in files:
        fg, instant = f.name.split("_")[0], f.stem.rsplit("_", 1)[1]
        newest[fg] = max(newest.get(fg, ""), instant)
    expected = sorted((("region=us", f.name.split("_")[0], f.stem.rsplit("_", 1)[1], f.name, f.stat().st_size,
                        f.stem.rsplit("_", 1)[1] == newest[f.name.split("_")[0]],
                        t(4) if f.name.startswith(FG2) else None) for f in files), key=str)
    code, rows, err = sql(capsys, table, "SELECT * FROM file_slices")
    assert code == 0, err
    got = sorted(((r["partition"], r["file_id"], r["base_instant"], r["base_file"], r["base_file_size"], r["is_latest"],
                   r["replaced_by"]) for r in rows), key=str)
    assert got == expected
    assert all(r["log_files"] == [] and r["is_pending_compaction"] is False for r in rows)


def test_metadata_files_view_lists_the_metadata_tables_files(tables: dict[str, Path],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    table = tables["case_b_mdt"]
    expected = sorted(("region=us", p.name, p.stat().st_size) for p in (table / "region=us").iterdir()
                      if p.name.endswith(".parquet"))
    code, rows, err = sql(capsys, table, "SELECT * FROM metadata_files ORDER BY file")
    assert code == 0, err
    assert [(r["partition"], r["file"], r["size"]) for r in rows] == expected
    # A table without a metadata table: an empty view, not an error.
    code, rows, _ = sql(capsys, tables["case_b_v9"], "SELECT count(*) AS n FROM metadata_files")
    assert code == 0 and rows == [{"n": 0}]


# -- the dry runs ----------------------------------------------------------------------------------------

CLEAN_CONF = ("--conf", "hoodie.cleaner.commits.retained=2")
ARCHIVE_CONF = ("--conf", "hoodie.keep.min.commits=2", "--conf", "hoodie.keep.max.commits=3", "--conf",
                "hoodie.cleaner.commits.retained=1")


def test_clean_plan_view_is_the_plan_of_plan_clean(tables: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    table = tables["case_b_v9"]
    plan = cli_json(capsys, "plan-clean", str(table), *CLEAN_CONF)
    deleting = "delete" if plan["files_to_delete"] else "delete_if_forced"
    expected = sorted([(deleting, d["reason"], d["partition"], d["file_id"], d["base_instant"], d["file"])
                       for d in plan["files_to_delete_if_forced"]]
                      + [("keep", d["reason"], d["partition"], d["file_id"], d["base_instant"], d["file"])
                         for d in plan["kept"]])
    code, rows, err = sql(capsys, table, "SELECT * FROM clean_plan", *CLEAN_CONF)
    assert code == 0, err
    got = sorted((r["decision"], r["reason"], r["partition"], r["file_id"], r["base_instant"], r["file"]) for r in rows)
    assert got == expected
    assert all(r["path"] == f"{r['partition']}/{r['file']}" for r in rows)
    # What the scenario makes of it: fg2, replaced by t4 before the ECTR, goes; fg1's newest slice stays.
    by_file = {r["file"]: (r["decision"], r["reason"]) for r in rows}
    assert by_file[f"{FG2}_0-3-9_{t(3)}.parquet"][1] == "replaced_before_ectr"
    assert by_file[f"{FG1}_0-10-30_{t(10)}.parquet"] == ("keep", "latest_slice")
    # --hudi-release and --conf-file are taken as the dry runs take them.
    conf_file = table.parent / "clean.properties"
    conf_file.write_text("hoodie.cleaner.commits.retained=2\n")
    code, again, _ = sql(capsys, table, "SELECT * FROM clean_plan", "--conf-file", str(conf_file),
                         "--hudi-release", "1.1")
    assert code == 0 and sorted(map(str, again)) == sorted(map(str, rows))


@pytest.mark.parametrize("guard", [True, False])
def test_archive_plan_view_is_the_plan_of_plan_archive(tables: dict[str, Path], guard: bool,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    table = tables["case_b_v9"]
    extra = () if guard else ("--without-savepoint-guard",)
    plan = cli_json(capsys, "plan-archive", str(table), *ARCHIVE_CONF, *extra)
    code, rows, err = sql(capsys, table, "SELECT * FROM archive_plan", *ARCHIVE_CONF, *extra)
    assert code == 0, err
    assert [(r["requested_time"], r["action"], r["state"], r["decision"], r["reasons"]) for r in rows] == [
        (d["requested_time"], d["action"], d["state"], d["decision"], d["reasons"]) for d in plan["instants"]]
    archived = [r["requested_time"] for r in rows if r["decision"] == "archive"]
    if guard:  # HUDI-7779: the clean recorded the savepoint on t3, so the replacecommit t4 stays (guard A3)
        assert archived == [] and rows[0]["reasons"][0].startswith(f"A3: at or after {t(4)}")
    else:  # keep.min 2 of the 7 commits; without the guard t4 goes (and fg2 is exposed)
        assert archived == [t(k) for k in range(4, 9)]
    assert [r["completion_time"] for r in rows[:2]] == [done(4), done(5)]


# -- findings and damage ---------------------------------------------------------------------------------


def test_findings_view_names_damaged_bodies_and_the_answer_is_incomplete(
        tables: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An active commit body and an archived one that do not decode: each is a finding naming its file, its
    write stats are missing, and the answer is incomplete (exit 1)."""
    import shutil

    table = tmp_path / "damaged"
    shutil.copytree(tables["case_b_v9"], table)
    timeline = table / ".hoodie" / "timeline"
    t6_file = timeline / f"{t(6)}_{done(6)}.commit"
    t6_file.write_bytes(b"Obj\x01 not an Avro container")
    lsm = next((timeline / "history").glob("*.parquet"))
    rows = pq.read_table(lsm)
    metadata = [b"Obj\x01 garbage" if r == t(2) else m for r, m in zip(rows["instantTime"].to_pylist(),
                                                                         rows["metadata"].to_pylist(), strict=True)]
    rows = rows.set_column(rows.schema.get_field_index("metadata"), "metadata", pa.array(metadata, pa.binary()))
    pq.write_table(rows, lsm)

    # Findings alone: the active timeline's bodies and the archived listing are read.
    code, found, err = sql(capsys, table, "SELECT severity, code, path FROM findings ORDER BY code")
    assert code == 1, err
    assert found == [{"severity": "error", "code": "body_decode_failed", "path": str(t6_file)},
                     {"severity": "warning", "code": "lsm_file_length_mismatch", "path": str(lsm)}]
    # The archived body is read by write_stats: its rows and t6's are missing, both are named on stderr.
    code, stats, err = sql(capsys, table, "SELECT requested_time FROM write_stats")
    assert code == 1
    assert [r["requested_time"] for r in stats] == [t(k) for k in (1, 3, 4, 5, 7, 8, 9, 10)]
    assert "body_decode_failed" in err and "archived_body_decode_failed" in err
    code, found, err = sql(capsys, table, "SELECT f.code, f.path, f.message FROM findings f WHERE f.code LIKE "
                                          "'%decode%' AND (SELECT count(*) FROM write_stats) > 0 ORDER BY ALL")
    assert code == 1, err
    assert [(f["code"], f["path"]) for f in found] == [("archived_body_decode_failed", str(lsm)),
                                                        ("body_decode_failed", str(t6_file))]
    assert found[0]["message"].startswith(f"cannot decode archived {t(2)} commit COMPLETED: ")


def test_findings_view_of_a_sound_table_is_empty(tables: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, rows, err = sql(capsys, tables["case_b_v9"], "SELECT * FROM findings WHERE severity <> 'info'")
    assert (code, rows, err) == (0, [], "")


# -- refusals ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("query, words", [
    ("selec 1", "syntax error"),
    ("SELECT nope FROM instants", "nope"),
    ("SELECT * FROM no_such_view", "no_such_view"),
    ("SELECT 1; SELECT 2", "one query at a time"),
    ("", "needs TABLE and a query"),
    ("EXPLAIN SELECT 1", "only SELECT"),
    ("SELECT CAST('x' AS INTEGER)", "Conversion Error"),
])
def test_a_bad_query_is_one_line_and_exit_1(tables: dict[str, Path], query: str, words: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = sql(capsys, tables["case_b_v9"], query, fmt="table")
    assert code == 1 and out == ""  # no answer: 2 is kept for table problems
    assert err.count("\n") == 1 and err.startswith("hudi-inspect: sql:") and words in err, err


def test_writes_and_file_access_are_refused(tables: dict[str, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("a,b\n1,2\n")
    out_file = tmp_path / "out.csv"
    refused = [
        (f"COPY (SELECT 1) TO '{out_file}'", "only SELECT"),
        ("CREATE TABLE x AS SELECT * FROM instants", "only SELECT"),
        ("INSERT INTO instants VALUES (1)", "only SELECT"),
        (f"ATTACH '{tmp_path / 'x.db'}'", "only SELECT"),
        ("INSTALL httpfs", "only SELECT"),
        ("SET enable_external_access = true", "only SELECT"),
        (f"SELECT * FROM read_csv('{secret}')", "Permission Error"),
        (f"SELECT * FROM '{secret}'", "Permission Error"),
        ("SELECT * FROM read_text('/etc/hostname')", "Permission Error"),
        (f"SELECT * FROM glob('{tmp_path}/*')", "Permission Error"),
        ("SELECT * FROM read_parquet('https://example.com/x.parquet')", "Permission Error"),
        (f"WITH x AS (SELECT * FROM read_csv('{secret}')) SELECT * FROM x", "Permission Error"),
    ]
    for query, words in refused:
        code, out, err = sql(capsys, tables["case_b_v9"], query, fmt="table")
        assert code == 1 and out == "", query
        assert err.count("\n") == 1 and words in err, (query, err)
    assert not out_file.exists() and not (tmp_path / "x.db").exists()
    # The read-only kinds of query that DuckDB types as SELECT run.
    for query in ("WITH c AS (SELECT action FROM instants) SELECT count(*) AS n FROM c", "FROM instants LIMIT 1",
                  "DESCRIBE instants", "SUMMARIZE write_stats"):
        code, _, err = sql(capsys, tables["case_b_v9"], query)
        assert code == 0, (query, err)


# -- --schema, formats ---------------------------------------------------------------------------------------


def test_schema_lists_every_view_with_documented_columns(tables: dict[str, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, err = sql(capsys, None, None, "--schema")
    assert code == 0, err
    assert list(doc["views"]) == list(VIEW_DOCS) == ["instants", "write_stats", "file_slices", "log_blocks",
                                                     "clean_plan", "archive_plan", "findings", "metadata_files"]
    assert "instant_ts" in doc["macros"]
    for name, view in doc["views"].items():
        assert view["doc"] and all(c["doc"] for c in view["columns"]), name
        # The columns the view really has, in order.
        code, described, err = sql(capsys, tables["logs_v9"], f"DESCRIBE {name}")
        assert code == 0, err
        assert [d["column_name"] for d in described] == [c["column"] for c in view["columns"]], name
    # Text and CSV too, and with a table given.
    code, text, _ = sql(capsys, tables["case_b_v9"], None, "--schema", fmt="table")
    assert code == 0 and "write_stats:" in text and "num_update_writes" in text
    code, csv_text, _ = sql(capsys, None, None, "--schema", fmt="csv")
    assert code == 0 and csv_text.splitlines()[0] == "view,column,type,doc"


def test_formats(tables: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    table = tables["case_b_v9"]
    query = ("SELECT action, source, count(*) AS n, min(requested_time) AS first FROM instants "
             "GROUP BY ALL ORDER BY action, source")
    expected = [{"action": "clean", "source": "active", "n": 1, "first": CLEAN},
                {"action": "commit", "source": "active", "n": 6, "first": t(5)},
                {"action": "commit", "source": "archived", "n": 3, "first": t(1)},
                {"action": "replacecommit", "source": "active", "n": 1, "first": t(4)}]
    assert sql(capsys, table, query)[1] == expected
    code, csv_text, _ = sql(capsys, table, query, fmt="csv")
    assert code == 0 and csv_text.splitlines() == ["action,source,n,first", f"clean,active,1,{CLEAN}",
                                                   f"commit,active,6,{t(5)}", f"commit,archived,3,{t(1)}",
                                                   f"replacecommit,active,1,{t(4)}"]
    code, text, _ = sql(capsys, table, query, fmt="table")
    assert code == 0 and text.splitlines()[0].split() == ["action", "source", "n", "first"]
    assert f"commit         archived  3  {t(1)}" in text
    code, doc, _ = sql(capsys, table, query, "--envelope")
    assert code == 0 and doc["rows"] == expected and doc["findings"] == [] and doc["incomplete"] is False
    # Lists and timestamps (the instant_ts macro) come out as JSON lists and text.
    code, rows, _ = sql(capsys, table, "SELECT files, instant_ts(requested_time) AS at FROM instants LIMIT 1")
    assert rows == [{"files": [f"{t(1)}_{done(1)}.commit"], "at": "2024-01-01T00:01:00"}]
    # Sums (DuckDB's HUGEINT, an Arrow decimal) and decimals are JSON numbers.
    code, rows, _ = sql(capsys, table, "SELECT sum(num_writes) AS records, 1.5::DECIMAL(4, 2) AS d FROM write_stats")
    assert rows == [{"records": 20, "d": 1.5}]
    # No table and no query: usage.
    assert sql(capsys, None, None, fmt="table")[0] == 1


# -- laziness ------------------------------------------------------------------------------------------------


def test_only_the_views_a_query_names_are_computed(tables: dict[str, Path]) -> None:
    assert referenced_views("SELECT * FROM instants i JOIN write_stats w USING (requested_time)") == {
        "instants", "write_stats"}
    assert referenced_views("WITH x AS (SELECT * FROM clean_plan) SELECT * FROM x, (SELECT 1 FROM findings)") == {
        "clean_plan", "findings"}
    assert referenced_views("SELECT 'write_stats' AS s FROM Instants") == {"instants"}
    table = open_table(str(tables["case_b_v9"]))
    result = run_query(table, "SELECT count(*) AS n FROM instants")
    assert result.views_computed == ["instants"] and result.table.to_pylist() == [{"n": 11}]
    assert "_fs_view" not in table.__dict__  # no file-system view was built …
    assert not table.timeline._bodies  # … and no instant body decoded
    result = run_query(table, "SELECT * FROM findings, instants LIMIT 1")
    assert result.views_computed == ["instants", "findings"]  # findings last: it reports what the others read
    with pytest.raises(SqlError, match="only SELECT"):
        run_query(table, "DELETE FROM instants")


# -- the column-wise decoder -------------------------------------------------------------------------------------

_STAT_SCHEMA = {"type": "record", "name": "HoodieWriteStat", "fields": [
    {"name": "fileId", "type": ["null", "string"], "default": None},
    {"name": "path", "type": ["null", "string"], "default": None},
    {"name": "prevCommit", "type": ["null", "string"], "default": None},
    {"name": "numWrites", "type": ["null", "long"], "default": None},
    {"name": "numDeletes", "type": ["null", "long"], "default": None},
    {"name": "numUpdateWrites", "type": ["null", "long"], "default": None},
    {"name": "totalWriteBytes", "type": ["null", "long"], "default": None},
    {"name": "partitionPath", "type": ["null", "string"], "default": None},
    {"name": "numInserts", "type": ["null", "long"], "default": None},
    {"name": "fileSizeInBytes", "type": ["null", "long"], "default": None},
    {"name": "logVersion", "type": ["null", "int"], "default": None},
    {"name": "baseFile", "type": ["null", "string"], "default": None},
    {"name": "logFiles", "type": ["null", {"type": "array", "items": "string"}], "default": None},
    {"name": "runtimeStats", "type": ["null", {"type": "record", "name": "RT", "fields": [
        {"name": "totalScanTime", "type": ["null", "long"]}, {"name": "d", "type": "double"}]}], "default": None},
    {"name": "flag", "type": "boolean", "default": False},
    {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}, "default": "A"},
    {"name": "extra", "type": {"type": "map", "values": "string"}, "default": {}},
]}
_COMMIT_SCHEMA = {"type": "record", "name": "HoodieCommitMetadata", "namespace": "org.apache.hudi.avro.model",
                  "fields": [
                      {"name": "partitionToWriteStats", "type": ["null", {"type": "map", "values": {
                          "type": "array", "items": _STAT_SCHEMA}}], "default": None},
                      {"name": "compacted", "type": ["null", "boolean"], "default": None},
                      {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
                      {"name": "version", "type": ["int", "null"], "default": 1},
                      {"name": "operationType", "type": ["null", "string"], "default": None},
                  ]}


def _random_commit(rng: random.Random) -> dict[str, Any]:
    def text() -> str | None:
        return rng.choice([None, "", "a", "part=ü/ß", "x" * rng.randint(1, 40), "long-" * rng.randint(3, 9)])

    def num() -> int | None:
        return rng.choice([None, 0, 1, -1, 63, 64, -65, 2**31, -(2**40), 2**62, rng.randint(-10**9, 10**9)])

    stats = {}
    for p in range(rng.randint(0, 6)):
        stats[f"p={p}{text() or ''}"] = [{
            "fileId": text(), "path": text(), "prevCommit": text(), "numWrites": num(), "numDeletes": num(),
            "numUpdateWrites": num(), "totalWriteBytes": num(), "partitionPath": rng.choice([None, text()]),
            "numInserts": num(), "fileSizeInBytes": num(), "logVersion": rng.choice([None, 1, 2**30]),
            "baseFile": text(), "logFiles": rng.choice([None, [], [text() or "f"], ["a", "bb", "ccc" * 9]]),
            "runtimeStats": rng.choice([None, {"totalScanTime": num(), "d": 1.5}]), "flag": rng.random() < 0.5,
            "kind": rng.choice(["A", "B"]), "extra": {"k": "v"} if rng.random() < 0.5 else {},
        } for _ in range(rng.randint(0, 4))]
    return {"partitionToWriteStats": rng.choice([None, stats, stats, stats]), "compacted": rng.choice([None, True]),
            "extraMetadata": {"schema": "{}"}, "version": 1, "operationType": "UPSERT"}


def _container(record: dict[str, Any], schema: dict[str, Any] = _COMMIT_SCHEMA, codec: str = "null") -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [record], codec=codec)
    return buf.getvalue()


def _slow(bodies: list[bytes], actions: list[str]) -> tuple[pa.Table, dict[int, str]]:
    rows = _Rows()
    errors = {}
    for i, (b, a) in enumerate(zip(bodies, actions, strict=True)):
        e = _add_slow(rows, i, b, a)
        if e is not None:
            errors[i] = e
    return rows.table(), errors


def test_column_wise_decoding_equals_decode_body_on_random_commit_metadata() -> None:
    rng = random.Random(28)
    bodies = [_container(_random_commit(rng)) for _ in range(300)]
    actions = [rng.choice(["commit", "deltacommit", "replacecommit"]) for _ in bodies]
    # Other headers, another codec, JSON, empty bodies and damage among them: each decided as decode_body does.
    bodies[3] = _container(_random_commit(rng), codec="deflate")
    bodies[5] = json.dumps({"partitionToWriteStats": {"p": [{"fileId": "f", "numWrites": "7"}, 5]}}).encode()
    bodies[7] = b""
    bodies[11] = bodies[12][:-20]  # truncated
    bodies[13] = bodies[14][:-1] + bytes([bodies[14][-1] ^ 0xFF])  # a changed sync marker (fastavro draws it at random)
    bodies[17] = b"Obj\x01 garbage"
    bodies[19] = bodies[20] + b"trailing"
    bodies[23] = b"{not json"
    assert write_stats_of_bodies(bodies, actions) == _slow(bodies, actions)
    fast, errors = write_stats_of_bodies(bodies, actions)
    assert fast.num_rows > 300 and set(errors) == {11, 13, 17, 19, 23}
    # Only the wanted bodies are read.
    some, _ = write_stats_of_bodies(bodies, actions, wanted=[0, 1, 2])
    assert set(some["body"].to_pylist()) <= {0, 1, 2}
    # A wrong record type for the action is refused as decode_body refuses it.
    cleaner = _container({"partitionToWriteStats": None, "compacted": None, "extraMetadata": None, "version": 1,
                          "operationType": None}, {**_COMMIT_SCHEMA, "name": "HoodieCleanerPlan"})
    assert write_stats_of_bodies([cleaner], ["commit"]) == _slow([cleaner], ["commit"])


# -- the SQL page ----------------------------------------------------------------------------------------------

SQL_PAGE = str(PAGES_DIR / "7_sql.py")


@pytest.fixture()
def ui_env(tables: dict[str, Path], tmp_path: Path) -> Any:
    """The dashboard's cache in a temp folder and the built tables' folder as its root; fresh Streamlit caches."""
    import streamlit as st

    mp = pytest.MonkeyPatch()
    mp.setenv("HUDI_INSPECTOR_CACHE", str(tmp_path / "cache"))
    mp.setenv("HUDI_INSPECTOR_ROOTS", str(tables["case_b_v9"].parent))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    mp.undo()


def open_sql_page(table: Path, **params: str) -> Any:
    """The app with `table` and `params` in the URL (a pasted link), switched to the SQL page; no exception."""
    from streamlit.testing.v1 import AppTest

    from hudi_core import dashboard

    at = AppTest.from_file(str(dashboard.APP), default_timeout=90)
    at.query_params["table"] = str(table)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(SQL_PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_sql_page_runs_the_query_in_the_url_and_charts_its_times(tables: dict[str, Path], ui_env: Any) -> None:
    query = "SELECT requested_time, action, source FROM instants ORDER BY requested_time"
    at = open_sql_page(tables["case_b_v9"], sql=query)
    assert not at.error, [e.value for e in at.error]
    assert at.text_area(key="sql").value == query
    result = at.dataframe[-1].value
    assert [tuple(r) for r in result.itertuples(index=False)] == [(r[0], r[2], r[4]) for r in
                                                                  expected_case_b_instants("file_name")]
    assert any("11 row(s) · views computed: instants" in c.value for c in at.caption)
    assert any(b.label == "⬇ query-result.csv" for b in at.get("download_button"))
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    # One series per action, at the instants' times (read in the table's timezone, which the axis names).
    names = {trace["name"] for trace in spec["data"]}
    assert names == {"commit", "replacecommit", "clean"}
    xs = sorted(x for trace in spec["data"] for x in trace["x"])
    assert xs[0].startswith("2024-01-01T00:01:00") and xs[-1].startswith("2024-01-01T00:10:01")
    assert "time (" in spec["layout"]["xaxis"]["title"]["text"]
    assert at.query_params["sql"] == query  # the link reproduces it


def test_sql_page_examples_fill_the_editor_and_the_url(tables: dict[str, Path], ui_env: Any) -> None:
    from hudi_core.dashboard.sql import EXAMPLES

    at = open_sql_page(tables["case_b_v9"])
    assert at.text_area(key="sql").value == EXAMPLES["Instants per action and state"]
    assert "sql" not in at.query_params  # the default query stays out of the URL
    at.selectbox(key="sql_example").select("File groups rewritten most").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.text_area(key="sql").value == EXAMPLES["File groups rewritten most"]
    assert at.query_params["sql"] == EXAMPLES["File groups rewritten most"]
    rows = at.dataframe[-1].value
    assert rows.iloc[0]["file_id"] == FG1 and rows.iloc[0]["rewrites"] == 7  # t2 and t5..t10 rewrote fg1
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert bars[0]["type"] == "bar"
    # Every example runs on this table without an error.
    for label in EXAMPLES:
        at.selectbox(key="sql_example").select(label).run()
        assert not at.exception and not at.error, (label, [e.value for e in at.error])


def test_sql_page_shows_a_bad_query_as_one_line(tables: dict[str, Path], ui_env: Any) -> None:
    at = open_sql_page(tables["case_b_v9"], sql="SELECT * FROM read_csv('/etc/passwd')")
    assert [e.value for e in at.error] == [
        'Permission Error: Cannot access file "/etc/passwd" - file system operations are disabled by configuration']
    at = open_sql_page(tables["case_b_v9"], sql="selec 1")
    assert len(at.error) == 1 and "\n" not in at.error[0].value and "syntax error" in at.error[0].value
    at = open_sql_page(tables["case_b_v9"], sql="SELECT * FROM clean_plan", sql_conf="hoodie.cleaner.commits.retaind=2")
    assert len(at.error) == 1 and "hoodie.cleaner.commits.retained" in at.error[0].value


def test_sql_page_dry_run_configuration_from_the_url(tables: dict[str, Path], ui_env: Any) -> None:
    at = open_sql_page(tables["case_b_v9"], sql="SELECT decision, count(*) AS files FROM clean_plan GROUP BY ALL "
                       "ORDER BY ALL", sql_conf="hoodie.cleaner.commits.retained=2", sql_release="1.1")
    assert not at.error, [e.value for e in at.error]
    assert at.dataframe[-1].value.to_dict("records") == [{"decision": "delete_if_forced", "files": 4},
                                                         {"decision": "keep", "files": 4}]


def test_result_figure_picks_a_chart() -> None:
    import pandas as pd

    from hudi_core.dashboard.sql import result_figure

    times = pd.DataFrame({"requested_time": [t(1), t(2), t(3)], "files": [1, 3, 2]})
    fig = result_figure(times, "UTC")
    assert fig is not None and fig.data[0].mode == "lines+markers" and "UTC" in fig.layout.xaxis.title.text
    days = pd.DataFrame({"day": [pd.Timestamp("2024-01-01").date()] * 2, "action": ["commit", "clean"], "n": [2, 1]})
    assert {trace.name for trace in result_figure(days).data} == {"commit", "clean"}
    bars = result_figure(pd.DataFrame({"partition": ["a", "b"], "files": [3, 1]}))
    assert bars is not None and bars.data[0].type == "bar"
    assert result_figure(pd.DataFrame({"file": ["x", "y"]})) is None  # nothing to chart
    assert result_figure(pd.DataFrame({"n": [1, 2]})) is None
    assert result_figure(pd.DataFrame()) is None


def test_archived_write_stats_are_kept_in_the_derived_index(tables: dict[str, Path], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Archive files are immutable: their write stats are kept beside the archive index (keyed by URI, size and
    modification time), read back on the next query, and an entry that cannot be read is rebuilt (a finding)."""
    from hudi_core.services.write_stats import WRITE_STATS_INDEX, table_write_stats

    monkeypatch.setenv("HUDI_INSPECTOR_ARCHIVE_INDEX", str(tmp_path / "index"))
    for version in (6, 9):
        table = tables[f"case_b_v{version}"]
        first = table_write_stats(open_table(str(table)))
        entries = sorted((tmp_path / "index" / WRITE_STATS_INDEX).glob("*.arrow"))
        assert entries, version
        again = open_table(str(table))
        assert table_write_stats(again).equals(first)
        for entry in entries:
            entry.write_bytes(b"not arrow")
        damaged = open_table(str(table))
        assert table_write_stats(damaged).equals(first)
        assert {f.code for f in damaged.findings} == {"archive_index_rebuilt"}
        for entry in entries:
            entry.unlink()
    monkeypatch.setenv("HUDI_INSPECTOR_ARCHIVE_INDEX", "0")  # off: the same rows, nothing written
    assert table_write_stats(open_table(str(tables["case_b_v9"]))).equals(first)
    assert not list((tmp_path / "index" / WRITE_STATS_INDEX).glob("*.arrow"))


# -- budgets: time and memory ------------------------------------------------------------------------------------

ENDLESS = {
    "cross join of ranges": "SELECT count(*) FROM range(1000000) a, range(1000000) b, range(1000000) c",
    "recursive CTE without an end": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                                    "SELECT count(*) FROM r",
}


@pytest.mark.parametrize("name", list(ENDLESS))
def test_a_query_past_its_time_limit_is_interrupted_one_line_exit_1(tables: dict[str, Path], name: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import time

    started = time.monotonic()
    code, out, err = sql(capsys, tables["case_b_v9"], ENDLESS[name], "--timeout", "1", fmt="table")
    assert time.monotonic() - started < 30
    assert code == 1 and out == ""  # no answer
    assert err == "hudi-inspect: sql: query stopped after 1 s (its time limit)\n"


def test_run_query_times_out_with_sql_timeout_and_a_quick_query_is_untouched(tables: dict[str, Path]) -> None:
    from hudi_core.inspect.sql import SqlTimeout

    table = open_table(str(tables["case_b_v9"]))
    with pytest.raises(SqlTimeout):
        run_query(table, ENDLESS["cross join of ranges"], timeout=0.5)
    # The timer is cancelled once the answer is in: a quick query under a short limit answers.
    assert run_query(table, "SELECT count(*) AS n FROM instants", timeout=5).table.to_pylist() == [{"n": 11}]


def test_the_memory_limit_is_set_and_locked(tables: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from hudi_core.inspect.sql import connect, default_memory_limit

    con = connect("300MB")
    assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0].startswith("286")  # MiB shown
    code, out, err = sql(capsys, tables["case_b_v9"], "SELECT current_setting('memory_limit') AS m",
                         "--memory-limit", "300MB")
    assert code == 0 and out == [{"m": "286.1 MiB"}], err
    # A query cannot raise it (SET is refused, and the configuration is locked anyway).
    with pytest.raises(Exception, match="locked"):
        con.execute("SET memory_limit = '100GB'")
    assert default_memory_limit().endswith("MB") and int(default_memory_limit()[:-2]) <= 2048
    # More than the limit is one line, exit 1 (no answer).
    code, out, err = sql(capsys, tables["case_b_v9"], "SELECT list(range) FROM range(100000000)",
                         "--memory-limit", "64MB", fmt="table")
    assert code == 1 and err.count("\n") == 1 and "memory" in err.lower(), err
    code, out, err = sql(capsys, tables["case_b_v9"], "SELECT 1", "--memory-limit", "lots", fmt="table")
    assert code == 1 and err.count("\n") == 1 and "memory limit 'lots'" in err, err


def test_sql_page_interrupts_a_query_past_its_time_limit(tables: dict[str, Path], ui_env: Any) -> None:
    import time

    from hudi_core.dashboard import sql as sql_ui

    for _ in range(2):  # not cached: running it again tries again
        started = time.monotonic()
        answer = sql_ui.run(str(tables["case_b_v9"]), "local", ENDLESS["recursive CTE without an end"],
                            timeout=1.0)
        assert answer.table is None and answer.error == "query stopped after 1 s (its time limit)"
        assert time.monotonic() - started >= 0.9


def test_a_running_query_does_not_hold_other_queries_back(tables: dict[str, Path]) -> None:
    """DuckDB runs without Python's lock: while one session's endless query runs, another's answers at once (the
    dashboard serves every session from one process)."""
    import threading
    import time

    from hudi_core.inspect.sql import SqlTimeout

    table = open_table(str(tables["case_b_v9"]))
    run_query(table, "SELECT count(*) FROM instants")  # the view's first build, outside the timing
    caught: list[BaseException] = []

    def endless() -> None:
        try:
            # Its limit is the 6 s bound checked below: it still runs whenever that bound holds.
            run_query(table, ENDLESS["cross join of ranges"], timeout=6)
        except SqlTimeout as exc:
            caught.append(exc)

    worker = threading.Thread(target=endless)
    started = time.monotonic()
    worker.start()
    time.sleep(0.5)
    assert run_query(table, "SELECT 42 AS n", timeout=5).table.to_pylist() == [{"n": 42}]
    assert time.monotonic() - started < 6 and worker.is_alive()
    worker.join(timeout=30)
    assert len(caught) == 1
