"""Log-block reader benchmark: bytes read per block and blocks per second of the header-only scan.

Writes synthetic log files (AVRO data blocks whose single record carries `content` random bytes,
plus a realistic SCHEMA header) into a new scratch directory, then scans them through
:class:`~hudi_core.io.storage.ReadOnlyStorage` with :class:`~hudi_core.formats.logfile.reader.LogFileReader`.
Prints one JSON object. Run: ``python -m bench.logfile_bench [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hudi_core.formats.logfile.content import record_count
from hudi_core.formats.logfile.inventory import scan_log_files
from hudi_core.formats.logfile.reader import LogFileReader
from hudi_core.formats.logfile.writer import avro_data_block
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.scenarios.scratch import ScratchDir

# A schema header of realistic size (Hudi meta fields + 30 columns): ~2.5 KiB per block.
SCHEMA = json.dumps({
    "type": "record", "name": "bench_record", "namespace": "hoodie.bench",
    "fields": [{"name": f, "type": ["null", "string"], "default": None} for f in (
        "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")]
    + [{"name": f"column_{i:02d}", "type": ["null", "long"], "default": None} for i in range(30)]
    + [{"name": "payload", "type": "bytes"}],
})
#: Small log files of the `small_files` case.
SMALL_FILES = 5000
CASES = {  # content bytes per block → blocks in the file
    "1KiB": (1024, 2000),
    "64KiB": (64 * 1024, 200),
    "1MiB": (1024 * 1024, 40),
    "10MiB": (10 * 1024 * 1024, 8),
}


def _block(rng: random.Random, content: int, seq: int) -> bytes:
    record: dict[str, Any] = {f"column_{i:02d}": i for i in range(30)}
    record.update({"_hoodie_record_key": f"key-{seq}", "payload": rng.randbytes(content)})
    return avro_data_block("20240101000000000", SCHEMA, [record], block_identifier=(0, seq))


def _scan(root: str, path: str, counts: bool) -> tuple[int, int, int, float]:
    storage = ReadOnlyStorage(root)
    start = time.perf_counter()
    reader = LogFileReader(storage, path)
    blocks = 0
    for block in reader.blocks():
        blocks += 1
        if counts:
            record_count(reader, block)
    elapsed = time.perf_counter() - start
    return blocks, reader.bytes_requested, reader.read_requests, elapsed


def _small_files(scratch: ScratchDir, rng: random.Random, files: int, repeats: int) -> dict[str, Any]:
    """Many small log files of one block each (as the generated tables' log files): the inventory's scan
    (`scan_log_files`: each file read whole in one ranged read and parsed from its bytes) beside the block reader's
    walk of the same files, in one process."""
    paths = []
    for k in range(files):
        path = f"small/.{k:08d}-0000-0000-0000-000000000000-0_20240101000000000.log.1_0-1-0"
        scratch.append_bytes(path, _block(rng, 64, 0))
        paths.append(path)
    storage = ReadOnlyStorage(scratch.uri)

    def inventory() -> float:
        start = time.perf_counter()
        scan_log_files(storage, paths)
        return time.perf_counter() - start

    def walk() -> float:
        start = time.perf_counter()
        for path in paths:
            for _ in LogFileReader(storage, path).blocks():
                pass
        return time.perf_counter() - start

    scanned, walked = min(inventory() for _ in range(repeats)), min(walk() for _ in range(repeats))
    return {"files": files, "file_bytes": len(_block(random.Random(0), 64, 0)),
            "inventory_seconds": round(scanned, 4), "inventory_files_per_second": round(files / scanned),
            "reader_walk_seconds": round(walked, 4), "reader_walk_files_per_second": round(files / walked)}


def run(quick: bool = False, repeats: int = 3) -> dict[str, Any]:
    """Build the files, scan each `repeats` times, return the measurements."""
    rng = random.Random(6758)
    out: dict[str, Any] = {"benchmark": "logfile_header_scan", "python": sys.version.split()[0], "cases": {}}
    with tempfile.TemporaryDirectory(prefix="logfile-bench-") as tmp:
        scratch = ScratchDir.create(Path(tmp) / "logs")
        for name, (content, count) in CASES.items():
            if quick:
                count = max(2, count // 10)
            path = f".bench-{name}-0_20240101000000000.log.1_0-1-0"
            size = 0
            for seq in range(count):
                block = _block(rng, content, seq)
                scratch.append_bytes(path, block)
                size += len(block)
            best = min((_scan(scratch.uri, path, counts=False) for _ in range(repeats)), key=lambda r: r[3])
            blocks, read, requests, elapsed = best
            counted = min((_scan(scratch.uri, path, counts=True) for _ in range(repeats)), key=lambda r: r[3])
            out["cases"][name] = {
                "content_bytes_per_block": content,
                "blocks": blocks,
                "file_bytes": size,
                "bytes_read": read,
                "bytes_read_per_block": round(read / blocks),
                "read_requests_per_block": round(requests / blocks, 2),
                "fraction_of_file_read": round(read / size, 5),
                "header_scan_seconds": round(elapsed, 4),
                "blocks_per_second": round(blocks / elapsed),
                "with_record_counts_blocks_per_second": round(counted[0] / counted[3]),
                "with_record_counts_bytes_read_per_block": round(counted[1] / counted[0]),
            }
        out["small_files"] = _small_files(scratch, rng, 500 if quick else SMALL_FILES, repeats)
    big = out["cases"]["10MiB"]["bytes_read_per_block"]
    mid = out["cases"]["64KiB"]["bytes_read_per_block"]
    out["bytes_per_block_10MiB_over_64KiB"] = round(big / mid, 3)
    out["note"] = ("header-only scan: per block one window at the block start (magic, size, header) and one "
                   "around the block end (trailer, footer, next magic); 1 KiB blocks share windows, so their "
                   "bytes per block is bounded by the block size")
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point: print the measurements as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer blocks per case")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.quick), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
