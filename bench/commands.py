"""What a user waits for: every CLI command as a whole process (start-up, work,
output written to a file), next to the references, alternating in the same run.

For each table (generated S / M / L tables in both timeline layouts, cached like the rest of the
benchmark) and each round, every command runs as ``python -m hudi_core COMMAND TABLE --format json``
with the default engine (what a user gets), followed by its reference:

* ``hudi_rs_fsview``: a Python process that builds the table with hudi-rs and calls
  ``get_file_slices`` (the reference of ``fsview``);
* ``hudi_rs_timeline``: the same process calling the completed commits, delta commits and replace
  commits of hudi-rs's timeline (the reference of ``timeline``);
* ``floor``: a Python process that lists every file of the table with its size and reads every byte
  under ``.hoodie`` once (the metadata table excepted): any command that answers from the whole
  table does at least that much work (on S3 through obstore, 64 reads in flight).

Medians of the rounds, peak RSS of each process (``wait4``), and ratios ``ours / hudi-rs`` and
``ours / floor``. With ``--s3`` the same table is also served by the loopback S3 server
(:mod:`bench.s3server`, ``--delay-ms`` added to every request) and each command reports the GET /
LIST / HEAD requests it made; hudi-rs and the floor run against the same bucket.

With ``--dashboard M`` dashboard pages (``--dashboard-pages overview,cleaner``; Overview by default) are
timed in Chromium (streamlit server started fresh per page: first render with empty caches, then reloads
with the table cached).

With ``--ui-start`` only ``hudi-inspect ui TABLE`` is timed, on the demo table (the HUDI-7779
case b scenario, built with ``scenario build``): seconds from starting the command until the Overview has
rendered in Chromium (already open), a fresh command and server per round (target 3 s).

Run: ``python -m bench.commands [--sizes S,M,L] [--layouts 1,2] [--rounds 3] [--l-rounds 1] [--s3 M] [--delay-ms 20]
[--dashboard M [--dashboard-pages overview,cleaner]]`` or ``python -m bench.commands --ui-start [--rounds 3]``;
prints one JSON document (also written under ``bench/results/``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"

#: name -> arguments after ``python -m hudi_core`` (``{T}`` is the table).
COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "info": ["info", "{T}", "--format", "json"],
    "timeline": ["timeline", "{T}", "--format", "json"],
    "timeline_all": ["timeline", "{T}", "--all", "--format", "json"],
    "fsview": ["fsview", "{T}", "--format", "json"],
    # On a v8+ table with a metadata table `fsview` lists through it (checked against storage on
    # local disk, not on S3); these two isolate the listing sources.
    "fsview_unchecked": ["fsview", "{T}", "--no-storage-check", "--format", "json"],
    "fsview_storage": ["fsview", "{T}", "--listing", "storage", "--format", "json"],
    # Without the table's verdict behind the exit code (what the command reads alone: hudi-rs reads no more).
    "timeline_no_verdict": ["timeline", "{T}", "--no-verdict", "--format", "json"],
    "fsview_no_verdict": ["fsview", "{T}", "--no-verdict", "--no-storage-check", "--format", "json"],
    "validate_metadata": ["validate-metadata", "{T}", "--format", "json"],
    "markers": ["markers", "{T}", "--format", "json"],
    "plan_clean": ["plan-clean", "{T}", "--format", "json"],
    "plan_archive": ["plan-archive", "{T}", "--format", "json"],
    "compare_releases": ["compare-releases", "{T}", "--format", "json"],
    "log_blocks": ["log-blocks", "{T}", "--format", "json"],
    "duplicates": ["duplicates", "{T}", "--format", "json"],
    # `sql` over the instants view (every row, as `timeline --all` answers) and over write_stats (every
    # write stat of the active and archived commits; an aggregate, so the answer's size does not dominate).
    "sql_instants": ["sql", "{T}", "SELECT * FROM instants", "--format", "json"],
    "sql_write_stats": ["sql", "{T}", "SELECT file_id, count(*) AS writes, sum(total_write_bytes) AS bytes "
                        "FROM write_stats GROUP BY file_id ORDER BY writes DESC, file_id LIMIT 20", "--format", "json"],
    # Every commit's recorded schema (active and archived bodies, operationType and extraMetadata.schema).
    "schema_history": ["schema-history", "{T}", "--format", "json"],
    # The block counts of every log file, and a count over every write stat (active and archived).
    "log_blocks_counts": ["log-blocks", "{T}", "--counts", "--format", "json"],
    "sql_count_write_stats": ["sql", "{T}", "SELECT count(*) FROM write_stats", "--format", "json"],
    # Every health check (at a fixed time, so rounds answer alike).
    "doctor": ["doctor", "{T}", "--now", "20300101000000000", "--format", "json"],
}
#: The reference each command is compared with (besides the floor, for whole-table commands).
HUDI_RS_REFERENCE = {"fsview": "hudi_rs_fsview", "fsview_unchecked": "hudi_rs_fsview", "fsview_storage":
                     "hudi_rs_fsview", "timeline": "hudi_rs_timeline", "timeline_no_verdict": "hudi_rs_timeline",
                     "fsview_no_verdict": "hudi_rs_fsview"}
WHOLE_TABLE = ("timeline_all", "fsview", "fsview_unchecked", "fsview_storage", "validate_metadata", "markers",
               "plan_clean", "plan_archive", "compare_releases", "log_blocks", "duplicates", "sql_write_stats",
               "log_blocks_counts", "sql_count_write_stats", "doctor")
#: `sql` over the instants view against the command answering the same rows (target: at most 1.5x).
SQL_INSTANTS_REFERENCE = ("sql_instants", "timeline_all", 1.5)
#: `schema-history` reads every commit body's schema; against listing the same instants (at most 2x).
SCHEMA_HISTORY_REFERENCE = ("schema_history", "timeline_all", 2.0)
#: Commands measured against `timeline --all`: (command, reference, most).
TIMELINE_ALL_REFERENCES = (SQL_INSTANTS_REFERENCE, SCHEMA_HISTORY_REFERENCE)
#: Targets: what a user waits for, command by command (`bench.targets` judges the big-table ones from these).
TARGETS: dict[str, Any] = {
    # Command -> at most this many times hudi-rs's time for the same answer (M layout 2, default settings).
    "hudi_rs_ratio_max": {"fsview": 0.5, "fsview_unchecked": 0.5, "timeline": 1.0},
    # Table size -> a whole-table command's run within this many times the floor.
    "floor_ratio_max": {"S": 2.0, "M": 1.5, "L": 2.0},
    # A first run's peak resident memory on L (MiB).
    "l_peak_mib": 1024,
    "help_and_info_s": 0.35,
    "s3_seconds": {"info": 1.5, "timeline": 3.0, "fsview": 4.0, "plan_clean": 6.0},
}


def machine_facts() -> dict[str, Any]:
    """The machine a result was measured on (every benchmark document records it)."""
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
            "load_avg_at_start": os.getloadavg()}

HUDI_RS_SCRIPT = r"""
import json, sys
from hudi import HudiTableBuilder
what, uri, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
builder = HudiTableBuilder.from_base_uri(uri)
for key, value in options.items():
    builder = builder.with_storage_option(key, value)
