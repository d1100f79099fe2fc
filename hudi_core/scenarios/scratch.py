"""The one writable place in the project: a scratch directory the scenario builder creates.

Everything else reads tables through :class:`~hudi_core.io.storage.ReadOnlyStorage`, which refuses
writes. Scenario tables, archive writers, log writers and the scale generator write through a
:class:`ScratchDir` instead: it is created new (an existing non-empty directory is refused, so the
tool can never write into a table it inspects), and every path is confined under its root.

An optional observer hears of every file written or deleted, after the fact and in file-system order
(:mod:`hudi_core.scenarios.play` paces and reports a scenario played in real time with it).
"""

from __future__ import annotations

import os
import posixpath
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from hudi_core.errors import HudiInspectError


class ScratchError(HudiInspectError):
    """A scratch-directory operation was refused or failed."""


#: Called with a root-relative path and ``"write"`` or ``"delete"`` once the change is on disk.
FileObserver = Callable[[str, str], None]


class ScratchDir:
    """A new local directory that only the scenario builder and generators write into.

    Paths are root-relative POSIX paths; ``..`` and absolute paths are refused. `observer`, when set,
    is called after every file write, append or delete (a rename is a delete then a write).
    """

    def __init__(self, root: Path, observer: FileObserver | None = None) -> None:
        self.root = root.resolve()
        self.observer = observer

    @classmethod
    def create(cls, root: str | os.PathLike[str], allow_empty_existing: bool = True,
               observer: FileObserver | None = None) -> ScratchDir:
        """Create `root` (and parents). Refuse a directory that already has content.

        An existing *empty* directory is accepted when `allow_empty_existing` (a temp dir made by
        the caller); a file or a non-empty directory never is.
        """
        path = Path(root)
        if path.exists():
            if not path.is_dir():
                raise ScratchError(f"{path} exists and is not a directory; scenario output needs a new directory")
            if any(path.iterdir()) or not allow_empty_existing:
                raise ScratchError(f"{path} already exists and is not empty; refusing to write into it")
        path.mkdir(parents=True, exist_ok=True)
        return cls(path, observer)

    def _changed(self, rel: str, kind: str) -> None:
        if self.observer is not None:
            self.observer(posixpath.normpath(rel.replace(os.sep, "/")), kind)

    def path(self, rel: str) -> Path:
        """Absolute local path of root-relative `rel`, confined under the root."""
        norm = posixpath.normpath(rel.replace(os.sep, "/")) if rel else "."
        if norm.startswith("/") or norm == ".." or norm.startswith("../"):
            raise ScratchError(f"path {rel!r} escapes the scratch directory {self.root}")
        return self.root if norm == "." else self.root / norm

    @property
    def uri(self) -> str:
        """The root as a string path, for :func:`hudi_core.open_table`."""
        return str(self.root)

    def mkdirs(self, rel: str) -> Path:
        """Create a folder (and parents)."""
        p = self.path(rel)
        p.mkdir(parents=True, exist_ok=True)
        return p

    def write_bytes(self, rel: str, data: bytes, mtime_ms: int | None = None) -> Path:
        """Write a whole file (parents created); optionally set its modification time."""
        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        if mtime_ms is not None:
            self.set_mtime(rel, mtime_ms)
        self._changed(rel, "write")
        return p

    @contextmanager
    def writing(self, rel: str) -> Iterator[Path]:
        """The local path for a library that writes the file itself (parquet writers); the observer
        hears of it when the block ends."""
        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        yield p
        self._changed(rel, "write")

    def write_text(self, rel: str, text: str, mtime_ms: int | None = None) -> Path:
        """Write UTF-8 text."""
        return self.write_bytes(rel, text.encode("utf-8"), mtime_ms)

    def append_bytes(self, rel: str, data: bytes) -> Path:
        """Append to a file (log files grow by appended blocks)."""
        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("ab") as fh:
            fh.write(data)
        self._changed(rel, "write")
        return p

    def set_mtime(self, rel: str, mtime_ms: int) -> None:
        """Set a file's modification time (layout-1 completion times come from it)."""
        seconds = mtime_ms / 1000.0
        os.utime(self.path(rel), (seconds, seconds))

    def exists(self, rel: str) -> bool:
        """Whether `rel` exists."""
        return self.path(rel).exists()

    def delete(self, rel: str) -> None:
        """Delete a file or a folder tree under the root (cleans, rollbacks, archival)."""
        p = self.path(rel)
        if p == self.root:
            raise ScratchError("refusing to delete the scratch root itself")
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
        else:
            return
        self._changed(rel, "delete")

    def rename(self, src: str, dst: str) -> None:
        """Rename within the root (instant state transitions)."""
        target = self.path(dst)
        target.parent.mkdir(parents=True, exist_ok=True)
        self.path(src).rename(target)
        self._changed(src, "delete")
        self._changed(dst, "write")
