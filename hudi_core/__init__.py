"""Hudi Timeline Inspector engine: read-only access to Apache Hudi tables and their timelines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hudi_core.errors import Finding, HudiInspectError
from hudi_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hudi_core.inspect import TableInspector
    from hudi_core.table import EMULATED_HUDI_RELEASE, HudiTable, open_table

#: Names imported on first use: `import hudi_core` (and so the CLI's start-up, `--help` included)
#: must not pay for pyarrow and fsspec.
__getattr__ = lazy_getattr(__name__, {"EMULATED_HUDI_RELEASE": "hudi_core.table", "HudiTable": "hudi_core.table",
                                      "open_table": "hudi_core.table", "TableInspector": "hudi_core.inspect"})

__all__ = ["EMULATED_HUDI_RELEASE", "Finding", "HudiInspectError", "HudiTable", "TableInspector", "open_table"]
__version__ = "0.1.0"
