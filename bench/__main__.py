"""`python -m bench` (`make bench`): the benchmark suite, one JSON document per run.

For every table (the hudi-rs fixture tables, then the scale generator's tables in both timeline
layouts) and every engine (``local`` threads, ``spark`` in local mode) a fresh child process
measures wall time of:

* ``open``      — open the table and list the unified (active + archived) timeline;
* ``timeline``  — decode every active instant body through the executor;
* ``fsview``    — list partitions through the executor and build the file-system view (latest slices);
* ``log_scan``  — header-only scan of every log file through the executor (files per second);
* ``plan_clean`` / ``plan_archive`` — the cleaner and archiver dry-runs;
* ``doctor``    — every health check of ``hudi-inspect doctor`` (on the dry-runs' warm table);

Engines: ``local``; ``spark`` as the CLI runs it (stages under 1,000 items stay on the driver);
``spark-all`` (every stage a Spark job: the cost of Spark itself).

plus the child's peak RSS (Python) and, for Spark, the JVM's peak RSS, the summed peak RSS of the
Spark Python workers (they decode in their own processes), the session start time and
the first (warm-up) job's time, reported separately: stage times are measured on a warm session. hudi-rs (the ``hudi``
package) is measured on the same tables in the same run (``get_file_slices`` and the timeline's
completed commits), and ``ratios`` divide our time by hudi-rs's (< 1.0 means faster).

Sub-benchmarks ``bench.logfile_bench`` and ``bench.archive_bench`` run too when present.
Results go to ``bench/results/<UTC timestamp>.json`` and to stdout.

Usage: ``python -m bench [--sizes fixtures,S,M,L] [--layouts 1,2] [--engines local,spark]
[--no-sub] [--quick]`` (engines: local,spark,spark-all). Generated tables are cached in ``$HUDI_BENCH_CACHE`` (default
``~/.cache/hudi-inspector/bench``) and reused by later runs.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from bench.commands import machine_facts
from bench.proctree import descendants, peak_rss_bytes

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
#: Targets on the L table (2 cores, 24 GiB).
TARGETS = {"open_s": 3.0, "fsview_ratio_vs_hudi_rs": 1.0, "log_files_per_s": 20_000, "dry_run_s": 2.0,
           "peak_bytes": int(1.5 * 2**30)}
CHILD_TIMEOUT_S = 1800


def _peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss_bytes() -> int:
    """Current resident set size of this process (Linux), 0 elsewhere."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _spark_worker_peak_bytes() -> int | None:
    """Sum of the peak RSS of the Spark Python workers still alive (children of the driver JVM)."""
    try:
        from pyspark import SparkContext

        sc = SparkContext._active_spark_context
        proc = getattr(getattr(sc, "_gateway", None), "proc", None) if sc else None
    except ImportError:
        return None
    if proc is None:
        return None
    return sum(peak_rss_bytes(pid) for pid in descendants(proc.pid))


def _jvm_peak_bytes() -> int | None:
    """Peak RSS (VmHWM) of the Spark driver JVM this process started, if any."""
    try:
        from pyspark import SparkContext

        sc = SparkContext._active_spark_context
        proc = getattr(getattr(sc, "_gateway", None), "proc", None) if sc else None
    except ImportError:
        return None
    if proc is None:
        return None
    return peak_rss_bytes(proc.pid) or None


# -- child: measure one table on one engine ---------------------------------------------------------


