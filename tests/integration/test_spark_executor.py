"""The Spark executor against the local one: identical Arrow tables on every fixture table.

One local Spark session (``local[2]``) serves the whole module. Every stage is forced onto Spark
(``min_items=0``) with small batches, so every table is spread over several Spark partitions.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import json
import os
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import FIXTURE_NAMES

from hudi_core import open_table
from hudi_core.cli import main
from hudi_core.engines import engine
from hudi_core.engines.engine import EngineError, get_executor, resolve_engine
from hudi_core.engines.executor import LocalExecutor, run_batches
from hudi_core.engines.local import ReportingLocalExecutor
from hudi_core.engines.progress import ProgressEvent, TerminalProgressBar, cli_progress, report_progress
from hudi_core.engines.spark import SparkExecutionError, SparkExecutor, transport_for
from hudi_core.formats.logfile.inventory import INVENTORY_SCHEMA, scan_log_files
from hudi_core.formats.timeline.bulk import DECODED_SCHEMA, decode_instant_files
from hudi_core.inspect.scan import SCAN_STAGES, canonical, full_scan, table_digest
from hudi_core.io.storage import StorageSpec
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import builtin_names, load_builtin
from hudi_core.table.listing.storage import LISTING_SCHEMA, discover_partitions, list_folders_batch

#: Rows per full-scan stage of every fixture table (data table, then its metadata table), from a
#: local run over the real bytes. Both executors must reproduce them.
EXPECTED_ROWS: dict[tuple[str, str], dict[str, int]] = {
    ("v6_empty", "data"): {"partitions": 0, "instant_bodies": 0, "file_slices": 0, "log_blocks": 0},
    ("v6_nonpartitioned", "data"): {"partitions": 3, "instant_bodies": 6, "file_slices": 2, "log_blocks": 0},
    ("v6_nonpartitioned_rollback", "data"): {"partitions": 5, "instant_bodies": 9, "file_slices": 1,
                                             "log_blocks": 3},
    ("v6_simplekeygen_nonhivestyle", "data"): {"partitions": 7, "instant_bodies": 6, "file_slices": 3,
                                               "log_blocks": 1},
    ("v6_simplekeygen_nonhivestyle_overwritetable", "data"): {"partitions": 8, "instant_bodies": 9,
                                                              "file_slices": 5, "log_blocks": 0},
    ("v6_trips_8i1u", "data"): {"partitions": 7, "instant_bodies": 6, "file_slices": 3, "log_blocks": 1},
    ("v9_nonpartitioned_rollback", "data"): {"partitions": 3, "instant_bodies": 9, "file_slices": 2,
                                             "log_blocks": 0},
    ("v9_nonpartitioned_rollback", "mdt"): {"partitions": 27, "instant_bodies": 18, "file_slices": 13,
                                            "log_blocks": 23},
    ("v9_txns_nonpart_meta", "data"): {"partitions": 12, "instant_bodies": 39, "file_slices": 11, "log_blocks": 0},
    ("v9_txns_nonpart_meta", "mdt"): {"partitions": 125, "instant_bodies": 51, "file_slices": 46,
                                      "log_blocks": 93},
    ("v9_txns_simple_meta", "data"): {"partitions": 22, "instant_bodies": 45, "file_slices": 14, "log_blocks": 5},
    ("v9_txns_simple_meta", "mdt"): {"partitions": 154, "instant_bodies": 60, "file_slices": 48,
                                     "log_blocks": 119},
    ("v9_txns_simple_overwrite", "data"): {"partitions": 11, "instant_bodies": 9, "file_slices": 8,
                                           "log_blocks": 0},
    ("v9_txns_simple_overwrite", "mdt"): {"partitions": 47, "instant_bodies": 21, "file_slices": 14,
                                          "log_blocks": 45},
}


FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@pytest.fixture(scope="session")
def spark_session():
    """One local[2] Spark session for the test session (skipped with the reason when Spark cannot run)."""
    reason = engine.spark_unavailable_reason()
    if reason:
        pytest.skip(f"Spark executor tests need Spark: {reason}")
    # Short-lived test JVM: C1-only JIT and the serial collector start faster on 2 cores.
    return engine.get_spark_session("local[2]", {"spark.driver.extraJavaOptions": FAST_JVM})


@pytest.fixture()
def spark(spark_session) -> SparkExecutor:
    """A Spark executor sending every stage to Spark, whatever its size."""
    return SparkExecutor(spark_session, min_items=0)


def _all_folders(root: Path) -> list[str]:
    """Every folder under a table (the root as ""), root-relative, sorted."""
    return ["", *sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())]


# -- parity on every fixture table --------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_full_scan_parity_on_fixture(name: str, table_path, spark: SparkExecutor) -> None:
    base = table_path(name)
    local_table = open_table(str(base), executor=LocalExecutor())
    spark_table = open_table(str(base), executor=spark)
    pairs = [("data", local_table, spark_table)]
    if local_table.metadata_table() is not None:
        pairs.append(("mdt", local_table.metadata_table(), spark_table.metadata_table()))
    for label, lt, st in pairs:
        local = full_scan(lt)
        assert {k: v.num_rows for k, v in local.items()} == EXPECTED_ROWS[(name, label)]
        _assert_same(local, full_scan(st), f"{name} {label}")
    # Every bulk stage of the Spark table really ran as a Spark job.
    assert spark.history and {h["ran_on"] for h in spark.history} == {"spark"}


def _assert_same(local: dict[str, pa.Table], remote: dict[str, pa.Table], where: str) -> None:
    assert set(remote) == set(local), where
    for stage, expected in local.items():
        got = remote[stage]
        assert got.schema == expected.schema, (where, stage)
        # Identical after sorting, and in fact identical in order too (dictionary columns compared
        # by value: Spark rebuilds one dictionary where the local run concatenates one per batch).
        assert canonical(got).equals(canonical(expected)), (where, stage)
        assert _plain(got).equals(_plain(expected)), (where, stage)
        assert table_digest(got) == table_digest(expected)


def _plain(table: pa.Table) -> pa.Table:
    """`table` with dictionary columns decoded, rows in their order."""
    return pa.table([c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in table.columns],
                    names=table.column_names)


#: Archived rows of the built-in scenarios that archive (layout 1 counts states, layout 2 instants).
ARCHIVED_ROWS = {
    "hudi7779_case_a": (15, 5), "hudi7779_case_b": (9, 3), "hudi7779_option_c": (36, 12),
    "hudi7779_summary_i": (9, 3), "hudi7779_summary_ii": (15, 5), "hudi7779_summary_iii": (6, 2),
    "schema_evolution": (15, 5),
}


@pytest.mark.parametrize("name", builtin_names())
def test_full_scan_parity_on_builtin_scenario(name: str, tmp_path: Path, spark: SparkExecutor) -> None:
    """Every built-in scenario, built as a v6 (layout 1) and a v9 (layout 2) table."""
    for version, layout_index in ((6, 0), (9, 1)):
        built = build_scenario(load_builtin(name), tmp_path / f"v{version}", version)
        local = full_scan(open_table(str(built.path), executor=LocalExecutor()))
        remote = full_scan(open_table(str(built.path), executor=spark))
        _assert_same(local, remote, f"{name} v{version}")
        assert local["instant_bodies"].num_rows > 0 and local["partitions"].num_rows > 0
        if name in ARCHIVED_ROWS:
            # The archived listing (with a dictionary column) went through Spark too.
            assert remote["archived"].num_rows == ARCHIVED_ROWS[name][layout_index]
        else:
            assert "archived" not in local


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_listing_and_decoding_parity_small_batches(name: str, table_path, spark_session,
                                                   spark: SparkExecutor) -> None:
    """Every folder of the table listed, and every timeline file decoded, in batches of 2 / 3."""
    base = table_path(name)
    spec = StorageSpec.of(str(base))
    folders = _all_folders(base)
    local = run_batches(LocalExecutor(), list_folders_batch, spec, folders, 2, LISTING_SCHEMA)
    remote = spark.map_batches(list_folders_batch, spec, folders, 2, LISTING_SCHEMA)
    assert remote.equals(local)
    assert local.num_rows == sum(1 for _ in base.rglob("*"))
    slots = spark_session.sparkContext.defaultParallelism
    assert spark.history[-1]["partitions"] == min(spark.history[-1]["batches"], slots * spark.tasks_per_core)
    assert discover_partitions(spec, spark, 2) == discover_partitions(spec, LocalExecutor(), 2)

    timeline_files = [r["folder"] + "/" + r["name"] for r in local.to_pylist()
                      if r["folder"] in (".hoodie", ".hoodie/timeline") and not r["is_dir"]]
    decoded_local = run_batches(LocalExecutor(), decode_instant_files, spec, timeline_files, 3, DECODED_SCHEMA)
    decoded_spark = spark.map_batches(decode_instant_files, spec, timeline_files, 3, DECODED_SCHEMA)
    assert decoded_spark.equals(decoded_local)


def test_log_inventory_parity_with_record_counts(table_path, spark: SparkExecutor) -> None:
    """Header scan with record counts of every log file of a metadata table (HFile and Avro blocks)."""
    base = table_path("v9_txns_simple_meta") / ".hoodie" / "metadata"
    spec = StorageSpec.of(str(base))
    logs = sorted(str(p.relative_to(base)) for p in base.rglob(".*.log.*"))
    assert len(logs) == 119

    counted = functools.partial(scan_log_files, decode_counts=True)
    local = run_batches(LocalExecutor(), counted, spec, logs, 16, INVENTORY_SCHEMA)
    remote = spark.map_batches(counted, spec, logs, 16, INVENTORY_SCHEMA)
    assert remote.equals(local)
    assert local.num_rows == 119
    assert sum(local.column("record_count").to_pylist()) > 0


# -- transport, errors, thresholds ----------------------------------------------------------------

EXOTIC_SCHEMA = pa.schema([
    pa.field("path", pa.string(), nullable=False),
    pa.field("seen_at", pa.timestamp("ns", tz="UTC")),
    pa.field("kind", pa.dictionary(pa.int32(), pa.string())),
    pa.field("amount", pa.decimal128(20, 4)),
])


def exotic_batch(spec: StorageSpec, items: list[str]) -> pa.Table:
    """A batch function with types Spark would alter (ns timestamps, dictionary, decimal)."""
    stamp = dt.datetime(2026, 3, 7, 16, 26, 14, tzinfo=dt.UTC)
    return pa.table({
        "path": items,
        "seen_at": pa.array([int(stamp.timestamp()) * 10**9 + i for i in range(len(items))], pa.timestamp("ns", "UTC")),
        "kind": pa.array([spec.uri[-3:]] * len(items)).dictionary_encode(),
        "amount": pa.array([None if i % 2 else i for i in range(len(items))], pa.decimal128(20, 4)),
    }, schema=EXOTIC_SCHEMA)


def failing_batch(spec: StorageSpec, items: list[str]) -> pa.Table:
    """A batch function that always fails on the executor."""
    raise RuntimeError(f"boom on {items[0]}")


def _pickle_by_value() -> None:
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


def test_ipc_transport_keeps_exotic_types(spark: SparkExecutor) -> None:
    _pickle_by_value()
    assert transport_for(DECODED_SCHEMA) == "native"
    assert transport_for(INVENTORY_SCHEMA) == "native"
    assert transport_for(EXOTIC_SCHEMA) == "ipc"
    assert transport_for(pa.schema([("kind", pa.dictionary(pa.int32(), pa.string()))])) == "native"
    items = [f"p{i:03d}" for i in range(25)]
    spec = StorageSpec.of("/tmp/abc")
    expected = run_batches(LocalExecutor(), exotic_batch, spec, items, 4, EXOTIC_SCHEMA)
    got = spark.map_batches(exotic_batch, spec, items, 4, EXOTIC_SCHEMA)
    assert got.schema == EXOTIC_SCHEMA
    assert got.equals(expected)
    assert got.column("seen_at")[1].value % 10**9 == 1  # nanoseconds survived


def test_large_stage_runs_in_waves(table_path, spark: SparkExecutor, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stage bigger than one job's byte budget is split into several jobs; same rows, same order."""
    from hudi_core.engines import spark as spark_module

    monkeypatch.setattr(spark_module, "FIRST_WAVE_ITEMS", 10)
    monkeypatch.setattr(spark_module, "TARGET_JOB_BYTES", 20_000)
    base = table_path("v9_txns_simple_meta") / ".hoodie" / "metadata"
    spec = StorageSpec.of(str(base))
    folders = _all_folders(base)
    expected = run_batches(LocalExecutor(), list_folders_batch, spec, folders, 2, LISTING_SCHEMA)
    got = spark.map_batches(list_folders_batch, spec, folders, 2, LISTING_SCHEMA)
    assert got.equals(expected)
    assert spark.history[-1]["jobs"] >= 2


