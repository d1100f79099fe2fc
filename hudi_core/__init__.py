"""Hudi Timeline Inspector engine: read-only access to Apache Hudi tables and their timelines."""

from hudi_core.errors import Finding, HudiInspectError
from hudi_core.table import EMULATED_HUDI_RELEASE, HudiTable, open_table

__all__ = ["EMULATED_HUDI_RELEASE", "Finding", "HudiInspectError", "HudiTable", "open_table"]
__version__ = "0.1.0"
