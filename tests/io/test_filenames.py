"""File-name grammar (`hudi_core.io.filenames`): the base-file fast path answers exactly as the grammar's regex."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_core.io.filenames import _BASE_FILE, base_file_parts


def _by_regex(name: str) -> tuple[str, ...] | None:
    if name.startswith("."):
        return None
    match = _BASE_FILE.match(name)
    return None if match is None else match.groups()


def test_base_file_parts_examples() -> None:
    assert base_file_parts("fid-0_1-2-3_20240101000000000.parquet") == (
        "fid-0", "1-2-3", "20240101000000000", ".parquet")
    assert base_file_parts("a_b_123.parq_uet") == ("a", "b", "123", ".parq_uet")  # the suffix may hold "_"
    assert base_file_parts("x_y_1.a.b") == ("x", "y", "1", ".a.b")
    for name in ("a__1.p", "_b_1.p", "a_b_.p", "a_b_12", "a_b_12.", "a_b_c_1.p", "a_b_1\u0663.p", ".a_b_1.p"):
        assert base_file_parts(name) is None, name
    assert base_file_parts("a_b_1.p\n") == _by_regex("a_b_1.p\n")  # regex `$` before a final newline


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="ab_.01\u0663\n-x", max_size=14))
def test_base_file_parts_equals_the_regex(name: str) -> None:
    assert base_file_parts(name) == _by_regex(name)


def test_data_file_mask_answers_as_the_parsers() -> None:
    from hudi_core.io.filenames import base_file_parts, data_file_mask, parse_log_file_name

    fid = "5a5a1f5e-7d3c-4f6b-9a44-8c0f6e4c0b21-0"
    names = [f"{fid}_0-1-1_20240101000000000.parquet", f"{fid}_0-1-1_20240101000000000.ORC",
             f"{fid}_0-1-1_2024010100000000x.parquet", f"{fid}_0-1-1_٢٠٢٤.parquet",
             f"{fid}_0-1-1_20240101000000000.parquet\n", "x_y_z_1.parquet", f".{fid}_20240101000000000.log.1_0-1-1",
             f".{fid}_20240101000000000.log.1_0-1-1.cdc", f".{fid}_20240101000000000.archive.1_0-1-1",
             f".{fid}_20240101000000000.log.١_0-1-1", ".legacy.id_with_dots_20240101000000000.log.3_1-2-3",
             ".hoodie_partition_metadata", "README.txt", "", f".{fid}_20240101000000000.log.1234567890_0-1-1"]
    bases = [base_file_parts(n) is not None for n in names]
    assert data_file_mask(names, logs=False) == bases
    assert data_file_mask(names) == [b or parse_log_file_name(n) is not None for b, n in zip(bases, names, strict=True)]
    assert data_file_mask(names) == [True, True, False, False, True, False, True, True, True, True, True, False,
                                     False, False, True]


def test_base_names_are_posixpath_basename_over_arrow() -> None:
    import posixpath

    import pyarrow as pa

    from hudi_core.io.filenames import base_names

    paths = ["p=1/a.parquet", "a.parquet", "p=1/", "", "x/y/.f.log.1_0-1-1", "we\nird/name\nx.parquet", "/abs",
             "ü/ñ.parquet"]
    assert base_names(pa.array(paths)).to_pylist() == [posixpath.basename(p) for p in paths]
    assert base_names(pa.chunked_array([paths[:3], paths[3:]])).to_pylist() == [posixpath.basename(p) for p in paths]
