"""Executors for bulk work: the same pure batch functions run on threads or on Spark."""

from hudi_core.pipeline.executor import Executor, LocalExecutor, run_batches

__all__ = ["Executor", "LocalExecutor", "run_batches"]
