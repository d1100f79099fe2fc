"""The engine options every table command takes (`--engine`, `--spark-master`, `--spark-conf`) and the
executor they ask for (see :mod:`hudi_core.engines.engine`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from hudi_core.engines.engine import (
    ENGINE_ENV,
    ENGINES,
    DeferredExecutor,
    get_executor,
    parse_spark_conf,
    resolve_engine,
    spark_min_items,
)
from hudi_core.engines.progress import cli_progress

if TYPE_CHECKING:
    from hudi_core.engines.executor import Executor


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--engine``, ``--spark-master`` and repeated ``--spark-conf`` to a (sub)command."""
    parser.add_argument("--engine", choices=ENGINES, default=None,
                        help=f"executor for bulk work (default: ${ENGINE_ENV}, else spark when Java is present)")
    parser.add_argument("--spark-master", metavar="URL", default=None,
                        help="Spark master: local[*], spark://host:7077, yarn, k8s://… (default: $SPARK_MASTER)")
    parser.add_argument("--spark-conf", action="append", metavar="KEY=VALUE", default=None,
                        help="Spark configuration property; repeatable")


def executor_from_args(args: argparse.Namespace) -> Executor:
    """The executor a CLI command asked for, with a progress bar on a terminal (none for JSON)."""
    engine, master, conf = getattr(args, "engine", None), getattr(args, "spark_master", None), getattr(
        args, "spark_conf", None)
    chosen = resolve_engine(engine, _notice)
    min_items = None
    if chosen == "spark":
        min_items = spark_min_items(master, parse_spark_conf(conf))  # a bad --spark-conf fails now
    progress = cli_progress(getattr(args, "format", "table"))
    return DeferredExecutor(chosen, lambda: get_executor(chosen, master, conf, progress=progress, notice=None),
                            min_items=min_items)


def _notice(message: str) -> None:
    import sys

    print(f"hudi-inspect: {message}", file=sys.stderr)
