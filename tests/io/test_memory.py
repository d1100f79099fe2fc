"""One Arrow array or one chunk per column without copying what is one already (`hudi_core.io.memory`)."""

from __future__ import annotations

import pyarrow as pa

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
