"""A tree level of many local folders is listed in worker processes: the same partitions, files and findings as
listing it in this thread, damage included (a name that is not UTF-8, a FIFO)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from hudi_core.engines import executor as executors
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.table.listing import storage as listing


def _listing(base: Path) -> tuple[dict[str, list[Any]], list[tuple[str, str, str]]]:
    found: list[Any] = []
    listed = listing.discover_partitions(ReadOnlyStorage(str(base)).spec, None, findings=found)
    return listed, [(f.code, f.path, f.message) for f in found]


def test_processes_list_as_this_thread_does(builtin_table: Any, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "t"
    shutil.copytree(builtin_table("hudi7779_case_b", 9), base)
    first = next(p.parent for p in base.rglob(".hoodie_partition_metadata*") if ".hoodie/" not in str(p))
    for name in ("copy=1", "copy=2", "year=2024/month=01", "year=2024/month=02"):  # folders on two levels
        shutil.copytree(first, base / name)
    partitions = sorted({p.parent for p in base.rglob(".hoodie_partition_metadata*") if ".hoodie/" not in str(p)})
    assert len(partitions) >= 5
    part = partitions[0]
    with open(os.path.join(os.fsencode(part), b"bad\xff.parquet"), "wb") as fh:
        fh.write(b"x")
    os.mkfifo(partitions[-1] / "pipe.parquet")
    for k in range(3):  # more folders at the level below the root: partitions' siblings with no metadata file
        (base / f"not-a-partition-{k}").mkdir()

    in_thread = _listing(base)
    assert in_thread[1], "the damage makes findings"
    went: list[int] = []
    real = executors.cpu_batch_results

    def spy(*args: Any, **kwargs: Any) -> Any:
        went.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(listing, "cpu_batch_results", spy)
    monkeypatch.setattr(listing, "PROCESS_LISTING_MIN_FOLDERS", 1)
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "2")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    in_processes = _listing(base)
    assert went, "the level went to worker processes"
    assert in_processes[0] == in_thread[0]
    assert sorted(in_processes[1]) == sorted(in_thread[1])


def test_remote_storage_is_never_listed_in_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only local folders go to processes (an object store's LISTs are I/O: the executor's threads overlap them)."""
    monkeypatch.setattr(listing, "PROCESS_LISTING_MIN_FOLDERS", 1)
    monkeypatch.setattr(listing, "_list_level_in_processes", lambda *a: pytest.fail("listed in processes"))
    monkeypatch.setattr(listing, "_list_level_inline",
                        lambda spec, folders, findings: listing.listing_schema().empty_table())
    assert listing.discover_partitions(ReadOnlyStorage("memory://bucket/t").spec, None) == {}


def _dying_batch(spec: Any, items: list[str]) -> Any:
    """Rows of `items`; a worker process handed item "3" dies (the caller's own process never does)."""
    import pyarrow as pa

    if "3" in items and str(os.getpid()) != os.environ.get("LISTING_TEST_PARENT"):
        os._exit(1)
    return pa.table({"item": items, "pid": [os.getpid()] * len(items)})


def test_batches_a_broken_pool_did_not_return_run_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that dies breaks the pool: the batches already returned are kept, the rest run in this process,
    and every item comes back once, in order."""
    from hudi_core.io.storage import StorageSpec

    monkeypatch.setenv("LISTING_TEST_PARENT", str(os.getpid()))
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    items = [str(k) for k in range(8)]
    tables = list(executors.cpu_batch_results(_dying_batch, StorageSpec.of(str(tmp_path)), items, 1))
    assert [t["item"].to_pylist()[0] for t in tables] == items
    assert os.getpid() in {t["pid"].to_pylist()[0] for t in tables}


def test_a_command_that_needs_it_no_more_lets_the_storage_listing_go(builtin_table: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a metadata-table listing is checked against storage, storage's listing is kept for later readers (the
    doctor's missing and orphan files) unless the table is told it is not needed: then it is let go after the
    check, with the same view and findings."""
    from hudi_core.table import open_table

    base = builtin_table("hudi7779_case_b", 9, metadata_table=True)
    kept = open_table(str(base))
    assert kept.listing_choice()[0] == "metadata" and kept.storage_check
    kept_view = kept.fs_view()
    assert kept._storage_source()._whole is not None
    let_go = open_table(str(base))
    let_go.keep_storage_listing = False
    view = let_go.fs_view()
    assert let_go._storage_source()._whole is None
    assert view.listing_differences == kept_view.listing_differences
    assert [f.message for f in view.findings] == [f.message for f in kept_view.findings]
    assert let_go.storage_listing().partitions == kept.storage_listing().partitions  # listed again when asked
