"""The rules Hudi's `LSMTimelineWriter` applies after an archival: compaction and snapshot cleaning.

One place for them, used by the archiver dry run (:mod:`hudi_core.services.lsm_archive`) and by the
scenario builder's writer (:class:`hudi_core.scenarios.archive_writer.LSMTimelineWriter`).

After each archival that wrote an L0 file, `compactAndClean` runs: for level 0, 1, 2 … while the
manifest holds at least `hoodie.timeline.compaction.batch.size` files of that level, the candidates
(:func:`compaction_candidates`) are merged into one file of the next level, each merge a new snapshot
version; then `clean(context, compactions)` keeps the newest ``retained + compactions`` manifest
versions (:func:`versions_to_keep`) and deletes every other manifest and every `*.parquet` file none
of the kept manifests names.

Releases (read in Hudi's source, nothing copied):

* 1.1.x: `retained` is the constant 3 ("should make the threshold configurable"); candidates are the
  first `batch` files, stopping before a file once the running total exceeds 1000 MiB
  (`MAX_FILE_SIZE_IN_BYTES`), so a first file over the limit blocks the level for good.
* 1.2.x: `retained` is `hoodie.timeline.manifest.retained.versions` (default 3, PR #17996); candidate
  selection skips an oversized leading file instead of stalling (PR #17784), capped by
  `hoodie.timeline.compaction.target.file.max.bytes` (default 1000 MiB).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

#: `hoodie.timeline.compaction.batch.size` default.
COMPACTION_BATCH = 10
#: 1.1 `LSMTimelineWriter.MAX_FILE_SIZE_IN_BYTES`; 1.2 `hoodie.timeline.compaction.target.file.max.bytes` default.
MAX_FILE_BYTES = 1024 * 1024 * 1000
#: 1.1's fixed count of kept snapshot versions; 1.2's `hoodie.timeline.manifest.retained.versions` default.
RETAINED_VERSIONS = 3

#: `LSMTimeline.ARCHIVE_FILE_PATTERN`, matched whole (`Matcher.matches`): one-digit level.
DATA_FILE_PATTERN = re.compile(r"(\d+)_(\d+)_(\d)\.parquet")
MANIFEST_PREFIX = "manifest_"
TEMP_SUFFIX = ".tmp"
#: The snapshot version pointer (decimal, no newline).
VERSION_FILE = "_version_"
_JAVA_INT = re.compile(r"[+-]?\d+")


def file_level(name: str) -> int:
    """`LSMTimeline.getFileLayer`: the level in a data file's name, 0 when the name does not match."""
    match = DATA_FILE_PATTERN.fullmatch(name)
    return int(match.group(3)) if match else 0


def data_file_name(min_instant: str, max_instant: str, level: int) -> str:
    """`<min>_<max>_<level>.parquet` (`LSMTimelineWriter.newFileName`)."""
    return f"{min_instant}_{max_instant}_{level}.parquet"


def manifest_name(version: int) -> str:
    """`LSMTimeline.getManifestFilePath`'s file name."""
    return f"{MANIFEST_PREFIX}{version}"


def parse_manifest(data: bytes) -> list[tuple[str, int | None]]:
    """`HoodieLSMTimelineManifest.fromJsonString`: (fileName, fileLen) of each entry, in order.

    As Jackson reads it: empty content is an empty manifest (`fromJsonString`), a missing `files` field an
    empty list (the no-argument constructor), unknown fields are ignored. A `fileLen` that is not an integer
    is ``None`` (a Java `long` would be 0 or a parse error; callers decide). Raises ValueError where Hudi
    throws ("Error deserializing manifest entries"), including JSON nested too deeply to parse."""
    if not data.strip():
        return []
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"not JSON ({exc})") from exc
    except RecursionError as exc:  # a deeply nested manifest is damage, not a crash
        raise ValueError("manifest JSON nested too deeply") from exc
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    files = doc.get("files", [])
    if not isinstance(files, list):
        raise ValueError('"files" is not a list')
    out: list[tuple[str, int | None]] = []
    for entry in files:
        if not isinstance(entry, dict) or not isinstance(entry.get("fileName"), str):
            raise ValueError(f"manifest entry without a fileName: {str(entry)[:80]}")
        length = entry.get("fileLen")
        out.append((entry["fileName"], length if isinstance(length, int) and not isinstance(length, bool) else None))
    return out