table = builder.build()
if what == "fsview":
    print(len(table.get_file_slices()))
else:
    tl = table.get_timeline()
    print(len(tl.get_completed_commits()) + len(tl.get_completed_deltacommits())
          + len(tl.get_completed_replacecommits()))
"""

FLOOR_SCRIPT = r"""
import json, os, sys
uri, options = sys.argv[1], json.loads(sys.argv[2])
files = size = meta = 0
if "://" not in uri:
    hoodie = os.path.join(uri, ".hoodie")
    skip = os.path.join(hoodie, "metadata")
    for folder, dirs, names in os.walk(uri):
        inside = folder == hoodie or folder.startswith(hoodie + os.sep)
        if folder == skip or folder.startswith(skip + os.sep):
            dirs[:] = []
            continue
        for name in names:
            path = os.path.join(folder, name)
            files += 1
            size += os.stat(path).st_size
            if inside:
                with open(path, "rb") as fh:
                    meta += len(fh.read())
else:  # S3 through obstore (Rust): the fastest client at hand lists and reads
    import asyncio
    import obstore
    from obstore.store import S3Store
    bucket, _, prefix = uri.split("://", 1)[1].partition("/")
    store = S3Store(bucket, endpoint=options["endpoint_url"], access_key_id=options["key"],
                    secret_access_key=options["secret"], region=options["client_kwargs"]["region_name"],
                    client_options={"allow_http": True})
    listing = [o for batch in obstore.list(store, prefix=prefix.rstrip("/") + "/") for o in batch]
    hoodie = prefix.rstrip("/") + "/.hoodie/"
    wanted = [o["path"] for o in listing
              if o["path"].startswith(hoodie) and not o["path"].startswith(hoodie + "metadata/")]
    files = len(listing)
    size = sum(o["size"] for o in listing)
    async def read_all():
        gate = asyncio.Semaphore(64)
        async def one(path):
            async with gate:
                return len(await (await obstore.get_async(store, path)).bytes_async())
        return await asyncio.gather(*(one(p) for p in wanted))
    meta = sum(asyncio.run(read_all()))
