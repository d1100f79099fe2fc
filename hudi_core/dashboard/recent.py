"""Recently opened tables, kept in a small JSON file in the inspector's cache folder.

The file lives beside the demo tables (`HUDI_INSPECTOR_CACHE`, else ``~/.cache/hudi-inspector``),
never in a table. Entries are table URIs, most recent first.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hudi_core.formats.timeline.index_paths import cache_dir

MAX_RECENT = 8


def recent_file() -> Path:
    """Path of the JSON file with the recent tables."""
    return cache_dir() / "recent.json"


def load_recent(path: Path | None = None) -> list[str]:
    """Recent table URIs, most recent first; an unreadable file counts as empty."""
    path = path or recent_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(x) for x in data if isinstance(x, str)][:MAX_RECENT] if isinstance(data, list) else []


def push_recent(uri: str, path: Path | None = None) -> list[str]:
    """Put `uri` first in the recent list (deduplicated, at most :data:`MAX_RECENT`) and save it."""
    path = path or recent_file()
    items = [uri, *(u for u in load_recent(path) if u != uri)][:MAX_RECENT]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".recent-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(items, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: the list just is not remembered
    return items