def compacted_file_name(names: Sequence[str]) -> str:
    """`LSMTimelineWriter.compactedFileName`: min of the mins, max of the maxes, the first file's level + 1.

    Raises ValueError for a name outside the pattern (Hudi throws "Unexpected archival file name")."""
    ranges = []
    for name in names:
        match = DATA_FILE_PATTERN.fullmatch(name)
        if match is None:
            raise ValueError(f"unexpected archival file name: {name}")
        ranges.append((match.group(1), match.group(2)))
    return data_file_name(min(r[0] for r in ranges), max(r[1] for r in ranges), file_level(names[0]) + 1)


def is_data_file_name(name: str) -> bool:
    """`LSMTimelineWriter.clean`'s data files: every ``*.parquet`` of the history folder (a glob, not the
    file-name pattern: a stray parquet file no manifest names is deleted too)."""
    return name.endswith(".parquet")


def is_manifest_name(name: str) -> bool:
    """`LSMTimeline.getManifestFilePathFilter`: ``manifest_*`` and not ``*.tmp``."""
    return name.startswith(MANIFEST_PREFIX) and not name.endswith(TEMP_SUFFIX)


def manifest_version(name: str) -> int:
    """`LSMTimeline.getManifestVersion`: ``Integer.parseInt(name.split("_")[1])``.

    So ``manifest_7_old`` reads as 7. Raises ValueError where Java throws (``manifest_x``, ``manifest_``)."""
    parts = name.split("_")
    while parts and parts[-1] == "":  # Java's split drops trailing empty strings
        parts.pop()
    if len(parts) < 2 or not _JAVA_INT.fullmatch(parts[1]):
        raise ValueError(f"{name}: no integer version after 'manifest_'")
    value = int(parts[1])
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"{name}: version {parts[1]} overflows a Java int")
    return value


def parse_version_file(text: str) -> int:
    """`Integer.parseInt` of `_version_` content (no trimming: a trailing newline fails, and Hudi then falls
    back to the highest manifest). Raises ValueError."""
    if not _JAVA_INT.fullmatch(text):
        raise ValueError(f"{text[:40]!r} is not a decimal integer")
    value = int(text)
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"{text[:40]!r} overflows a Java int")
    return value


def compaction_candidates(files: Sequence[tuple[str, int]], batch: int, max_bytes: int,
                          release: str) -> list[str]:
    """`LSMTimelineWriter.getCandidateFiles` on one level's files (name, length), already sorted by name.

    Called only when the level holds at least `batch` files; fewer than 2 candidates means no compaction.
    """
    candidates: list[str] = []
    total = 0
    if release == "1.1":
        for name, length in files[:batch]:
            if total > max_bytes:
                break
            total += length
            candidates.append(name)
        return candidates
    for name, length in files:
        total += length
        candidates.append(name)
        if len(candidates) >= batch:
            break
        if total > max_bytes:
            if len(candidates) < 2:
                candidates, total = [], 0
            else:
                break
    return candidates


def versions_to_keep(versions: Sequence[int], retained: int, compactions: int) -> list[int] | None:
    """`LSMTimelineWriter.clean`: the newest ``retained + compactions`` versions, newest first, or ``None``
    when there are no more versions than that (nothing is cleaned)."""
    keep = retained + compactions
    if len(versions) <= keep:
        return None
    return sorted(versions, reverse=True)[:keep]
