"""One Arrow array or one chunk per column without copying what is one already, strings kept as a column, mapped
index pages handed back, and the allocator commands use (`hudi_core.io.memory`)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core.formats.timeline.index_files import read_checked, write_checked
from hudi_core.io import memory
from hudi_core.io.memory import StringColumn, as_array, as_one_chunk


def _data_address(array: pa.Array) -> int:
    return array.buffers()[-1].address


def test_a_lone_chunk_is_not_copied_several_are_joined() -> None:
    names = pa.array([f"part={i % 7}/file-{i}.parquet" for i in range(1000)])
    lone = pa.chunked_array([names])
    assert _data_address(as_array(lone)) == _data_address(names)  # the chunk itself
    assert _data_address(lone.combine_chunks()) != _data_address(names)  # what it avoids: a copy
    assert as_array(names) is names
    several = pa.chunked_array([names.slice(0, 400), names.slice(400)])
    assert as_array(several).equals(names)
    empty = as_array(pa.chunked_array([], pa.string()))
    assert isinstance(empty, pa.Array) and empty.type == pa.string() and len(empty) == 0
    dictionary = pa.chunked_array([names.dictionary_encode()])
    assert as_array(dictionary).equals(names.dictionary_encode())


def test_a_table_of_single_chunks_stays_as_it_is() -> None:
    table = pa.table({"path": pa.array(["a", "b", "c"]), "size": pa.array([1, 2, 3])})
    assert as_one_chunk(table) is table
    split = pa.Table.from_batches(table.to_batches(max_chunksize=1))
    joined = as_one_chunk(split)
    assert joined.equals(table) and all(column.num_chunks == 1 for column in joined.columns)


def _pool_in_child(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != memory.ARROW_POOL_ENV}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2])
    return out.stdout.strip()


def test_commands_allocate_through_malloc_unless_the_user_chose_an_allocator() -> None:
    # Arrow picks its allocator when pyarrow is imported: the engine imports it lazily, after this choice.
    command = ("import contextlib, io\nfrom hudi_core.cli import main\n"
               "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
               "    main(['--help'])\nimport pyarrow as pa\nprint(pa.default_memory_pool().backend_name)")
    assert _pool_in_child(command) == "system"
    assert _pool_in_child(command, ARROW_DEFAULT_MEMORY_POOL="mimalloc") == "mimalloc"
    chosen = "from hudi_core.io.memory import prefer_system_allocator as p\nprint(p())"
    assert _pool_in_child(chosen) == "True"
    assert _pool_in_child(chosen, ARROW_DEFAULT_MEMORY_POOL="jemalloc") == "False"


def test_a_string_column_reads_as_the_tuple_of_its_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(StringColumn, "_BATCH", 4)  # iteration crosses batches
    values = (*(f"part={i % 3}/file-{i}.parquet" for i in range(10)), "é")
    column = StringColumn(pa.chunked_array([pa.array(values[:6]), pa.array(values[6:])]))
    assert len(column) == 11 and tuple(column) == values and list(column) == list(values)
    assert column[0] == values[0] and column[-1] == "é" and column[3:8] == list(values[3:8])
    assert column[::4] == list(values[::4]) and column[20:] == []
    assert column == values and column == list(values) and column != values[:-1] and column != "x"
    assert column == StringColumn(pa.array(values)) and hash(column) == hash(values)
    assert pickle.loads(pickle.dumps(column)) == values
    assert bool(StringColumn(pa.array([], pa.string()))) is False and repr(column) == "StringColumn(11 strings)"


def _rss_file_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssFile:"))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_released_pages_of_a_mapped_index_leave_it_readable(tmp_path: Path) -> None:
    """Pages of a read index file count in the process's memory until released; the table stays valid and reads
    the same after (its pages come back from the page cache)."""
    table = pa.table({"name": [f"{i:08d}-" + "x" * 500 for i in range(60_000)]})  # ~30 MiB
    path = tmp_path / "index.arrow"
    write_checked(tmp_path, path, table)
    mapped = read_checked(path)
    assert pc.sum(pc.utf8_length(mapped["name"])).as_py() == 60_000 * 509  # every page read
    before = _rss_file_kib()
    assert memory.release_mapped_pages() >= 1
    after = _rss_file_kib()
    assert before - after > 20 * 1024, (before, after)
    assert mapped.equals(table)


def test_without_madvise_nothing_is_released(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_checked(tmp_path, tmp_path / "i.arrow", pa.table({"a": [1, 2]}))
    mapped = read_checked(tmp_path / "i.arrow")
    monkeypatch.delattr(memory.mmap, "MADV_DONTNEED")
    assert memory.release_mapped_pages() == 0 and mapped["a"].to_pylist() == [1, 2]