def measure(table_path: str, engine_name: str, master: str | None) -> dict[str, Any]:
    """Every stage on one engine, in this (fresh) process."""
    import importlib

    from hudi_core import open_table
    from hudi_core.engines.engine import describe_executor, get_executor

    # Imports are not what is measured: load every module a stage uses first (pyarrow imports
    # pandas lazily the first time it builds arrays from Python objects: ~0.3 s once per process).
    for module in ("hudi_core.formats.timeline.unified", "hudi_core.table.fsview",
                   "hudi_core.formats.logfile.inventory",
                   "hudi_core.services.clean", "hudi_core.services.archive", "pyarrow.parquet",
                   "pyarrow.pandas_compat", "pandas"):
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    out: dict[str, Any] = {"engine": engine_name, "seconds": {}, "counts": {}, "errors": {}}
    # "spark-all" is the Spark engine with every stage sent to Spark (no small-stage shortcut).
    executor = get_executor("spark" if engine_name.startswith("spark") else engine_name, master, notice=None)
    if engine_name == "spark-all":
        executor.min_items = 0  # type: ignore[attr-defined]
    if engine_name.startswith("spark"):
        started = time.perf_counter()
        _ = executor.session  # type: ignore[attr-defined]  # start the JVM outside the stage timings
        out["spark_session_start_s"] = round(time.perf_counter() - started, 3)
        # The first job forks the Python workers and imports the engine there: also outside.
        out["spark_warm_up_s"] = executor.warm_up()  # type: ignore[attr-defined]
    table_box: dict[str, Any] = {}

    def stage(name: str, fn: Any) -> None:
        started = time.perf_counter()
        try:
            count = fn()
        except Exception as exc:  # a stage that fails is reported, the others still run
            out["errors"][name] = f"{type(exc).__name__}: {str(exc)[:300]}"
            return
        out["seconds"][name] = round(time.perf_counter() - started, 4)
        out.setdefault("rss_after", {})[name] = _rss_bytes()
        if count is not None:
            out["counts"][name] = count

    def do_open() -> int:
        table = open_table(table_path, executor=executor)
        table_box["t"] = table
        if hasattr(table, "unified_timeline"):
            return int(table.unified_timeline().listing().num_rows)
        return len(table.timeline)

    def do_timeline() -> int:
        table = table_box["t"]
        table.timeline.decode_all(executor)
        return sum(len(i.files) for i in table.timeline)

    def do_fsview() -> int:
        return len(table_box["t"].fs_view().latest_slices())

    def do_log_scan() -> int:
        from hudi_core.services.log_inventory import log_block_inventory

        inventory = log_block_inventory(table_box["t"])
        out["counts"]["log_files"] = len(set(inventory.column("path").to_pylist())) if inventory.num_rows else 0
        return int(inventory.num_rows)

    def do_plan_clean() -> int:
        from hudi_core.services.clean import plan_clean

        plan = plan_clean(table_box["t"])
        return len(plan.files_if_forced)

    def do_plan_archive() -> int:
        from hudi_core.services.archive import plan_archive

        plan = plan_archive(table_box["t"])
        return len(plan.to_archive)

    def do_doctor() -> int:
        from hudi_core.services.doctor import run_doctor

        return len(run_doctor(table_box["t"]).findings)

    stage("open", do_open)
    if "t" in table_box:
        for name, fn in (("timeline", do_timeline), ("fsview", do_fsview), ("log_scan", do_log_scan),
                         ("plan_clean", do_plan_clean), ("plan_archive", do_plan_archive), ("doctor", do_doctor)):
            stage(name, fn)
    log_s, log_files = out["seconds"].get("log_scan"), out["counts"].get("log_files")
    if log_s and log_files:
        out["log_files_per_s"] = round(log_files / log_s)
    out["peak_bytes"] = _peak_bytes()
    jvm = _jvm_peak_bytes()
    if jvm is not None:
        out["jvm_peak_bytes"] = jvm
        out["spark_workers_peak_bytes"] = _spark_worker_peak_bytes()
    try:
        info = describe_executor(executor)
    except Exception as exc:  # the JVM may be gone (killed for memory): keep the stage results
        info = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    info.pop("engine", None)
    if info:
        out["spark"] = info
    history = getattr(executor, "history", None)
    if history:
        out["spark_jobs"] = {"spark": sum(1 for h in history if h["ran_on"] == "spark"),
                             "driver": sum(1 for h in history if h["ran_on"] == "driver")}
    return out


