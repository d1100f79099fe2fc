"""A real Spark standalone cluster on loopback: master + one worker from the pyspark installation.

The test starts ``org.apache.spark.deploy.master.Master`` and ``...worker.Worker`` with
``$SPARK_HOME/bin/spark-class`` on 127.0.0.1 (free ports, logs and work dirs in a temp dir), runs
``hudi-inspect scan --engine spark --spark-master spark://127.0.0.1:PORT`` on a fixture table in a
separate process (one Spark context per process), and compares every stage's digest with a local
in-process scan. Master and worker are stopped in a ``finally``, whatever happens.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.spark_cluster import FAST_JVM, master_state, standalone_cluster, tail
from hudi_core import open_table
from hudi_core.engines import engine
from hudi_core.engines.executor import LocalExecutor
from hudi_core.inspect.scan import full_scan, table_digest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

def _scan_on_cluster(cluster: dict, target: str, extra: list[str] | None = None) -> str:
    """`hudi-inspect scan TARGET --format json` with every stage on the cluster; its stdout."""
    env = {**cluster["env"], "HUDI_INSPECTOR_SPARK_MIN_ITEMS": "0"}  # every stage on the cluster
    env.pop("SPARK_CONF_DIR")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [
        sys.executable, "-m", "hudi_core", "scan", target, "--format", "json", *(extra or []),
        "--engine", "spark", "--spark-master", str(cluster["master"]),
        "--spark-conf", "spark.driver.host=127.0.0.1",
        "--spark-conf", "spark.driver.bindAddress=127.0.0.1",
        "--spark-conf", "spark.executor.memory=512m",
        "--spark-conf", "spark.cores.max=2",
        "--spark-conf", f"spark.executor.extraJavaOptions={FAST_JVM}",
        "--spark-conf", f"spark.driver.extraJavaOptions={FAST_JVM}",
        "--spark-conf", f"spark.pyspark.python={sys.executable}",
    ]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        cluster["wait_for_worker"]()
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    logs = "\n".join(tail(p) for p in cluster["logs"].values())
    assert proc.returncode == 0, f"scan failed: {stderr[-3000:]}\n{logs}"
    return stdout


def test_full_scan_on_standalone_cluster_matches_local(table_path, tmp_path: Path) -> None:
    reason = engine.spark_unavailable_reason()
    if reason:
        pytest.skip(f"standalone Spark cluster test needs Spark: {reason}")
    table = table_path("v9_txns_simple_meta")

    local = full_scan(open_table(str(table), executor=LocalExecutor()))
    expected = {stage: (t.num_rows, table_digest(t)) for stage, t in local.items()}
    assert {s: n for s, (n, _) in expected.items()} == {
        "partitions": 22, "instant_bodies": 45, "file_slices": 14, "log_blocks": 5}

    with standalone_cluster(tmp_path) as cluster:
        stdout = _scan_on_cluster(cluster, str(table))
        report = json.loads(stdout)
        apps = sorted(p.name for p in Path(cluster["work_dir"]).iterdir())  # type: ignore[arg-type]
        state = master_state(int(cluster["ui_port"]))  # type: ignore[arg-type]

    assert report["engine"] == "spark"
    assert report["spark"]["master"] == cluster["master"]
    got = {s["stage"]: (s["rows"], s["sha256"]) for s in report["stages"]}
    assert got == expected
    # Every bulk stage ran as a Spark job, in executors the worker launched for this application.
    assert report["spark_jobs"] and {j["ran_on"] for j in report["spark_jobs"]} == {"spark"}
    assert len(apps) == 1 and apps[0].startswith("app-"), apps
    assert state["aliveworkers"] == 1 and len(state["completedapps"]) == 1


def test_full_scan_on_standalone_cluster_reads_s3(table_path, tmp_path: Path) -> None:
    """The cluster's executors read a table on S3 (the loopback server) with the storage options
    shipped in each task; every stage equals a local scan of the same bucket, digests included."""
    reason = engine.spark_unavailable_reason()
    if reason:
        pytest.skip(f"standalone Spark cluster test needs Spark: {reason}")
    import logging

    from bench.s3server import LoopbackS3, cli_storage_args, storage_options, upload_tree

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = LoopbackS3().start()
    try:
        assert upload_tree(server.endpoint, str(table_path("v9_txns_simple_meta")), "warehouse", "t") > 0
        url = "s3://warehouse/t"
        local = full_scan(open_table(url, storage_options(server.endpoint), executor=LocalExecutor()))
        expected = {stage: (t.num_rows, table_digest(t)) for stage, t in local.items()}
        assert {s: n for s, (n, _) in expected.items()} == {
            "partitions": 22, "instant_bodies": 45, "file_slices": 14, "log_blocks": 5}
        with standalone_cluster(tmp_path) as cluster:
            stdout = _scan_on_cluster(cluster, url, cli_storage_args(server.endpoint))
    finally:
        server.stop()
    report = json.loads(stdout)
    assert report["spark"]["master"] == cluster["master"]
    assert {s["stage"]: (s["rows"], s["sha256"]) for s in report["stages"]} == expected
    assert report["spark_jobs"] and {j["ran_on"] for j in report["spark_jobs"]} == {"spark"}
