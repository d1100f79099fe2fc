"""Analysis: what the inspector concludes from a table. The cleaner and archiver dry runs, markers (ECTR,
EarliestCommitToNotArchive, savepoints, replaced file groups), archival safety, the log-block inventory and
duplicate sequences (HUDI-6758), the doctor, file-group history, diffs, schema history, phase summaries and the
watch of a followed table.

Imports the table layer and below (:mod:`hudi_core.table`, :mod:`hudi_core.formats`, :mod:`hudi_core.io`,
:mod:`hudi_core.engines`); never a face (:mod:`hudi_core.inspect`, :mod:`hudi_core.cli`,
:mod:`hudi_core.dashboard`) or the scenario writers.
"""
