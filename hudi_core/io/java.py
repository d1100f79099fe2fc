"""Java's rules that Hudi's bytes and orders inherit: `String.hashCode()`, `Long.hashCode()` and the
iteration order of a `java.util.HashMap`.

A `HashMap` with the default capacity (16) doubles whenever its size passes 0.75 of the capacity; a key
lands in bucket ``spread(hashCode) & (capacity - 1)`` (``spread(h) = h ^ (h >>> 16)``) and iteration
walks the buckets in order, each in insertion order (a resize splits a bucket keeping that order). A
bucket becomes a tree only at eight entries in a table of 64 buckets or more: that needs keys chosen to
collide, so it is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

K = TypeVar("K")

#: Below this many keys the hashes are computed one by one (numpy pays off only on large maps).
_VECTOR_MIN = 256


def string_hash(text: str) -> int:
    """`String.hashCode()` (over UTF-16 code units) as a 32-bit unsigned int."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


def string_hashes(texts: Sequence[str]) -> list[int]:
    """:func:`string_hash` of each text; ASCII texts of a long list computed together, length by length
    (the large file maps of generated tables)."""
    if len(texts) < _VECTOR_MIN:
        return [string_hash(t) for t in texts]
    import numpy as np

    out = [0] * len(texts)
    by_length: dict[int, list[int]] = {}
    for i, t in enumerate(texts):
        if t.isascii():
            by_length.setdefault(len(t), []).append(i)
        else:
            out[i] = string_hash(t)
    for length, idx in by_length.items():
        if length == 0:
            continue
        codes = np.frombuffer("".join(texts[i] for i in idx).encode("ascii"), dtype=np.uint8)
        codes = codes.reshape(len(idx), length).astype(np.uint32)
        powers = np.array([pow(31, length - 1 - j, 1 << 32) for j in range(length)], dtype=np.uint32)
        hashes = (codes * powers).sum(axis=1, dtype=np.uint32)
        for i, h in zip(idx, hashes.tolist(), strict=True):
            out[i] = int(h)
    return out


def long_hash(value: int) -> int:
    """`Long.hashCode()` as a 32-bit unsigned int: the two halves of the 64-bit value xor-ed."""
    u = value & 0xFFFFFFFFFFFFFFFF
    return (u ^ (u >> 32)) & 0xFFFFFFFF


def hashmap_order(keys: Iterable[K], hashes: Callable[[Sequence[K]], list[int]]) -> list[K]:
    """The iteration order of a `java.util.HashMap` into which `keys` were put in this order (a key put
    again keeps its first place); `hashes` gives the keys' 32-bit unsigned `hashCode()`s."""
    ordered = list(dict.fromkeys(keys))
    capacity = 16
    while len(ordered) > capacity * 3 // 4:  # resize when the size passes the 0.75 threshold
        capacity *= 2
    mask = capacity - 1
    buckets = [(h ^ (h >> 16)) & mask for h in hashes(ordered)]
    # sorted() is stable: insertion order within a bucket is kept.
    return [k for _, k in sorted(zip(buckets, ordered, strict=True), key=lambda bk: bk[0])]


def string_hashmap_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a `HashMap<String, …>` filled with `keys` in this order."""
    return hashmap_order(keys, string_hashes)


def long_hashmap_order(keys: Iterable[int]) -> list[int]:
    """The iteration order of a `HashMap<Long, …>` filled with `keys` in this order."""
    return hashmap_order(keys, lambda ks: [long_hash(k) for k in ks])
