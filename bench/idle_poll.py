"""Following a table: the cost of a poll on the generated M table, locally and on the loopback S3 server.

For each layout, on a hard-linked copy of the cached M table (`bench.commands`' tables; linked, so adding files to
the copy never touches the cache):

* ``first_poll_s``: the follower's first poll (opens the table, lists the timeline and archive folders);
* ``idle_poll_ms``: median, 95th percentile and maximum of `--polls` polls of the unchanged table (target 50 ms
  locally), with the LIST requests and file reads of one;
* ``rss_growth_mib``: resident memory after `--polls` more idle polls, minus before (flat: about 0);
* ``watcher_first_poll_s``: a :class:`~hudi_core.services.watch.TableWatcher`'s first poll with its analysis
  (what `watch` does before its first line);
* ``after_commit``: commits added one at a time (the latest commit's state files under a new requested time), each
  polled: the first poll's time (it also imports the body decoders), the median of the others, the files the
  last one read (target: that commit's files only) and, with the analysis, the
  :class:`~hudi_core.services.watch.TableWatcher` poll that also recomputes markers, the archive dry run and the
  alerts (what `watch` and the dashboard pay per change);
* with ``--s3``: the same table in the in-process moto backend behind the loopback S3 server (``--delay-ms`` per
  request): the idle poll's requests (target: exactly one LIST, no GET) and time, and the poll after one commit.

Run: ``python -m bench.idle_poll [--layouts 1,2] [--polls 200] [--s3] [--delay-ms 20]``; prints one JSON document
(also written under ``bench/results/``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.commands import machine_facts

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
#: Targets for following a table: an idle poll is cheap and reads nothing.
TARGETS = {"idle_poll_ms_local": 50.0, "idle_poll_lists_s3": 1, "idle_poll_gets_s3": 0}
#: Commits added one after another, each polled (`after_commit`).
COMMITS = 6


def _rss_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median": round(statistics.median(ordered) * 1000, 2),
            "p95": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2), "max": round(ordered[-1] * 1000, 2)}


def add_commit(timeline_dir: Path, latest: Any, put: Any) -> list[str]:
    """Write the latest completed instant's state files again under a requested time one minute later (`put(name,
    bytes)` writes one file); the new file names."""
    new_time = str(int(latest.requested_time) + 100_000)
    names = []
    for f in sorted(latest.files, key=lambda f: f.state):  # requested, inflight, completed: Hudi's order
        name = f.name.replace(latest.requested_time, new_time, 1)
        if f.completion_time:
            name = name.replace(f.completion_time, str(int(f.completion_time) + 100_000), 1)
        put(name, (timeline_dir / f.name).read_bytes())
        names.append(name)
    return names


def _follow(uri: str, options: dict[str, Any] | None, polls: int, put: Any, timeline_dir: Path,
            server: Any = None) -> dict[str, Any]:
    from hudi_core.services.watch import TableWatcher
    from hudi_core.table.follow import TableFollower

    def requests() -> dict[str, int]:
        if server is None:
            return {}
        from bench.commands import _server_call

        stats = json.loads(_server_call(server, "/__stats"))
        return {k: stats[k] for k in ("LIST", "GET", "HEAD")}

    def reset() -> None:
        if server is not None:
            from bench.commands import _server_call

            _server_call(server, "/__reset")

    follower = TableFollower(uri, options, full_every=10**9 if server is not None else 10)
    started = time.perf_counter()
    first = follower.poll()
    out: dict[str, Any] = {"first_poll_s": round(time.perf_counter() - started, 3),
                           "timeline_files": len(first.state.timeline_entries),
                           "active_instants": len(first.state.timeline)}
    samples = []
    for _ in range(polls):
        reset()
        result = follower.poll()
        samples.append(result.seconds)
        assert not result.changed
    out["idle_poll_ms"] = _ms(samples)
    out["idle_poll_requests"] = {"follower": result.requests.to_dict(), **({"server": requests()} if server else {})}
    before = _rss_mib()
    for _ in range(polls):
        follower.poll()
    out["rss_growth_mib"] = round(_rss_mib() - before, 1)
    # Commits one after another, each polled once (then idle until the next): the first also pays the body
    # decoders' imports (fastavro, the record types; once per process).
    times = []
    for _ in range(COMMITS):
        names = add_commit(timeline_dir, follower.state.timeline.completed().last(), put)  # type: ignore[union-attr]
        reset()
        after = follower.poll()
        assert after.changed
        times.append(after.seconds)
        stats = requests()
        for _ in range(3):  # past the settle window, so the next commit is seen by the one-request listing
            follower.poll()
    out["after_commit"] = {"ms_first": round(times[0] * 1000, 1), "ms_median_next": _ms(times[1:])["median"],
                           "commits": COMMITS, "added": list(after.added), "reads": after.requests.reads,
                           "lists": after.requests.lists, **({"server": stats} if server else {}),
                           "files_written": names}
    # The same change seen by a watcher: the poll plus markers, the archive dry run and the alerts.
    watcher = TableWatcher(TableFollower(uri, options))
    started = time.perf_counter()
    watcher.poll()  # the baseline with its analysis (markers, archive dry run, alerts), as `watch` starts
    out["watcher_first_poll_s"] = round(time.perf_counter() - started, 3)
    add_commit(timeline_dir, after.state.timeline.completed().last(), put)
    started = time.perf_counter()
    update = watcher.poll()
    out["after_commit"]["watcher_s"] = round(time.perf_counter() - started, 3)
    out["after_commit"]["events"] = [e.event.value for e in update.events]
    return out


def bench_layout(layout: int, polls: int, s3: bool, delay_ms: float) -> dict[str, Any]:
    from bench.commands import _scale_table

    cached = Path(_scale_table("M", layout))
    entry: dict[str, Any] = {"table": f"M-layout{layout}-mor"}
    with tempfile.TemporaryDirectory(prefix="idle-poll-") as tmp:
        copy = Path(tmp) / "t"
        started = time.perf_counter()
        shutil.copytree(cached, copy, copy_function=os.link)  # hard links: the cache is never written
        entry["link_copy_s"] = round(time.perf_counter() - started, 1)
        timeline_dir = copy / (".hoodie" if layout == 1 else ".hoodie/timeline")

        def put_local(name: str, data: bytes) -> None:
            (timeline_dir / name).write_bytes(data)

        entry["local"] = _follow(str(copy), None, polls, put_local, timeline_dir)
        if s3:
            entry["s3"] = _bench_s3(copy, layout, polls, delay_ms, timeline_dir)
    entry["targets_met"] = {"idle_poll_ms_local": entry["local"]["idle_poll_ms"]["median"]
                            <= TARGETS["idle_poll_ms_local"]}
    if s3:
        server_req = entry["s3"]["idle_poll_requests"]["server"]
        entry["targets_met"]["idle_poll_one_list_s3"] = (server_req["LIST"], server_req["GET"]) == (1, 0)
    return entry


def _bench_s3(local: Path, layout: int, polls: int, delay_ms: float, timeline_dir: Path) -> dict[str, Any]:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    from bench.commands import _server_call, load_into_server
    from bench.s3server import LoopbackS3, storage_options

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = LoopbackS3(delay_ms=0).start()
    try:
        prefix = f"M{layout}"
        started = time.perf_counter()
        objects = load_into_server(server, str(local), "follow", prefix)
        load_s = round(time.perf_counter() - started, 1)
        _server_call(server, f"/__config?delay_ms={delay_ms}")
        backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
        rel = timeline_dir.relative_to(local).as_posix()

        def put(name: str, data: bytes) -> None:
            (timeline_dir / name).write_bytes(data)  # the local copy too: the next commit is made from it
            backend.put_object("follow", f"{prefix}/{rel}/{name}", data)

        out = _follow(f"s3://follow/{prefix}", storage_options(server.endpoint), polls, put, timeline_dir, server)
        out.update(objects=objects, load_seconds=load_s, delay_ms=delay_ms)
        return out
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.idle_poll", description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", default="1,2", help="timeline layouts (default 1,2)")
    parser.add_argument("--polls", type=int, default=200, help="idle polls measured (default 200), then as many "
                                                               "for the memory growth")
    parser.add_argument("--s3", action="store_true", help="also on the loopback S3 server")
    parser.add_argument("--delay-ms", type=float, default=20.0, help="added latency per S3 request (default 20)")
    args = parser.parse_args(argv)
    doc: dict[str, Any] = {
        "benchmark": "hudi-inspector follower polls",
        "started_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_facts(),
        "targets": TARGETS, "polls": args.polls,
        "tables": [bench_layout(int(v), max(10, args.polls), args.s3, args.delay_ms)
                   for v in args.layouts.split(",") if v.strip()],
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"idle-poll-{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    doc["results_file"] = str(out.relative_to(REPO_ROOT))
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
