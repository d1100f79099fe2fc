"""A worker process's large result is handed over in shared memory (written once, mapped by the caller), its
file deleted once taken; small results, and any that shared memory has no room for, travel through the pipe."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_core.engines import executor as executors
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.table.listing.storage import list_folders_batch

needs_shm = pytest.mark.skipif(not os.path.isdir(executors.SHARED_MEMORY_DIR), reason="no /dev/shm here")


def _table(rows: int) -> pa.Table:
    return pa.table({"n": pa.array(range(rows), pa.int64()),
                     "name": pa.array([f"part={k % 7}/file-{k:012d}.parquet" for k in range(rows)])})


@needs_shm
def test_a_large_result_goes_through_shared_memory_and_is_deleted_once_taken() -> None:
    table = _table(60_000)
    assert table.nbytes >= executors.MAPPED_RESULT_MIN_BYTES
    handed = executors.hand_over(table)
    assert isinstance(handed, executors.MappedResult)
    assert os.path.dirname(handed.path) == executors.SHARED_MEMORY_DIR and os.path.exists(handed.path)
    taken = executors.taken_over(handed)
    assert taken.equals(table)
    assert not os.path.exists(handed.path)
    assert taken["name"][59_999].as_py() == "part=2/file-000000059999.parquet"  # readable after the file is gone


def test_a_small_result_and_one_without_room_travel_as_they_are(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    small = _table(10)
    assert executors.hand_over(small) is small
    large = _table(60_000)
    monkeypatch.setattr(executors, "SHARED_MEMORY_DIR", str(tmp_path / "absent"))
    assert executors.hand_over(large) is large
    monkeypatch.setattr(executors, "SHARED_MEMORY_DIR", str(tmp_path))

    class Tiny:
        f_bavail, f_frsize = 1, 4096

    monkeypatch.setattr(executors.os, "statvfs", lambda path: Tiny())
    assert executors.hand_over(large) is large
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_results_never_taken_are_removed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(executors, "SHARED_MEMORY_DIR", str(tmp_path))
    mine = tmp_path / f"hudi-inspector-result-{os.getpid()}-abc.arrow"
    running = tmp_path / f"hudi-inspector-result-{os.getppid()}-abc.arrow"  # a caller still running
    gone = tmp_path / "hudi-inspector-result-999999999-abc.arrow"  # no such process
    for path in (mine, running, gone):
        path.write_bytes(b"x")
    executors.remove_unclaimed()
    assert not mine.exists() and running.exists() and not gone.exists()


@executors.results_in_shared_memory
def _names_batch(spec: Any, items: list[str]) -> pa.Table:
    """A marked batch function: a row per name of `items`' folders (a listing's columns, as a list would give)."""
    return pa.concat_tables([list_folders_batch(spec, [item]) for item in items])


@needs_shm
def test_a_worker_process_hands_a_marked_stage_over_in_shared_memory(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "part=1"
    folder.mkdir()
    for k in range(14_000):
        (folder / f"{k:08d}-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee-0_0-1-1_20250101000000000.parquet").touch()
    spec = ReadOnlyStorage(str(tmp_path)).spec
    kinds: list[type] = []
    original = executors.taken_over

    def recording(result: Any) -> pa.Table:
        kinds.append(type(result))
        return original(result)

    monkeypatch.setattr(executors, "taken_over", recording)
    expected = list_folders_batch(spec, ["part=1"])
    assert expected.num_rows == 14_000 and expected.nbytes >= executors.MAPPED_RESULT_MIN_BYTES
    marked = pa.concat_tables(list(executors.cpu_batch_results(_names_batch, spec, ["part=1"], 1)))
    assert marked.equals(expected)
    unmarked = pa.concat_tables(list(executors.cpu_batch_results(list_folders_batch, spec, ["part=1"], 1)))
    assert unmarked.equals(expected)
    assert kinds == [executors.MappedResult, pa.Table]  # an unmarked stage's result came through the pipe
    mine = f"hudi-inspector-result-{os.getpid()}-"
    assert [n for n in os.listdir(executors.SHARED_MEMORY_DIR) if n.startswith(mine)] == []
