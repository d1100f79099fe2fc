"""Rows made as they are written: the services' long answers (a clean plan's decisions) for the CLI's JSON
writer, which writes them chunk by chunk."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class LazyRows(Sequence[Any]):
    """A long list made on demand: `fn(item)` of each item of `items`, built when read. The CLI's JSON writer
    (`hudi_core.cli.output.write_json`) writes it chunk by chunk, so its dicts never exist all at once (a
    million clean decisions as dicts took 0.5 GB)."""

    def __init__(self, items: Sequence[Any], fn: Callable[[Any], Any]) -> None:
        self.items = items
        self.fn = fn

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self.fn(x) for x in self.items[index]]
        return self.fn(self.items[index])