def measure_hudi_rs(table_path: str) -> dict[str, Any]:
    """hudi-rs on the same table: build + `get_file_slices`, and the timeline's completed commits."""
    try:
        from hudi import HudiTableBuilder
    except ImportError as exc:
        return {"engine": "hudi-rs", "errors": {"import": str(exc)}}
    out: dict[str, Any] = {"engine": "hudi-rs", "seconds": {}, "counts": {}, "errors": {}}
    try:
        started = time.perf_counter()
        table = HudiTableBuilder.from_base_uri(table_path).build()
        out["seconds"]["open"] = round(time.perf_counter() - started, 4)
        started = time.perf_counter()
        slices = table.get_file_slices()
        out["seconds"]["get_file_slices"] = round(time.perf_counter() - started, 4)
        out["counts"]["get_file_slices"] = len(slices)
        started = time.perf_counter()
        commits = table.get_timeline().get_completed_commits()
        out["seconds"]["timeline"] = round(time.perf_counter() - started, 4)
        out["counts"]["timeline"] = len(commits)
    except Exception as exc:  # hudi-rs may refuse a table our reader accepts
        out["errors"]["hudi-rs"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    out["peak_bytes"] = _peak_bytes()
    return out


# -- parent: tables, children, ratios ------------------------------------------------------------------


def _child(args: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        proc = subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True,
                              env=env, cwd=REPO_ROOT, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"errors": {"child": f"timed out after {CHILD_TIMEOUT_S}s"}}
    if proc.returncode != 0:
        return {"errors": {"child": proc.stderr.strip().splitlines()[-1][:300] if proc.stderr.strip() else "failed"}}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fixture_tables(tmp: Path) -> dict[str, str]:
    root = Path(os.environ.get("HUDI_FIXTURES") or REPO_ROOT.parent / "shared" / "fixtures" / "hudi-rs")
    tables: dict[str, str] = {}
    for archive in sorted(root.rglob("*.zip")) if root.is_dir() else []:
        target = tmp / archive.stem
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(target, [m for m in zf.namelist() if not m.startswith("__MACOSX/")])
        inner = [p for p in target.iterdir() if (p / ".hoodie").is_dir()]
        tables[f"fixture:{archive.stem}"] = str(inner[0] if inner else target)
    return tables


def _cache_dir() -> Path:
    return Path(os.environ.get("HUDI_BENCH_CACHE") or Path.home() / ".cache" / "hudi-inspector" / "bench")


def _scale_table(size: str, layout: int, quick: bool) -> tuple[str, dict[str, Any]]:
    """A generated MOR table of `size` in `layout` (cached; generated on first use)."""
    from hudi_core.scenarios.scale import MERGE_ON_READ, generate_table

    name = f"{size}-layout{layout}-mor" + ("-quick" if quick else "")
    target = _cache_dir() / name
    meta_file = _cache_dir() / f"{name}.json"
    if (target / ".hoodie" / "hoodie.properties").is_file() and meta_file.is_file():
        return str(target), json.loads(meta_file.read_text())
    if target.exists():
        raise SystemExit(f"bench: {target} exists but is incomplete; remove it and run again")
    target.parent.mkdir(parents=True, exist_ok=True)
    overrides: dict[str, int] = {}
    if quick:  # S shape, a tenth of the files: a smoke run, not a measurement
        overrides = {"files": 1_000, "file_groups": 100, "log_files": 100, "archived_instants": 100}
    started = time.perf_counter()
    report = generate_table(target, size, layout=layout, table_type=MERGE_ON_READ, **overrides)
    meta = {"generate_seconds": round(time.perf_counter() - started, 1), "params": report.params,
            "base_files": report.base_files, "log_files": report.log_files,
            "active_instants": report.active_instants, "archived_instants": report.archived_instants,
            "disk_mib": round(report.disk_bytes / 2**20, 1)}
    meta_file.write_text(json.dumps(meta))
    return str(target), meta


def _ratio(ours: float | None, theirs: float | None) -> float | None:
    if ours is None or not theirs:
        return None
    return round(ours / theirs, 3)


def _table_entry(name: str, path: str, engines: list[str], master: str, meta: dict[str, Any] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"table": name, "path": path}
    if meta:
        entry["generated"] = meta
    entry["hudi_rs"] = _child(["--measure-hudi-rs", path])
    rs = entry["hudi_rs"].get("seconds", {})
    for engine_name in engines:
        result = _child(["--measure", path, "--engine", engine_name, "--spark-master", master])
        secs = result.get("seconds", {})
        result["ratios"] = {
            "fsview_vs_hudi_rs_get_file_slices": _ratio(secs.get("fsview"), rs.get("get_file_slices")),
            "open_vs_hudi_rs_open_and_timeline": _ratio(secs.get("open"),
                                                         (rs.get("open") or 0) + (rs.get("timeline") or 0) or None),
        }
        entry[engine_name] = result
        print(f"bench: {name} {engine_name}: {json.dumps(secs)}", file=sys.stderr)
    return entry


def _targets(entry: dict[str, Any], engine_name: str) -> dict[str, Any]:
    r = entry.get(engine_name, {})
    secs = r.get("seconds", {})
    peak = max(r.get("peak_bytes") or 0, r.get("jvm_peak_bytes") or 0)
    return {
        "open_under_3s": secs.get("open") is not None and secs["open"] < TARGETS["open_s"],
        "fsview_ratio_le_1": (r.get("ratios", {}).get("fsview_vs_hudi_rs_get_file_slices") or 99) <= 1.0,
        "log_scan_20k_files_per_s": (r.get("log_files_per_s") or 0) >= TARGETS["log_files_per_s"],
        "dry_runs_under_2s": all(secs.get(s) is not None and secs[s] < TARGETS["dry_run_s"]
                                 for s in ("plan_clean", "plan_archive")),
        "peak_under_1_5_gib": 0 < peak < TARGETS["peak_bytes"],
    }


def _sub_benchmarks(quick: bool) -> dict[str, Any]:
    subs: dict[str, Any] = {}
    for module, args in (("logfile_bench", ["--quick"] if quick else []),
                         ("archive_bench", ["--archived", "20000", "--active", "1000"] if quick else [])):
        if not (BENCH_DIR / f"{module}.py").is_file():
            continue
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", f"bench.{module}", *args], capture_output=True, text=True,
                              cwd=REPO_ROOT, timeout=CHILD_TIMEOUT_S,
                              env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        try:
            subs[module] = json.loads(proc.stdout)
        except json.JSONDecodeError:
            subs[module] = {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]}
        subs[module]["wall_s"] = round(time.perf_counter() - started, 1)
        print(f"bench: {module} done in {subs[module]['wall_s']}s", file=sys.stderr)
    return subs


