"""Finding Hudi tables under a folder or bucket prefix (the dashboard's picker).

A table is a folder holding ``.hoodie/hoodie.properties``. The search is breadth first, never
descends into a table it found (its partitions are not tables) nor into hidden folders, and stops at
a depth and a count, so a warehouse prefix on an object store costs one listing per folder visited.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from hudi_core.errors import Finding, Severity, StorageError
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.table import PROPERTIES_PATH

_HOODIE_DIR = PROPERTIES_PATH.split("/", 1)[0]


@dataclass
class TableSearch:
    """Tables found under a root (full URIs, in the order met), and what could not be listed."""

    root: str
    tables: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    truncated: bool = False  # the limit or the depth stopped the search before it was complete


def find_tables(uri: str, storage_options: dict[str, Any] | None = None, max_depth: int = 3,
                limit: int = 200, confine_to: tuple[str, ...] | None = None) -> TableSearch:
    """Tables at most `max_depth` folders below `uri` (the root itself included), at most `limit`.
    `confine_to`: the storage's allowed roots (the dashboard's), as for a table it opens."""
    storage = ReadOnlyStorage(uri, storage_options, confine_to=confine_to)
    search = TableSearch(storage.uri)
    frontier = [""]
    for _level in range(max_depth + 1):
        deeper: list[str] = []
        for folder in frontier:
            try:
                entries = storage.list(folder)
            except StorageError as exc:
                search.findings.append(Finding(Severity.WARNING, "folder_unlisted", storage.uri_of(folder), str(exc)))
                continue
            names = {e.name: e for e in entries}
            hoodie = names.get(_HOODIE_DIR)
            if hoodie is not None and hoodie.is_dir:
                marker = posixpath.join(folder, PROPERTIES_PATH)
                try:
                    is_table = storage.exists(marker)
                except StorageError as exc:
                    search.findings.append(Finding(Severity.WARNING, "folder_unlisted", storage.uri_of(marker),
                                                   str(exc)))
                    continue
                if is_table:
                    search.tables.append(storage.uri_of(folder))
                    if len(search.tables) >= limit:
                        search.truncated = True
                        return search
                    continue
            deeper.extend(e.path for e in entries if e.is_dir and not e.name.startswith((".", "_")))
        frontier = deeper
        if not frontier:
            return search
    search.truncated = bool(frontier)
    return search
