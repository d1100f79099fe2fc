"""The storage layer refuses every write, delete and move, and reads exactly what is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_core.errors import ReadOnlyViolation, StorageError
from hudi_core.io.storage import ReadOnlyStorage, StorageSpec


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.bin").write_bytes(bytes(range(100)))
    (tmp_path / "g.txt").write_text("hello")
    return tmp_path


@pytest.mark.parametrize(
    "method",
    ["write", "write_bytes", "pipe", "put", "rm", "rm_file", "delete", "remove", "mv", "move", "rename",
     "cp", "copy", "touch", "mkdir", "makedirs", "rmdir", "unlink", "truncate", "append"],
)
def test_every_mutation_is_refused(root: Path, method: str) -> None:
    storage = ReadOnlyStorage(str(root))
    with pytest.raises(ReadOnlyViolation, match="never changes a table"):
        getattr(storage, method)("g.txt", "a/f.bin")
    assert (root / "g.txt").read_text() == "hello"
    assert (root / "a" / "f.bin").exists()


@pytest.mark.parametrize("mode", ["wb", "ab", "w", "r+b", "xb"])
def test_open_for_writing_is_refused(root: Path, mode: str) -> None:
    storage = ReadOnlyStorage(str(root))
    with pytest.raises(ReadOnlyViolation):
        storage.open("g.txt", mode)
    assert (root / "g.txt").read_text() == "hello"


def test_no_public_handle_to_the_filesystem(root: Path) -> None:
    storage = ReadOnlyStorage(str(root))
    assert not hasattr(storage, "fs")
    with pytest.raises(AttributeError):
        storage.filesystem  # noqa: B018


def test_list_stat_read_and_range(root: Path) -> None:
    storage = ReadOnlyStorage(str(root))
    listing = storage.list("")
    assert [(i.path, i.is_dir) for i in listing] == [("a", True), ("g.txt", False)]
    info = storage.stat("a/f.bin")
    assert info.size == 100 and info.mtime_ms is not None and info.name == "f.bin"
    assert storage.read("g.txt") == b"hello"
    assert storage.read_range("a/f.bin", 10, 5) == bytes([10, 11, 12, 13, 14])
    assert storage.read_range("a/f.bin", 98, 10) == bytes([98, 99])
    assert storage.read_range("a/f.bin", 0, 100) == bytes(range(100))
    assert storage.read_range("a/f.bin", 100, 5) == storage.read_range("a/f.bin", 200, 5) == b""
    assert storage.read_range("a/f.bin", 5, 0) == b""
    assert storage.list("missing") == []
    assert [f.path for f in storage.walk_files("")] == ["a/f.bin", "g.txt"]


def test_paths_cannot_escape_the_root(root: Path) -> None:
    storage = ReadOnlyStorage(str(root / "a"))
    for bad in ["../g.txt", "/etc/passwd", "x/../../g.txt", "file:///etc/passwd"]:
        with pytest.raises(StorageError):
            storage.read(bad)


def test_missing_file_is_a_storage_error(root: Path) -> None:
    storage = ReadOnlyStorage(str(root))
    with pytest.raises(StorageError, match="does not exist"):
        storage.read("nope")
    with pytest.raises(StorageError, match="does not exist"):
        storage.stat("nope")


def test_spec_round_trips_and_memory_filesystem() -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/tbl/x/y.bin", b"abc")
    spec = StorageSpec.of("memory://tbl", {})
    storage = spec.open()
    assert storage.read("x/y.bin") == b"abc"
    assert storage.child("x").read("y.bin") == b"abc"
    assert storage.uri_of("x/y.bin") == "memory://tbl/x/y.bin"
    with pytest.raises(ReadOnlyViolation):
        storage.rm("x/y.bin")
    assert fs.cat("/tbl/x/y.bin") == b"abc"


@pytest.mark.parametrize("uri", ["/tmp/x", "/tmp/x/", "relative/dir", "./relative", ".", "~/t", "file:///tmp/y",
                                 "file:///tmp/y/", "local:///tmp/z", "/"])
def test_local_root_is_fsspecs_root(uri: str) -> None:
    """A local path opens without importing fsspec; its root is exactly fsspec's."""
    from fsspec.core import url_to_fs

    from hudi_core.io.storage import local_root

    assert local_root(uri) == (url_to_fs(uri)[1].rstrip("/") or "/")


def test_local_root_leaves_other_urls_to_fsspec() -> None:
    from hudi_core.io.storage import local_root

    assert local_root("s3://bucket/t") is None
    assert local_root("memory://t") is None
    assert local_root("simplecache::s3://b/t") is None
    assert local_root("/tmp/t", {"auto_mkdir": True}) is None


def test_whole_file_reads_at_the_limit_and_of_a_growing_file(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole-file read takes the file's size as its buffer: the bytes are the same at, below and over the
    limit, and a file that grew after its size was taken is read on to its end (or one byte past the limit)."""
    import os
    import types

    from hudi_core.io import backends

    storage = ReadOnlyStorage(str(root))
    data = bytes(range(100))
    assert storage.read("a/f.bin") == data and storage.read("a/f.bin", max_bytes=100) == data
    with pytest.raises(StorageError, match="larger than the 99-byte limit"):
        storage.read("a/f.bin", max_bytes=99)
    (root / "empty").write_bytes(b"")
    assert storage.read("empty") == b""

    real_fstat = os.fstat

    def smaller(fd: int) -> types.SimpleNamespace:  # the size as it was before the file grew to 100 bytes
        st = real_fstat(fd)
        return types.SimpleNamespace(st_mode=st.st_mode, st_size=40)

    monkeypatch.setattr(backends.os, "fstat", smaller)
    assert storage.read("a/f.bin") == data
    with pytest.raises(StorageError, match="larger than the 60-byte limit"):
        storage.read("a/f.bin", max_bytes=60)