print(json.dumps({"files": files, "bytes": size, "metadata_bytes": meta}), flush=True)
os._exit(0)  # obstore's runtime threads can abort a finalising interpreter (exit 134 seen on S3)
"""


#: The checkout whose engine the commands run (``--code-root``: another checkout, for before/after comparisons).
CODE_ROOT = REPO_ROOT


def _env(code_root: Path | None = None) -> dict[str, str]:
    root = str(code_root or CODE_ROOT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    # Measure what a user's shell gives: compiled bytecode cached after the first run. A session or CI
    # that sets PYTHONDONTWRITEBYTECODE would recompile every module of the engine in every process
    # (60-80 ms of each command), a cost no installed tool pays.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_process(argv: list[str], out_dir: Path, extra_env: dict[str, str] | None = None,
                code_root: Path | None = None) -> dict[str, Any]:
    """One process, timed from spawn to exit; stdout goes to a file as a user's redirect would (`code_root`:
    the checkout whose engine runs, :data:`CODE_ROOT` by default)."""
    out_path = out_dir / "stdout"
    err_path = out_dir / "stderr"
    rss_path = out_dir / "rss"
    # A child's peak RSS from wait4 starts at its parent's (Linux carries the high-water mark across
    # fork and exec), so the command runs under GNU time, a process of a few MiB, which reports the
    # command's own peak (kB) into `rss_path`.
    timer = ["/usr/bin/time", "-f", "%M", "-o", str(rss_path)] if os.path.exists("/usr/bin/time") else []
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.perf_counter()
        proc = subprocess.Popen([*timer, *argv], stdout=out, stderr=err,
                                env={**_env(code_root), **(extra_env or {})}, cwd=code_root or CODE_ROOT)
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        except KeyboardInterrupt:
            proc.kill()
            raise
        seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak_kib = usage.ru_maxrss
    if timer:
        lines = rss_path.read_text().split()
        peak_kib = int(lines[-1]) if lines and lines[-1].isdigit() else peak_kib
    # CPU seconds of the command and every process it waited for (its worker processes): steadier than the wall
    # time on a shared VM, and what two cores can overlap at best.
    result: dict[str, Any] = {"seconds": round(seconds, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                              "peak_rss_mib": round(peak_kib / 1024, 1),
                              "exit": proc.returncode, "stdout_bytes": out_path.stat().st_size}
    # Every command's contract: 0 nothing wrong, 1 incomplete (or no answer), 2 a problem of the table found: all
    # three are answers to time; anything else (a signal, a crash) is an error.
    if proc.returncode not in (0, 1, 2):
        lines = err_path.read_text(errors="replace").strip().splitlines()
        result["error"] = (lines[-1] if lines else f"exit {proc.returncode}")[:300]
    return result


def _ours(name: str, table: str, storage_args: list[str]) -> list[str]:
    argv = [a.replace("{T}", table) for a in COMMANDS[name]]
    if name != "help":
        argv += storage_args
    return [sys.executable, "-m", "hudi_core", *argv]


def _references(table: str, options: dict[str, Any], hudi_rs_options: dict[str, str]) -> dict[str, list[str]]:
    refs = {"floor": [sys.executable, "-c", FLOOR_SCRIPT, table, json.dumps(options)]}
    try:
        import hudi  # noqa: F401
    except ImportError:
        return refs
    for what in ("fsview", "timeline"):
        refs[f"hudi_rs_{what}"] = [sys.executable, "-c", HUDI_RS_SCRIPT, what, table, json.dumps(hudi_rs_options)]
    return refs


def _median(samples: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [s for s in samples if "error" not in s]
    if not ok:
        return {"error": samples[0].get("error") if samples else "no run"}
    return {"seconds": round(statistics.median(s["seconds"] for s in ok), 3),
            "runs": [s["seconds"] for s in ok],
            "cpu_s": [s["cpu_s"] for s in ok if "cpu_s" in s],
            "peak_rss_mib": max(s["peak_rss_mib"] for s in ok),
            "exit": ok[-1]["exit"], "stdout_bytes": ok[-1]["stdout_bytes"]}


def _ratio(ours: dict[str, Any], ref: dict[str, Any] | None) -> float | None:
    if not ref or "seconds" not in ours or not ref.get("seconds"):
        return None
    return round(ours["seconds"] / ref["seconds"], 2)


def bench_table(label: str, table: str, rounds: int, commands: list[str], storage_args: list[str] | None = None,
                options: dict[str, Any] | None = None, hudi_rs_options: dict[str, str] | None = None,
                server: Any = None) -> dict[str, Any]:
    """Every command and reference on one table, alternating, `rounds` times; medians and ratios."""
    refs = _references(table, options or {}, hudi_rs_options or {})
    floor_after = next((c for c in commands if c in WHOLE_TABLE), None)
    samples: dict[str, list[dict[str, Any]]] = {n: [] for n in [*commands, *refs]}
    requests: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="hudi-bench-cmd-") as tmp:
        for round_no in range(rounds):
            for name in commands:
                for which, argv in ((name, _ours(name, table, storage_args or [])),
                                    *((r, refs[r]) for r in _refs_of(name, refs, floor_after, commands))):
                    if server is not None:
                        _server_call(server, "/__reset")
                    samples[which].append(run_process(argv, Path(tmp)))
                    if server is not None and round_no == 0:
                        stats = json.loads(_server_call(server, "/__stats"))
                        requests[which] = {k: stats[k] for k in ("GET", "LIST", "HEAD")}
                    print(f"bench: {label} {which} round {round_no + 1}: {samples[which][-1]}", file=sys.stderr)
    results = {name: _median(s) for name, s in samples.items() if s}
    floor = results.get("floor")
    for name in commands:
        r = results[name]
        if name in HUDI_RS_REFERENCE:
            r["ratio_vs_hudi_rs"] = _ratio(r, results.get(HUDI_RS_REFERENCE[name]))
        if name in WHOLE_TABLE:
            r["ratio_vs_floor"] = _ratio(r, floor)
        if name in requests:
            r["requests"] = requests[name]
    for name in refs:
        if name in requests and name in results:
            results[name]["requests"] = requests[name]
    for name, reference, _ in TIMELINE_ALL_REFERENCES:
        if name in results and reference in results:
            results[name]["ratio_vs_timeline_all"] = _ratio(results[name], results[reference])
    if "validate_metadata" in results and "fsview_storage" in results:
        # On S3: validating the metadata table costs at most 1.5x listing storage for a view.
        results["validate_metadata"]["ratio_vs_storage_fsview"] = _ratio(results["validate_metadata"],
                                                                         results["fsview_storage"])
    return {"table": label, "path": table, "commands": results}


def bench_cache_modes(label: str, table: str, rounds: int, commands: list[str],
                      roots: dict[str, Path] | None = None) -> dict[str, Any]:
    """Each command with an empty inspector cache (``first``: a new ``HUDI_INSPECTOR_CACHE``, so no
    archive index and no active-timeline index) and right after, in the same cache (``warm``), `rounds` times;
    ranges (min, max) and medians. `roots` (name -> checkout): the engines compared, alternating command by
    command in each round (before / after a change on a shared machine); the floor runs once per round."""
    roots = roots or {"this": CODE_ROOT}
    samples = {r: {n: {"first": [], "warm": []} for n in commands} for r in roots}
    floor: list[dict[str, Any]] = []
    floor_argv = _references(table, {}, {})["floor"]
    with tempfile.TemporaryDirectory(prefix="hudi-bench-cache-") as tmp:
        for round_no in range(rounds):
            floor.append(run_process(floor_argv, Path(tmp)))
            for name in commands:
                for root_name, root in roots.items():
                    cache = Path(tmp) / f"cache-{round_no}-{name}-{root_name}"
                    env = {"HUDI_INSPECTOR_CACHE": str(cache), "HUDI_INSPECTOR_ARCHIVE_INDEX": "1",
                           "HUDI_INSPECTOR_ACTIVE_INDEX": "1"}
                    for mode in ("first", "warm"):
                        sample = run_process(_ours(name, table, []), Path(tmp), env, root)
                        samples[root_name][name][mode].append(sample)
                        print(f"bench: {label} {root_name} {name} {mode} round {round_no + 1}: {sample}",
                              file=sys.stderr)
    out: dict[str, Any] = {}
    for root_name, by_command in samples.items():
        out[root_name] = {}
        for name, modes in by_command.items():
            out[root_name][name] = {}
            for mode, runs in modes.items():
                summary = _median(runs)
                if "runs" in summary:
                    summary["range_s"] = [min(summary["runs"]), max(summary["runs"])]
                out[root_name][name][mode] = summary
    return {"table": label, "path": table, "roots": {k: str(v) for k, v in roots.items()}, "floor": _median(floor),
            "commands": out}


def _refs_of(name: str, refs: dict[str, list[str]], floor_after: str | None,
             commands: list[str] | None = None) -> list[str]:
    """The references run right after `name`: hudi-rs after the first command it is compared with, the
    floor after the first whole-table command (each reference once per round)."""
    ref = HUDI_RS_REFERENCE.get(name)
    first = commands is None or next((c for c in commands if HUDI_RS_REFERENCE.get(c) == ref), name) == name
    out = [ref] if ref in refs and first else []
    return out + (["floor"] if name == floor_after else [])


def _server_call(server: Any, path: str) -> bytes:
    method = "POST" if path != "/__stats" else "GET"
    request = urllib.request.Request(server.endpoint + path, data=b"" if method == "POST" else None, method=method)
    with urllib.request.urlopen(request) as response:
        return response.read()


def _scale_table(size: str, layout: int) -> str:
    """A generated MOR table (cached under the benchmark's cache directory, shared with `python -m bench`)."""
    from bench.__main__ import _cache_dir

    target = _cache_dir() / f"{size}-layout{layout}-mor"
    if (target / ".hoodie" / "hoodie.properties").is_file():
        return str(target)
    if target.exists():
        raise SystemExit(f"bench: {target} exists but is incomplete; remove it and run again")
    from hudi_core.scenarios.scale import MERGE_ON_READ, generate_table

    print(f"bench: generating {target} (once)", file=sys.stderr)
    generate_table(target, size, layout=layout, table_type=MERGE_ON_READ)
    return str(target)


def load_into_server(server: Any, local_dir: str, bucket: str, prefix: str) -> int:
    """Put every file of `local_dir` into the in-process moto backend directly (100k objects in
    seconds; through HTTP they took 15 minutes). Returns the number of objects."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
    if bucket not in backend.buckets:
        backend.create_bucket(bucket, "us-east-1")
    count = 0
    for folder, _dirs, names in os.walk(local_dir):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as fh:
                backend.put_object(bucket, f"{prefix}/{os.path.relpath(path, local_dir)}", fh.read())
            count += 1
    return count


def bench_s3(size: str, layout: int, rounds: int, delay_ms: float, commands: list[str]) -> dict[str, Any]:
    """The table on the loopback S3 server with `delay_ms` per request."""
    from bench.s3server import ACCESS_KEY, REGION, SECRET_KEY, LoopbackS3, cli_storage_args, storage_options

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    local = _scale_table(size, layout)
    server = LoopbackS3(delay_ms=0).start()
    try:
        started = time.perf_counter()
        objects = load_into_server(server, local, "bench", f"{size}{layout}")
        load_s = round(time.perf_counter() - started, 1)
        _server_call(server, f"/__config?delay_ms={delay_ms}")
        url = f"s3://bench/{size}{layout}"
        hudi_rs_options = {"aws_endpoint_url": server.endpoint, "aws_access_key_id": ACCESS_KEY,
                           "aws_secret_access_key": SECRET_KEY, "aws_region": REGION, "aws_allow_http": "true"}
        entry = bench_table(f"s3:{size}-layout{layout}-mor", url, rounds, [c for c in commands if c != "help"],
                            cli_storage_args(server.endpoint), storage_options(server.endpoint),
                            hudi_rs_options, server)
        entry.update(objects=objects, load_seconds=load_s, delay_ms=delay_ms)
        secs = entry["commands"]
        entry["targets_met"] = {k: secs.get(k, {}).get("seconds", 99) < v for k, v in TARGETS["s3_seconds"].items()
                                if k in secs}
        entry["targets_met"].update({k: v for k, v in _targets(entry).items() if "floor" not in k})
        return entry
    finally:
        server.stop()


#: Dashboard pages `--dashboard-pages` can time: URL path and the element that shows the page has rendered.
DASHBOARD_PAGES: dict[str, tuple[str, str]] = {
    "overview": ("", ".js-plotly-plot"),
    "health": ("health", "[data-testid=stMarkdown]"),
    "cleaner": ("cleaner", ".js-plotly-plot"),
    "file-groups": ("file-groups", "[data-testid=stDataFrame]"),
    "instant": ("instant", "[data-testid=stTabs]"),
    "log-blocks": ("log-blocks", ".js-plotly-plot"),
}


def bench_dashboard(table: str, label: str, reloads: int = 2, page: str = "overview",
                    restarts: int = 0, screenshot: str | None = None) -> dict[str, Any]:
    """:func:`_bench_dashboard` from a cold start (a fresh server and browser: the server's first script run
    imports the dashboard's modules, the browser loads Streamlit's and Plotly's scripts) and, as ``warm_server``,
    from a running dashboard that showed a small table first (what opening a big table costs)."""
    cold = _bench_dashboard(table, label, reloads, page, restarts, screenshot)
    if "error" in cold:
        return cold
    cold["warm_server"] = _bench_dashboard(table, label + " (warm server)", reloads, page, 0, None, warm_first=True)
    return cold


def _bench_dashboard(table: str, label: str, reloads: int = 2, page: str = "overview",
                     restarts: int = 0, screenshot: str | None = None, warm_first: bool = False) -> dict[str, Any]:
    """One dashboard page in Chromium on `table`: seconds from navigation until the page's main element
    is drawn and the script run is over, first with empty caches (a fresh server), then reloads with
    the table cached. `restarts`: that many more fresh servers on the same inspector cache (a
    restarted dashboard: the derived indexes warm, nothing in the server's memory), first render each.
    Needs Debian's chromium (or CHROMIUM_PATH) and playwright."""
    import shutil

    browser_path = next((p for p in (os.environ.get("CHROMIUM_PATH", ""), "/usr/bin/chromium") if p and
                         os.path.exists(p)), shutil.which("chromium"))
    if not browser_path:
        return {"error": "no Chromium binary"}
    from bench.streamlit_server import streamlit_server

    with tempfile.TemporaryDirectory(prefix="hudi-bench-ui-") as tmp:
        env = {**_env(), "HUDI_INSPECTOR_CACHE": tmp, "HUDI_INSPECTOR_ROOTS": f"{Path(table).parent},{tmp}"}
        warmup_url = None
        if warm_first:
            from hudi_core.scenarios.scale import MERGE_ON_READ, generate_table

            small = Path(tmp) / "small-table"
            generate_table(small, "S", layout=1, table_type=MERGE_ON_READ, active_instants=20,
                           archived_instants=100, partitions=2, file_groups=20, files=100, log_files=10)
            warmup_url = f"?table={urllib.parse.quote(str(small))}"
        restarted: list[float] = []
        first_views: list[float] = []
        restarted_views: list[float] = []
        try:
            path, ready = DASHBOARD_PAGES[page]
            with streamlit_server(env, root=CODE_ROOT) as base:
                times = _time_page(f"{base}/{path}?table={urllib.parse.quote(table)}", ready, browser_path,
                                   f"{label} {page}", reloads, first_views, screenshot,
                                   f"{base}/{warmup_url}" if warmup_url else None)
                server_peak_mib = _server_peak_rss_mib(base)
            for n in range(restarts):
                with streamlit_server(env, root=CODE_ROOT) as base:
                    restarted += _time_page(f"{base}/{path}?table={urllib.parse.quote(table)}", ready,
                                            browser_path, f"{label} {page} restart {n + 1}", 0, restarted_views)
        except RuntimeError as exc:
            return {"error": str(exc)}
    # first_view_s: the page's first look on screen; first_render_s: the page complete.
    out = {"first_view_s": first_views[0], "first_render_s": times[0], "cached_reload_s": times[1:],
           "cached_reload_median_s": statistics.median(times[1:]) if times[1:] else None,
           "server_peak_rss_mib": server_peak_mib}
    if restarts:
        out["restarted_first_view_s"] = restarted_views
        out["restarted_first_render_s"] = restarted
    return out


def _server_peak_rss_mib(base: str) -> int | None:
    """Peak RSS (VmHWM) of the dashboard server listening at `base` (its worker processes not counted)."""
    import subprocess

    port = base.rsplit(":", 1)[-1]
    pids = subprocess.run(["pgrep", "-f", f"server.port {port}"], capture_output=True, text=True).stdout.split()
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    return None


#: `hudi-inspect ui TABLE` started until the Overview has rendered.
UI_START_TARGET_S = 3.0


def bench_ui_start(rounds: int = 3) -> dict[str, Any]:
    """`hudi-inspect ui TABLE` on the demo table: per round, seconds from spawning the command until it prints
    its URL (`url_printed_s`: Streamlit answers), until the last websocket message of the first script run
    has arrived (`data_received_s`: the server's part is over) and until the Overview it opens on has rendered
    in Chromium (`overview_rendered_s`: timeline chart drawn, script run over), then SIGINT (`exit_code`,
    `stop_s`). A new command, server and cache every round; the browser is started beforehand, as a user's
    is, with a fresh profile every round (`fresh_browser_profile`: Streamlit's frontend and Plotly fetched
    and compiled anew) and, after one untimed round, with its HTTP cache kept (`browser_cache_kept`)."""
    import shutil
    import signal

    browser_path = next((p for p in (os.environ.get("CHROMIUM_PATH", ""), "/usr/bin/chromium") if p and
                         os.path.exists(p)), shutil.which("chromium"))
    if not browser_path:
        return {"error": "no Chromium binary"}
    from playwright.sync_api import sync_playwright

    from bench.s3server import free_port

    idle = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"

    def one_round(context: Any, table: str, cache: Path) -> dict[str, Any]:
        page = context.new_page()
        frames: list[float] = []
        env = {**_env(), "HUDI_INSPECTOR_CACHE": str(cache)}
        started = time.perf_counter()
        page.on("websocket", lambda ws: ws.on("framereceived", lambda _: frames.append(time.perf_counter())))
        proc = subprocess.Popen([sys.executable, "-m", "hudi_core", "ui", table, "--port", str(free_port())],
                                cwd=cache.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            printed = time.perf_counter() - started
            url = line.removeprefix("hudi-inspect: dashboard on ").split(" ", 1)[0]
            if not url.startswith("http://"):
                raise RuntimeError(f"no URL printed: {line!r} {proc.stderr.read()!r}")  # type: ignore[union-attr]
            page.goto(url, wait_until="domcontentloaded")
            page.wait_for_selector(".js-plotly-plot", timeout=120_000)
            page.wait_for_function(idle, timeout=120_000)
            rendered = time.perf_counter() - started
            received = max(frames) - started if frames else None
            title = page.locator("h1").first.inner_text()
            stopping = time.perf_counter()
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=60)
            return {"url_printed_s": round(printed, 2), "data_received_s": received and round(received, 2),
                    "overview_rendered_s": round(rendered, 2), "title": title, "exit_code": code,
                    "stop_s": round(time.perf_counter() - stopping, 2),
                    "stderr": proc.stderr.read().strip()}  # type: ignore[union-attr]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            page.close()

    def summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
        return {"rounds": samples, **{f"{key}_median": statistics.median(s[key] for s in samples)
                                      for key in ("url_printed_s", "data_received_s", "overview_rendered_s")}}

    modes: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="hudi-bench-ui-start-") as tmp:
        table = str(Path(tmp) / "x")
        subprocess.run([sys.executable, "-m", "hudi_core", "scenario", "build", "hudi7779_case_b", table],
                       check=True, capture_output=True, env=_env(), cwd=tmp)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=browser_path, headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            viewport = {"width": 1500, "height": 2000}
            try:
                fresh = []
                for n in range(rounds):
                    context = browser.new_context(viewport=viewport)
                    fresh.append(one_round(context, table, Path(tmp) / f"cache-fresh-{n}"))
                    context.close()
                    print(f"bench: ui start, fresh browser profile, round {n + 1}: {fresh[-1]}", file=sys.stderr)
                modes["fresh_browser_profile"] = summary(fresh)
                context = browser.new_context(viewport=viewport)
                one_round(context, table, Path(tmp) / "cache-kept-warmup")
                kept = []
                for n in range(rounds):
                    kept.append(one_round(context, table, Path(tmp) / f"cache-kept-{n}"))
                    print(f"bench: ui start, browser cache kept, round {n + 1}: {kept[-1]}", file=sys.stderr)
                context.close()
                modes["browser_cache_kept"] = summary(kept)
            finally:
                browser.close()
    worst = modes["fresh_browser_profile"]["overview_rendered_s_median"]
    return {"command": "hudi-inspect ui TABLE", "table": "hudi7779_case_b (scenario build, table version 9)",
            **modes, "target_s": UI_START_TARGET_S, "target_met_fresh_profile": worst <= UI_START_TARGET_S,
            "target_met_cache_kept": modes["browser_cache_kept"]["overview_rendered_s_median"] <= UI_START_TARGET_S}


#: The element a page's first look shows (a heavy table's Overview draws it before anything is decoded).
FIRST_VIEW_READY = "[data-testid=stMetric]"
#: The Overview's label of a partial page; the page is complete once none is on screen.
PARTIAL_LABEL = "First look — partial"


def _time_page(url: str, ready: str, browser_path: str, label: str, reloads: int,
               first_views: list[float] | None = None, screenshot: str | None = None,
               warmup_url: str | None = None) -> list[float]:
    """Seconds per load of `url` until `ready` is drawn, no part of the page is labelled partial and the script
    run is over: the first, then reloads. `first_views` gets, per load, the seconds until the page
    first showed something of the table (its first look, or the complete page when there is none).
    `screenshot`: a path prefix for full-height screenshots of the first look and the complete page.
    `warmup_url`: a page loaded (and waited for) before the timed loads: the server's modules imported and the
    browser's cache holding Streamlit's and Plotly's scripts, as in a running dashboard opening another table."""
    from playwright.sync_api import sync_playwright

    idle = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
    # Complete: no script running, nothing labelled partial and no element left over from the run before (between
    # a fragment's `st.rerun` and the page's new run the first look's elements stay, marked stale).
    complete = ("(label) => !document.querySelector('[data-testid=\"stStatusWidget\"]') && "
                "!document.querySelector('[data-stale=\"true\"]') && !document.body.innerText.includes(label)")
    times: list[float] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_context(viewport={"width": 1500, "height": 2000}).new_page()
            if warmup_url:
                page.goto(warmup_url, wait_until="domcontentloaded")
                page.wait_for_selector(".js-plotly-plot", timeout=600_000)
                page.wait_for_function(idle, timeout=600_000)
            for n in range(1 + reloads):
                started = time.perf_counter()
                page.goto(url, wait_until="domcontentloaded")
                page.wait_for_selector(f"{FIRST_VIEW_READY}, {ready}", timeout=600_000)
                if first_views is not None:
                    first_views.append(round(time.perf_counter() - started, 2))
                if screenshot and n == 0 and page.get_by_text(PARTIAL_LABEL).count():
                    page.wait_for_selector(ready, timeout=600_000)
                    page.screenshot(path=f"{screenshot}-first-look.png", full_page=True)
                page.wait_for_selector(ready, timeout=600_000)
                page.wait_for_function(complete, arg=PARTIAL_LABEL, timeout=900_000)
                page.wait_for_function(idle, timeout=600_000)
                times.append(round(time.perf_counter() - started, 2))
                if screenshot and n == 0:
                    page.screenshot(path=f"{screenshot}-complete.png", full_page=True)
                print(f"bench: dashboard {label}: {times[-1]} s"
                      + (f" (first view {first_views[-1]} s)" if first_views else ""), file=sys.stderr)
        finally:
            browser.close()
    return times


def _targets(entry: dict[str, Any]) -> dict[str, bool]:
    c = entry["commands"]
    met: dict[str, bool] = {}
    for name, most in TARGETS["hudi_rs_ratio_max"].items():
        ratio = c.get(name, {}).get("ratio_vs_hudi_rs")
        if ratio is not None:
            met[f"{name}_hudi_rs_ratio_le_{most:g}"] = ratio <= most
    ratio = c.get("validate_metadata", {}).get("ratio_vs_storage_fsview")
    if ratio is not None:
        met["validate_metadata_storage_fsview_ratio_le_1.5"] = ratio <= 1.5
    for name, reference, most in TIMELINE_ALL_REFERENCES:
        ratio = c.get(name, {}).get("ratio_vs_timeline_all")
        if ratio is not None:
            met[f"{name}_{reference}_ratio_le_{most}"] = ratio <= most
    size = entry["table"].rpartition(":")[2].split("-", 1)[0]  # "M-layout2-mor", "s3:M-layout2-mor"
    most = TARGETS["floor_ratio_max"].get(size, 2.0)
    for name in WHOLE_TABLE:
        ratio = c.get(name, {}).get("ratio_vs_floor")
        if ratio is not None:
            met[f"{name}_floor_ratio_le_{most:g}"] = ratio <= most
    for name in ("help", "info"):
        if "seconds" in c.get(name, {}):
            met[f"{name}_under_0.35s"] = c[name]["seconds"] < TARGETS["help_and_info_s"]
    return met


def summary_rows(doc: dict[str, Any]) -> str:
    """A Markdown table: one row per command, one column group per table."""
    tables = doc["tables"]
    head = "| command | " + " | ".join(t["table"] for t in tables) + " |"
    lines = [head, "|" + "---|" * (len(tables) + 1)]
    names = list(dict.fromkeys(n for t in tables for n in t["commands"]))
    for name in names:
        cells = []
        for t in tables:
            r = t["commands"].get(name)
            if not r:
                cells.append("–")
                continue
            if "seconds" not in r:
                cells.append("error")
                continue
            cell = f"{r['seconds']:.2f} s"
            if r.get("ratio_vs_hudi_rs") is not None:
                cell += f" (×{r['ratio_vs_hudi_rs']} hudi-rs)"
            if r.get("ratio_vs_floor") is not None:
                cell += f" (×{r['ratio_vs_floor']} floor)"
            if r.get("ratio_vs_timeline_all") is not None:
                cell += f" (×{r['ratio_vs_timeline_all']} timeline --all)"
            cell += f", {r['peak_rss_mib']:.0f} MiB"
            if "requests" in r:
                q = r["requests"]
                cell += f", {q['GET']} GET / {q['LIST']} LIST / {q['HEAD']} HEAD"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: Rounds on L by default (a whole-table command takes seconds to a minute there; one round each).
L_ROUNDS = 1


def run(sizes: list[str], layouts: list[int], rounds: int, commands: list[str], s3: list[str],
        delay_ms: float, dashboard: list[str] | None = None, pages: list[str] | None = None,
        restarts: int = 0, l_rounds: int = L_ROUNDS) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "benchmark": "hudi-inspector whole commands",
        "started_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_facts(),
        "rounds": rounds, "targets": TARGETS, "tables": [], "code_root": str(CODE_ROOT),
    }
    started = time.perf_counter()
    for size in sizes:
        for layout in layouts:
            path = _scale_table(size, layout)
            entry = bench_table(f"{size}-layout{layout}-mor", path, rounds if size != "L" else l_rounds, commands)
            entry["targets_met"] = _targets(entry)
            doc["tables"].append(entry)
    for size in s3:
        for layout in layouts:
            doc["tables"].append(bench_s3(size, layout, rounds, delay_ms, commands))
    doc["dashboard"] = {f"{size}-layout{layout}-mor {page}": bench_dashboard(_scale_table(size, layout),
                                                                             f"{size}-{layout}", page=page,
                                                                             restarts=restarts)
                        for size in dashboard or [] for layout in layouts for page in pages or ["overview"]}
    doc["wall_s"] = round(time.perf_counter() - started, 1)
    doc["summary_markdown"] = summary_rows(doc)
    return doc


def _write_results(prefix: str, doc: dict[str, Any]) -> int:
    """Write `doc` to ``bench/results/<prefix>-<UTC time>.json`` and print it."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"{prefix}-{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    doc["results_file"] = str(out.relative_to(REPO_ROOT))
    print(json.dumps(doc, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.commands", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="S,M", help="generated tables: comma list of S,M,L (default S,M)")
    parser.add_argument("--layouts", default="1,2", help="timeline layouts (default 1,2)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; medians are reported (default 3)")
    parser.add_argument("--l-rounds", type=int, default=L_ROUNDS,
                        help=f"rounds on the L tables (default {L_ROUNDS}; --rounds on the others)")
    parser.add_argument("--commands", default=",".join(COMMANDS), help="comma list of " + ",".join(COMMANDS))
    parser.add_argument("--s3", default="", help="sizes to run on the loopback S3 server too, e.g. M")
    parser.add_argument("--delay-ms", type=float, default=20.0, help="added latency per S3 request (default 20)")
    parser.add_argument("--dashboard", default="", help="sizes whose dashboard pages are timed in Chromium, e.g. M")
    parser.add_argument("--dashboard-pages", default="overview",
                        help="pages timed with --dashboard: comma list of " + ",".join(DASHBOARD_PAGES))
    parser.add_argument("--dashboard-restarts", type=int, default=0,
                        help="with --dashboard: time that many restarted servers on the same (warm) cache too")
    parser.add_argument("--cache-modes", action="store_true",
                        help="each command with an empty inspector cache (first) and then warm (--commands)")
    parser.add_argument("--code-root", default=str(REPO_ROOT),
                        help="the checkout whose engine runs (a worktree of an older commit, for before/after)")
    parser.add_argument("--compare-root", default="",
                        help="with --cache-modes: another checkout (e.g. `git archive` of the commit before a "
                             "change) run alternately with --code-root, reported as before / after")
    parser.add_argument("--ui-start", action="store_true",
                        help="only time `hudi-inspect ui TABLE` until the Overview renders in Chromium (--rounds)")
    args = parser.parse_args(argv)
    global CODE_ROOT
    CODE_ROOT = Path(args.code_root).resolve()
    if args.cache_modes:
        chosen = [c.strip() for c in args.commands.split(",") if c.strip()]
        cache_doc: dict[str, Any] = {
            "benchmark": "first run (empty inspector cache) and warm run per command",
            "started_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "machine": machine_facts(),
            "rounds": args.rounds, "code_root": str(CODE_ROOT),
            "tables": [bench_cache_modes(f"{size}-layout{layout}-mor", _scale_table(size, int(layout)),
                                         max(1, args.rounds if size != "L" else args.l_rounds), chosen,
                                         {"before": Path(args.compare_root).resolve(), "after": CODE_ROOT}
                                         if args.compare_root else None)
                       for size in args.sizes.split(",") for layout in args.layouts.split(",")],
        }
        return _write_results("cache-modes", cache_doc)
    if args.ui_start:
        ui_doc = {"benchmark": "hudi-inspect ui start to Overview",
                  "started_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "machine": machine_facts(),
                  "ui_start": bench_ui_start(max(1, args.rounds))}
        return _write_results("ui-start", ui_doc)
    commands = [c.strip() for c in args.commands.split(",") if c.strip()]
    unknown = sorted(set(commands) - set(COMMANDS))
    if unknown:
        parser.error(f"unknown commands: {', '.join(unknown)}")
    bad_pages = sorted({p.strip() for p in args.dashboard_pages.split(",") if p.strip()} - set(DASHBOARD_PAGES))
    if bad_pages:
        parser.error(f"unknown dashboard pages: {', '.join(bad_pages)}")
    doc = run([s.strip() for s in args.sizes.split(",") if s.strip()],
              [int(v) for v in args.layouts.split(",") if v.strip()], max(1, args.rounds), commands,
              [s.strip() for s in args.s3.split(",") if s.strip()], args.delay_ms,
              [s.strip() for s in args.dashboard.split(",") if s.strip()],
              [p.strip() for p in args.dashboard_pages.split(",") if p.strip()], max(0, args.dashboard_restarts),
              max(1, args.l_rounds))
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"commands-{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    doc["results_file"] = str(out.relative_to(REPO_ROOT))
    print(json.dumps(doc, indent=1))
    print(doc["summary_markdown"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