def test_failed_job_is_one_line_error(spark: SparkExecutor) -> None:
    _pickle_by_value()
    with pytest.raises(SparkExecutionError) as err:
        spark.map_batches(failing_batch, StorageSpec.of("/tmp/x"), ["a", "b"], 1, LISTING_SCHEMA)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("Spark job failing_batch failed on /tmp/x:") and "boom on" in message


def test_small_stages_run_on_the_driver(table_path, spark_session) -> None:
    base = table_path("v9_txns_simple_meta")
    executor = SparkExecutor(spark_session, min_items=10_000)
    view = open_table(str(base), executor=executor).fs_view()
    assert len(view.partitions) == 3
    # Local listing levels below the threshold run inline in the driver (no batch at all); other small
    # stages run on the driver's pool: nothing went to Spark.
    assert {h["ran_on"] for h in executor.history} <= {"driver"}
    assert SparkExecutor(lambda: pytest.fail("no session needed"), min_items=5).map_batches(
        list_folders_batch, StorageSpec.of(str(base)), [""], 1, LISTING_SCHEMA).num_rows == 4


_THREADS: list[int] = []


def thread_recording_batch(spec: StorageSpec, items: list[str]) -> pa.Table:
    import threading
    import time

    _THREADS.append(threading.get_ident())
    time.sleep(0.01)  # long enough that a pool starts more than one thread
    return pa.table({"item": items})


