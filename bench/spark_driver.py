"""The whole-table commands on a Spark standalone cluster: the driver's memory and time, executors apart.

Starts a loopback standalone cluster (:mod:`bench.spark_cluster`: one master, one worker) and runs each command
as a user would, ``hudi-inspect CMD TABLE --engine spark --spark-master spark://...``, one process per run with an
empty inspector cache (a first run). While it runs, the process tree is sampled every 0.1 s: the driver's Python
process, the driver JVM it starts (py4j), and what the worker runs for the application (executor JVM, Python
workers); for each, the high-water mark of its resident memory (``VmHWM``). Prints JSON (and writes it under
``bench/results/``).

Usage: ``python -m bench.spark_driver [--sizes M,L] [--layouts 2] [--commands fsview,plan_clean,duplicates,doctor]
[--cores 2] [--executor-memory 900m]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.commands import COMMANDS, _env, _scale_table
from bench.proctree import children_by_parent, descendants, peak_rss_bytes, process_kind
from bench.spark_cluster import FAST_JVM, standalone_cluster

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "bench" / "results"
#: The target of the driver's peak (Python and JVM each) on L.
DRIVER_TARGET_MIB = 1024


def _status(pid: int) -> tuple[str, int] | None:
    """(kind, VmHWM in KiB) of a process: ``python`` or ``jvm``."""
    kind = process_kind(pid)
    return None if kind is None else (kind, peak_rss_bytes(pid) // 1024)


class TreeSampler(threading.Thread):
    """Samples the high-water marks of a driver process, its descendants and the worker's new descendants."""

    def __init__(self, driver: int, worker: int, before: set[int]) -> None:
        super().__init__(daemon=True)
        self.driver, self.worker, self.before = driver, worker, before
        self.peaks: dict[int, tuple[str, str, int]] = {}  # pid -> (side, kind, KiB)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            children = children_by_parent()
            sides = [("driver", [self.driver, *descendants(self.driver, children)]),
                     ("executors", [p for p in descendants(self.worker, children) if p not in self.before])]
            for side, pids in sides:
                for pid in pids:
                    status = _status(pid)
                    if status is not None:
                        kind = "python" if pid == self.driver else status[0]
                        self.peaks[pid] = (side, kind, max(status[1], self.peaks.get(pid, ("", "", 0))[2]))
            self.stop.wait(0.1)

    def summary(self) -> dict[str, Any]:
        def mib(side: str, kind: str, total: bool = False) -> float:
            values = [k for s, t, k in self.peaks.values() if s == side and t == kind]
            return round((sum(values) if total else max(values, default=0)) / 1024, 1)

        return {"driver_python_peak_mib": round(self.peaks.get(self.driver, ("", "", 0))[2] / 1024, 1),
                "driver_children_python_peak_mib": round(max(
                    (k for p, (s, t, k) in self.peaks.items() if s == "driver" and t == "python" and p != self.driver),
                    default=0) / 1024, 1),
                "driver_jvm_peak_mib": mib("driver", "jvm"),
                "executor_jvm_peak_mib": mib("executors", "jvm"),
                "executor_python_peak_mib_sum": mib("executors", "python", total=True),
                "executor_python_processes": sum(1 for s, t, _ in self.peaks.values()
                                                 if s == "executors" and t == "python")}


def run_on_cluster(cluster: dict[str, Any], command: str, table: str, cache: Path, executor_memory: str
                   ) -> dict[str, Any]:
    import subprocess

    argv = [a.replace("{T}", table) for a in COMMANDS[command]]
    cmd = [sys.executable, "-m", "hudi_core", *argv, "--engine", "spark", "--spark-master", cluster["master"],
           "--spark-conf", "spark.driver.host=127.0.0.1", "--spark-conf", "spark.driver.bindAddress=127.0.0.1",
           "--spark-conf", f"spark.executor.memory={executor_memory}",
           "--spark-conf", f"spark.executor.extraJavaOptions={FAST_JVM}",
           "--spark-conf", f"spark.pyspark.python={sys.executable}"]
    env = {**_env(), "HUDI_INSPECTOR_CACHE": str(cache), "PYSPARK_PYTHON": sys.executable}
    worker = cluster["pids"][-1]
    before = set(descendants(worker))
    started = time.perf_counter()
    with open(cache.parent / f"{command}.out", "wb") as out, open(cache.parent / f"{command}.err", "wb") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=REPO_ROOT)
        sampler = TreeSampler(proc.pid, worker, before)
        sampler.start()
        code = proc.wait()
        seconds = time.perf_counter() - started
        sampler.stop.set()
        sampler.join()
    result = {"command": command, "seconds": round(seconds, 2), "exit": code, **sampler.summary()}
    if code not in (0, 1, 2):
        result["error"] = (cache.parent / f"{command}.err").read_text(errors="replace")[-500:]
    return result


def measure(sizes: list[str], layouts: list[int], commands: list[str], cores: int = 2,
            executor_memory: str = "900m") -> dict[str, Any]:
    """Each command on each generated table on a fresh loopback cluster, one process a run with an empty inspector
    cache: the document :func:`main` prints (``runs``: one entry a run)."""
    out: dict[str, Any] = {
        "benchmark": "spark_driver", "started_utc": dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ"),
        "cluster": f"loopback standalone: 1 master, 1 worker ({cores} cores, 1 GiB); "
                   f"spark.executor.memory={executor_memory}; empty inspector cache each run",
        "driver_target_mib": DRIVER_TARGET_MIB, "runs": []}
    with tempfile.TemporaryDirectory(prefix="hudi-bench-spark-") as tmp, \
            standalone_cluster(Path(tmp) / "cluster", cores=cores) as cluster:
        cluster["wait_for_worker"]()
        for size in sizes:
            for layout in layouts:
                table = _scale_table(size, layout)
                for command in commands:
                    cache = Path(tmp) / f"{size}{layout}-{command}" / "cache"
                    cache.parent.mkdir(parents=True)
                    result = {"table": f"{size}-layout{layout}-mor",
                              **run_on_cluster(cluster, command, table, cache, executor_memory)}
                    print(f"bench: {result}", file=sys.stderr, flush=True)
                    out["runs"].append(result)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="M,L")
    parser.add_argument("--layouts", default="2")
    parser.add_argument("--commands", default="fsview,plan_clean,duplicates,doctor")
    parser.add_argument("--cores", type=int, default=2, help="the worker's cores (default 2)")
    parser.add_argument("--executor-memory", default="900m")
    args = parser.parse_args(argv)
    out = measure(args.sizes.split(","), [int(x) for x in args.layouts.split(",")], args.commands.split(","),
                  args.cores, args.executor_memory)
    text = json.dumps(out, indent=1)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"spark-driver-{out['started_utc']}.json").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
