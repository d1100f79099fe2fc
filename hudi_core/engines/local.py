"""The local thread-pool executor with progress reporting: the default engine's executor, and the
Spark executor's driver-side fallback for small stages (so both import it from here)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

import pyarrow as pa

from hudi_core.engines.executor import BatchFn, LocalExecutor, _batches, _concat
from hudi_core.engines.progress import ProgressCallback, StageProgress, resolve_callback, stage_label
from hudi_core.io.storage import StorageSpec


class ReportingLocalExecutor(LocalExecutor):
    """The local thread-pool executor, reporting progress after every finished batch."""

    def __init__(self, max_workers: int | None = None, progress: ProgressCallback | None = None) -> None:
        super().__init__(max_workers)
        self.progress = progress

    def map_batches(self, fn: BatchFn, spec: StorageSpec, items: Sequence[str], batch_size: int,
                    schema: pa.Schema) -> pa.Table:
        """Like :meth:`LocalExecutor.map_batches`; events are emitted on the calling thread."""
        callback = resolve_callback(self)
        if callback is None:
            return super().map_batches(fn, spec, items, batch_size, schema)
        tracker = StageProgress(callback, stage_label(fn), len(items), self.name)
        batches = _batches(items, batch_size)
        results: list[pa.Table | None] = [None] * len(batches)
        done = 0
        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            futures = {pool.submit(fn, spec, b): i for i, b in enumerate(batches)}
            for future in as_completed(futures):
                index = futures[future]
                results[index] = future.result()
                done += len(batches[index])
                tracker.update(done)
        tracker.finish()
        return _concat([r for r in results if r is not None], schema)
