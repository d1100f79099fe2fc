"""Strings gathered from byte ranges of one buffer (the column-wise decoders' strings) against plain slicing."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from hudi_core.formats.avro import vector as av


def _expected(buf: bytes, starts: np.ndarray, lengths: np.ndarray, valid: np.ndarray | None) -> list[str | None]:
    return [buf[s:s + n].decode("utf-8") if valid is None or ok else None
            for s, n, ok in zip(starts.tolist(), lengths.tolist(),
                                [True] * starts.size if valid is None else valid.tolist(), strict=True)]


def _ranges(rng: np.random.Generator, size: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Ranges of every length from 0 to 40 bytes, some ending exactly at the buffer's end."""
    lengths = rng.integers(0, min(41, size + 1), n).astype(np.int64)
    starts = (rng.random(n) * (size - lengths + 1)).astype(np.int64)
    tail = rng.random(n) < 0.1
    starts[tail] = size - lengths[tail]
    return starts, lengths


@pytest.mark.parametrize("size", [0, 1, 3, 4, 11, 12, 13, 200, 5000])
def test_gather_strings_equals_slicing(size: int) -> None:
    rng = np.random.default_rng(size)
    raw = bytes(rng.integers(ord("a"), ord("z") + 1, size, dtype=np.uint8))
    buf = np.frombuffer(raw, dtype=np.uint8)
    starts, lengths = _ranges(rng, size, 3000)
    got = av.gather_strings(buf, starts, lengths, None)
    assert got.type == pa.string()
    assert got.to_pylist() == _expected(raw, starts, lengths, None)
    valid = rng.random(starts.size) < 0.7
    assert av.gather_strings(buf, starts, lengths, valid).to_pylist() == _expected(raw, starts, lengths, valid)


def test_gather_strings_multibyte_values() -> None:
    words = ["part=00001", "é", "日本語のパーティション", "", "x" * 12, "y" * 13, "part=00001"]
    raw = "".join(words).encode("utf-8")
    lengths = np.array([len(w.encode("utf-8")) for w in words], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    got = av.gather_strings(np.frombuffer(raw, dtype=np.uint8), starts, lengths, None)
    assert got.to_pylist() == words
    assert got.unique().to_pylist() == ["part=00001", "é", "日本語のパーティション", "", "x" * 12, "y" * 13]


def test_gather_strings_refuses_bytes_that_are_not_utf8() -> None:
    raw = b"ok\xff\xfegood"
    with pytest.raises(av.VectorDecodeError, match="not UTF-8"):
        av.gather_strings(np.frombuffer(raw, dtype=np.uint8), np.array([0, 2], dtype=np.int64),
                          np.array([2, 2], dtype=np.int64), None)
