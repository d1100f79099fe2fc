"""A Spark standalone cluster on loopback (master + one worker from the pyspark installation), for the
cluster tests and the Spark benchmark.

``$SPARK_HOME/bin/spark-class`` starts ``org.apache.spark.deploy.master.Master`` and
``...worker.Worker`` on 127.0.0.1 (free ports, logs and work dirs in a given folder); both are stopped on
exit, whatever happens.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def tail(path: Path, lines: int = 25) -> str:
    if not path.is_file():
        return f"({path.name}: no log)"
    return f"--- {path.name} ---\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a daemon we started (its own process group), politely first."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except (ProcessLookupError, PermissionError):
        return
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def master_state(ui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as response:
        return json.loads(response.read())


@contextmanager
def standalone_cluster(tmp: Path, cores: int = 2, memory: str = "1g") -> Iterator[dict[str, Any]]:
    """Master + one worker (2 cores, 1 GiB by default) on 127.0.0.1; yields the master URL, dirs, daemon env and a
    ``wait_for_worker()`` callable (the worker is started, not yet necessarily registered)."""
    home = _spark_home()
    spark_class = home / "bin" / "spark-class"
    conf_dir = tmp / "conf"
    work_dir = tmp / "work"
    for d in (conf_dir, work_dir, tmp / "logs"):
        d.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_CONF_DIR": str(conf_dir),  # no user spark-defaults.conf leaks in
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(tmp / "logs"),
        "SPARK_WORKER_DIR": str(work_dir),
        "SPARK_DAEMON_MEMORY": "512m",
        # Short-lived JVMs: quick C1-only JIT and the serial collector start faster on 2 cores.
        "SPARK_DAEMON_JAVA_OPTS": FAST_JVM,
        "PYSPARK_PYTHON": sys.executable,
    }
    port, ui_port, worker_ui = _free_port(), _free_port(), _free_port()
    master_url = f"spark://127.0.0.1:{port}"
    logs = {"master": tmp / "logs" / "master.log", "worker": tmp / "logs" / "worker.log"}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with logs["master"].open("wb") as out:
            procs.append(subprocess.Popen(
                [str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(ui_port)],
                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            ))
        _wait_for(lambda: master_state(ui_port).get("status") == "ALIVE", 60, "master", procs, logs)
        with logs["worker"].open("wb") as out:
            procs.append(subprocess.Popen(
                [str(spark_class), "org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1",
                 "--cores", str(cores), "--memory", memory, "--webui-port", str(worker_ui),
                 "--work-dir", str(work_dir)],
                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            ))

        def wait_for_worker() -> None:
            _wait_for(lambda: master_state(ui_port).get("aliveworkers", 0) >= 1, 60, "worker", procs, logs)

        # The worker registers while the caller starts its driver (both take a few seconds).
        yield {"master": master_url, "ui_port": ui_port, "work_dir": work_dir, "env": env, "logs": logs,
               "wait_for_worker": wait_for_worker, "pids": [p.pid for p in procs]}
    finally:
        for proc in reversed(procs):
            _stop(proc)


def _wait_for(check, timeout: float, what: str, procs: list[subprocess.Popen[bytes]], logs: dict[str, Path]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"Spark {what} did not come up in {timeout:.0f}s\n" + "\n".join(tail(p) for p in logs.values()))