def run(sizes: list[str], layouts: list[int], engines: list[str], master: str, subs: bool,
        quick: bool) -> dict[str, Any]:
    """The whole suite; returns the JSON document."""
    from hudi_core.engines.engine import spark_unavailable_reason

    if any(e.startswith("spark") for e in engines) and spark_unavailable_reason():
        print(f"bench: skipping the spark engines: {spark_unavailable_reason()}", file=sys.stderr)
        engines = [e for e in engines if not e.startswith("spark")]
    doc: dict[str, Any] = {
        "benchmark": "hudi-inspector",
        "started_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_facts(),
        "engines": engines, "spark_master": master, "quick": quick, "targets": TARGETS, "tables": [],
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hudi-bench-") as tmp:
        if "fixtures" in sizes:
            for name, path in _fixture_tables(Path(tmp)).items():
                doc["tables"].append(_table_entry(name, path, engines, master, None))
        for size in [s for s in sizes if s in ("S", "M", "L")]:
            for layout in layouts:
                path, meta = _scale_table(size, layout, quick)
                entry = _table_entry(f"scale:{size}-layout{layout}-mor", path, engines, master, meta)
                entry["targets_met"] = {e: _targets(entry, e) for e in engines}
                doc["tables"].append(entry)
    if subs:
        doc["sub_benchmarks"] = _sub_benchmarks(quick)
    doc["wall_s"] = round(time.perf_counter() - started, 1)
    return doc


def summary_table(docs: list[dict[str, Any]]) -> str:
    """A Markdown table (one row per table and engine) of one or more result documents."""
    head = ("| table | engine | open s | timeline s | fsview s | fsview / hudi-rs | log files/s | "
            "plan-clean s | plan-archive s | peak MiB (driver py / jvm / spark workers) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for doc in docs:
        for entry in doc.get("tables", []):
            rs_slices = entry.get("hudi_rs", {}).get("seconds", {}).get("get_file_slices")
            for engine_name in doc.get("engines", []):
                r = entry.get(engine_name)
                if not r:
                    continue
                secs = r.get("seconds", {})

                def cell(stage: str, secs: dict[str, Any] = secs, r: dict[str, Any] = r) -> str:
                    return f"{secs[stage]:.2f}" if stage in secs else ("error" if stage in r.get("errors", {}) else "–")

                ratio = r.get("ratios", {}).get("fsview_vs_hudi_rs_get_file_slices")
                jvm, workers = r.get("jvm_peak_bytes"), r.get("spark_workers_peak_bytes")
                lines.append(
                    f"| {entry['table']} | {engine_name} | {cell('open')} | {cell('timeline')} | {cell('fsview')} | "
                    f"{ratio if ratio is not None else ('n/a' if rs_slices is None else '–')} | "
                    f"{r.get('log_files_per_s', '–')} | {cell('plan_clean')} | {cell('plan_archive')} | "
                    f"{(r.get('peak_bytes') or 0) >> 20} / {jvm >> 20 if jvm else '–'} / "
                    f"{workers >> 20 if workers else '–'} |"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="fixtures,S,M", help="comma list of fixtures,S,M,L (default fixtures,S,M)")
    parser.add_argument("--layouts", default="1,2", help="timeline layouts of generated tables (default 1,2)")
    parser.add_argument("--engines", default="local,spark,spark-all",
                        help="local, spark (small stages on the driver), spark-all (every stage on Spark)")
    parser.add_argument("--spark-master", default="local[*]", help="Spark master for the spark engine")
    parser.add_argument("--no-sub", action="store_true", help="skip bench.logfile_bench / bench.archive_bench")
    parser.add_argument("--quick", action="store_true", help="tiny generated tables: a smoke run")
    parser.add_argument("--summary", nargs="+", metavar="RESULTS_JSON",
                        help="print a Markdown summary table of earlier results files and exit")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--measure-hudi-rs", help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="local", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.summary:
        print(summary_table([json.loads(Path(f).read_text()) for f in args.summary]))
        return 0
    if args.measure:
        print(json.dumps(measure(args.measure, args.engine, args.spark_master)))
        return 0
    if args.measure_hudi_rs:
        print(json.dumps(measure_hudi_rs(args.measure_hudi_rs)))
        return 0
    doc = run([s.strip() for s in args.sizes.split(",") if s.strip()],
              [int(v) for v in args.layouts.split(",") if v.strip()],
              [e.strip() for e in args.engines.split(",") if e.strip()],
              args.spark_master, not args.no_sub, args.quick)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    doc["results_file"] = str(out.relative_to(REPO_ROOT))
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
