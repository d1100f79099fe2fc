"""Archived-timeline benchmark: list the unified (active + archived) timeline of a large table.

Generates a table with the project's scale generator (`hudi_core.scenarios.scale.generate_table`):
by default the timeline dimensions of size L (1M archived instants, 10k active instants) with few
data files, since listing a timeline never touches data files (``--size L`` builds the full L
table). Then, in a fresh child process so that peak memory covers nothing but the work measured:

* ``listing``: open the table, read the active timeline, read the archive with column projection
  and build the unified Arrow listing in Hudi's order (``UnifiedTimeline.listing()``);
* ``instants``: materialise every :class:`~hudi_core.formats.timeline.instant.Instant` object as well;
* ``body``: decode one archived instant's metadata on demand.

Peak memory is the child's peak RSS (``ru_maxrss``), baseline = RSS after imports. Target for
layout 2: listing under 3 s and 1 GiB on a 2-core machine. Prints one JSON object.
Run: ``python -m bench.archive_bench [--layout 1|2] [--archived N] [--table PATH] [--keep]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_SECONDS = 3.0
TARGET_BYTES = 1024**3


def _rss_bytes() -> int:
    """Current resident set size (Linux /proc), or 0 where unavailable."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _peak_bytes() -> int:
    """Peak RSS of this process image: `VmHWM` (`ru_maxrss` survives exec on Linux, so a child
    would report its parent's peak), else `ru_maxrss`."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measure(table_path: str) -> dict[str, Any]:
    """Time and peak memory of listing the unified timeline of one table (run in a fresh process)."""
    started = time.perf_counter()
    import pyarrow as pa

    from hudi_core import open_table

    pa.array([0])  # pyarrow imports pandas on first use: a one-off process cost, reported apart
    import_s = time.perf_counter() - started
    baseline = _rss_bytes()
    started = time.perf_counter()
    table = open_table(table_path)
    active = table.timeline
    t_active = time.perf_counter()
    archived = table.archived_timeline()
    t_archived = time.perf_counter()
    unified = table.unified_timeline()
    listing = unified.listing()
    listing_s = time.perf_counter() - started
    phases = {"active": round(t_active - started, 3), "archived": round(t_archived - t_active, 3),
              "unified_listing": round(started + listing_s - t_archived, 3), "active_instants": len(active)}
    listing_peak = _peak_bytes()
    started = time.perf_counter()
    instants = unified.instants
    instants_s = time.perf_counter() - started
    probe = next((i for i in reversed(archived.instants) if i.completed_action == "commit"
                  or i.completed_action == "deltacommit"), None)
    started = time.perf_counter()
    meta = archived.commit_metadata(probe) if probe is not None else None
    body_s = time.perf_counter() - started
    return {
        "table": table_path,
        "layout": table.properties.timeline_layout_version,
        "table_version": table.properties.version,
        "archived_instants": len(archived),
        "active_instants": len(table.timeline),
        "unified_rows": listing.num_rows,
        "archive_files_read": len(archived.archive_files),
        "findings": [f.code for f in unified.findings],
        "import_seconds": round(import_s, 3),
        "listing_seconds": round(listing_s, 3),
        "listing_peak_rss_mib": round(listing_peak / 2**20, 1),
        "listing_phases_seconds": phases,
        "baseline_rss_mib": round(baseline / 2**20, 1),
        "instants_seconds": round(instants_s, 3),
        "instants_objects": len(instants),
        "instants_peak_rss_mib": round(_peak_bytes() / 2**20, 1),
        "one_body_seconds": round(body_s, 4),
        "one_body_write_stats": len(meta.write_stats()) if meta is not None else None,
        "target_met": listing_s < TARGET_SECONDS and listing_peak < TARGET_BYTES,
    }


def _generate(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    from hudi_core.scenarios.scale import generate_table

    overrides: dict[str, int] = {"archived_instants": args.archived, "active_instants": args.active}
    if args.size != "L":
        overrides.update(partitions=10, file_groups=1_000, files=10_000, log_files=1_000)
    started = time.perf_counter()
    report = generate_table(out, "L" if args.size == "L" else "S", layout=args.layout,
                            table_type="MERGE_ON_READ", lsm_codec=args.codec, **overrides)
    return {"generate_seconds": round(time.perf_counter() - started, 1),
            "disk_mib": round(report.disk_bytes / 2**20, 1),
            "archive_files_written": len(report.archive_files), "params": report.params}


def main(argv: list[str] | None = None) -> None:
    """Generate (or reuse) a table, measure the listing in a child process, print JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.archive_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--layout", type=int, choices=[1, 2], default=2)
    parser.add_argument("--archived", type=int, default=1_000_000, help="archived instants (default 1M)")
    parser.add_argument("--active", type=int, default=10_000, help="active instants (default 10k)")
    parser.add_argument("--size", choices=["timeline", "L"], default="timeline",
                        help="'timeline': L's timeline, few data files (default); 'L': the full L table")
    parser.add_argument("--codec", default="zstd", help="LSM parquet codec for generation (Hudi default: gzip)")
    parser.add_argument("--table", help="measure this existing table instead of generating one")
    parser.add_argument("--keep", action="store_true", help="keep the generated table (path in the output)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--generate", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    if args.generate:
        print(json.dumps(_generate(Path(args.generate), args)))
        return
    result: dict[str, Any] = {"benchmark": "archive_listing",
                              "target": {"seconds": TARGET_SECONDS, "bytes": TARGET_BYTES}}
    tmp = None
    if args.table:
        path = Path(args.table)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="hudi-archive-bench-"))
        path = tmp / "table"
        gen = subprocess.run([sys.executable, "-m", "bench.archive_bench", "--generate", str(path),
                              "--layout", str(args.layout), "--archived", str(args.archived), "--active",
                              str(args.active), "--size", args.size, "--codec", args.codec],
                             capture_output=True, text=True, check=False)
        if gen.returncode != 0:
            raise SystemExit(f"generation failed: {gen.stderr.strip().splitlines()[-1:]}")
        result["generate"] = json.loads(gen.stdout)
    try:
        child = subprocess.run([sys.executable, "-m", "bench.archive_bench", "--measure", str(path)],
                               capture_output=True, text=True, check=False)
        if child.returncode != 0:
            result["error"] = child.stderr.strip().splitlines()[-1:] or ["measurement failed"]
        else:
            result["measure"] = json.loads(child.stdout)
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp is not None:
            result["kept_table"] = str(path)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
