"""One Arrow array or one chunk per column without copying what is one already, and the allocator commands use
(`hudi_core.io.memory`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from hudi_core.io import memory
from hudi_core.io.memory import as_array, as_one_chunk


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