def test_small_stages_over_local_files_run_on_one_thread(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Below `min_items` a stage over local files runs on one thread, as the local engine does
    (CPU-bound batch functions convoy on the GIL in a pool: log-blocks on M took 4.4-5.0 s there, 2.3 s
    on one thread); remote storage keeps the driver's pool, where it hides latency."""
    schema = pa.schema([("item", pa.string())])
    items = [str(i) for i in range(40)]
    executor = SparkExecutor(lambda: pytest.fail("no session for a small stage"), min_items=10_000)
    _THREADS.clear()
    out = executor.map_batches(thread_recording_batch, StorageSpec.of(str(tmp_path)), items, 1, schema)
    assert out.column("item").to_pylist() == items and len(set(_THREADS)) == 1
    _THREADS.clear()
    executor.map_batches(thread_recording_batch, StorageSpec.of("memory://x"), items, 1, schema)
    assert len(set(_THREADS)) > 1


def test_warm_up_runs_one_job_per_slot(spark: SparkExecutor) -> None:
    assert spark.warm_up() > 0
    last = spark.history[-1]
    slots = spark.session.sparkContext.defaultParallelism
    assert (last["stage"], last["ran_on"], last["items"], last["partitions"]) == ("warm_batch", "spark", slots, slots)


def test_empty_stage_starts_nothing() -> None:
    executor = SparkExecutor(lambda: pytest.fail("no session for an empty stage"), min_items=0)
    assert executor.map_batches(list_folders_batch, StorageSpec.of("/tmp"), [], 8, LISTING_SCHEMA).num_rows == 0
    assert not executor.started


# -- progress -----------------------------------------------------------------------------------


def test_progress_events_on_calling_thread(table_path, spark: SparkExecutor) -> None:
    base = table_path("v9_txns_simple_meta") / ".hoodie" / "metadata"
    spec = StorageSpec.of(str(base))
    folders = _all_folders(base)
    counts = {}
    for executor in (spark, ReportingLocalExecutor(max_workers=2)):
        events: list[ProgressEvent] = []
        threads: set[int] = set()

        def record(event: ProgressEvent, sink: list[ProgressEvent] = events, seen: set[int] = threads) -> None:
            sink.append(event)
            seen.add(threading.get_ident())

        with report_progress(record):
            executor.map_batches(list_folders_batch, spec, folders, 1, LISTING_SCHEMA)
        assert threads == {threading.get_ident()}
        assert events[-1] == ProgressEvent("listing folders", len(folders), len(folders), executor.name)
        dones = [e.done for e in events]
        assert dones == sorted(dones) and len(set(dones)) == len(dones)
        counts[executor.name] = len(events)
    # The local executor reports after every batch (one folder each); Spark per finished task at most.
    assert counts["local"] == len(folders)
    assert 1 <= counts["spark"] <= spark.session.sparkContext.defaultParallelism * spark.tasks_per_core + 1


def test_terminal_progress_bar_and_cli_policy() -> None:
    out = io.StringIO()
    bar = TerminalProgressBar(out, min_interval=0)
    bar(ProgressEvent("decoding instants", 5, 20, "spark"))
    assert "decoding instants (spark) [" in out.getvalue() and " 5/20" in out.getvalue()
    bar(ProgressEvent("decoding instants", 20, 20, "spark"))
    assert out.getvalue().endswith("\r")

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert cli_progress("json", Tty()) is None
    assert cli_progress("table", io.StringIO()) is None
    assert isinstance(cli_progress("table", Tty()), TerminalProgressBar)


# -- engine selection -----------------------------------------------------------------------------


def test_engine_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    notices: list[str] = []
    monkeypatch.delenv(engine.ENGINE_ENV, raising=False)
    assert resolve_engine("local") == "local"
    monkeypatch.setenv(engine.ENGINE_ENV, "local")
    assert resolve_engine(None) == "local"
    assert isinstance(get_executor(None), ReportingLocalExecutor)
    monkeypatch.setenv(engine.ENGINE_ENV, "flink")
    with pytest.raises(EngineError, match="unknown engine 'flink'"):
        resolve_engine(None)
    monkeypatch.delenv(engine.ENGINE_ENV)
    # No Java: the default falls back to local with one notice.
    monkeypatch.setenv("JAVA_HOME", "/nonexistent")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert resolve_engine(None, notices.append) == "local"
    assert len(notices) == 1 and "no Java runtime" in notices[0]
    with pytest.raises(EngineError, match="spark engine was requested but no Java runtime"):
        resolve_engine("spark")


def test_spark_settings_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_MASTER", "spark://envhost:7077")
    assert engine.spark_settings()[0] == "spark://envhost:7077"
    assert engine.spark_settings(conf=["spark.master=yarn"])[0] == "yarn"
    master, conf = engine.spark_settings("local[3]", ["spark.executor.memory=2g", "spark.ui.enabled=true"])
    assert master == "local[3]" and conf["spark.master"] == "local[3]"
    assert conf["spark.executor.memory"] == "2g" and conf["spark.ui.enabled"] == "true"
    assert conf["spark.ui.showConsoleProgress"] == "false"
    monkeypatch.delenv("SPARK_MASTER")
    assert engine.spark_settings()[0] == "local[*]"
    assert "spark.ui.enabled" not in engine.spark_settings("spark://h:1")[1]
    with pytest.raises(EngineError, match="--spark-conf expects KEY=VALUE"):
        engine.parse_spark_conf(["novalue"])


# -- CLI ----------------------------------------------------------------------------------------------


def test_cli_scan_json_local_and_spark(table_path, spark_session, capsys, monkeypatch) -> None:
    table = str(table_path("v6_trips_8i1u"))
    assert main(["scan", table, "--engine", "local", "--format", "json"]) == 0
    local = json.loads(capsys.readouterr().out)
    monkeypatch.setenv("HUDI_INSPECTOR_SPARK_MIN_ITEMS", "0")
    assert main(["scan", table, "--engine", "spark", "--spark-master", "local[2]",
                 "--spark-conf", "spark.sql.shuffle.partitions=2", "--format", "json"]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert local["engine"] == "local" and local["spark"] is None
    assert remote["engine"] == "spark" and remote["spark"]["master"] == "local[2]"
    assert [s["stage"] for s in local["stages"]] == [s for s in SCAN_STAGES if s != "archived"]
    assert [(s["stage"], s["rows"], s["sha256"]) for s in remote["stages"]] == \
           [(s["stage"], s["rows"], s["sha256"]) for s in local["stages"]]
    assert {j["ran_on"] for j in remote["spark_jobs"]} == {"spark"}
    assert {s["stage"]: s["rows"] for s in local["stages"]} == EXPECTED_ROWS[("v6_trips_8i1u", "data")]


def test_cli_rejects_bad_spark_conf(table_path, spark_session, capsys) -> None:
    assert main(["fsview", str(table_path("v6_nonpartitioned")), "--engine", "spark", "--spark-conf", "oops"]) == 1
    assert capsys.readouterr().err.strip() == "hudi-inspect: --spark-conf expects KEY=VALUE, got 'oops'"


def test_local_master_sends_only_very_large_stages_to_spark(monkeypatch) -> None:
    """On `local[*]` Spark shares the machine's cores with the thread pool and adds the JVM: only stages
    of 250,000 items go to it; a cluster master keeps 1,000; the environment overrides both."""
    monkeypatch.delenv("HUDI_INSPECTOR_SPARK_MIN_ITEMS", raising=False)
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    assert engine.get_executor("spark", notice=None).min_items == engine.LOCAL_MASTER_MIN_ITEMS == 250_000
    assert engine.get_executor("spark", "local[2]", notice=None).min_items == 250_000
    assert engine.get_executor("spark", "spark://host:7077", notice=None).min_items == 1_000
    monkeypatch.setenv("SPARK_MASTER", "yarn")
    assert engine.get_executor("spark", notice=None).min_items == 1_000
    monkeypatch.setenv("HUDI_INSPECTOR_SPARK_MIN_ITEMS", "7")
    assert engine.get_executor("spark", "local[*]", notice=None).min_items == 7


def pid_batch(spec: StorageSpec, items: list[str]) -> pa.Table:
    return pa.table({"item": items, "pid": [os.getpid()] * len(items)})


def test_cpu_bound_local_stages_spread_over_processes(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`run_cpu_batches` runs an inline stage's batches in one process per core (same rows, in
    order); `HUDI_INSPECTOR_PROCESSES=0` keeps it in this process; an executor runs it as before."""
    from hudi_core.engines.executor import run_batches, run_cpu_batches

    schema = pa.schema([("item", pa.string()), ("pid", pa.int64())])
    items = [str(i) for i in range(6)]
    spec = StorageSpec.of(str(tmp_path))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    spread = run_cpu_batches(None, pid_batch, spec, items, 2, schema)
    assert spread.column("item").to_pylist() == items
    assert os.getpid() not in set(spread.column("pid").to_pylist())
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "0")
    here = run_cpu_batches(None, pid_batch, spec, items, 2, schema)
    assert set(here.column("pid").to_pylist()) == {os.getpid()}
    assert here.column("item").to_pylist() == run_batches(None, pid_batch, spec, items, 2, schema).column(
        "item").to_pylist()
