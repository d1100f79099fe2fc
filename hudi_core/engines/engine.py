"""Engine selection: which executor runs the bulk stages, and the one Spark session behind it.

Choosing the engine, first match wins:

1. ``--engine spark|local`` on the CLI (or the `engine` argument of :func:`get_executor`);
2. the environment variable ``HUDI_INSPECTOR_ENGINE``;
3. the default: ``spark`` (local mode) when PySpark and a Java runtime are present, else ``local``
   with a one-line notice on stderr.

Configuring Spark is the standard way, so one command runs on local, standalone, YARN or
Kubernetes: ``--spark-master URL`` (else ``spark.master`` from ``--spark-conf``, else the
``SPARK_MASTER`` variable, else ``local[*]``), repeated ``--spark-conf KEY=VALUE``, and everything
Spark itself reads (``SPARK_CONF_DIR``/``spark-defaults.conf``, ``SPARK_LOCAL_IP``,
``PYSPARK_SUBMIT_ARGS``, ``PYSPARK_PYTHON`` …).

One :class:`~pyspark.sql.SparkSession` is created per process, on the first bulk stage, and reused
by every executor afterwards (:func:`get_spark_session`); the dashboard wraps
:func:`get_executor` in ``st.cache_resource``. For a local master the workers run this very
interpreter (``PYSPARK_PYTHON`` defaults to ``sys.executable``); for any other master the
``hudi_core`` package is zipped and shipped with ``addPyFile`` so the cluster only needs the
third-party dependencies (pyarrow, fsspec, fastavro) in its Python.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hudi_core.engines.executor import DEFAULT_MIN_ITEMS, MIN_ITEMS_ENV
from hudi_core.engines.progress import ProgressCallback
from hudi_core.errors import HudiInspectError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from hudi_core.engines.executor import Executor

ENGINE_ENV = "HUDI_INSPECTOR_ENGINE"
ENGINES = ("spark", "local")
DEFAULT_MASTER = "local[*]"
#: Smallest stage sent to Spark when the master is local (see :func:`get_executor`); a cluster master
#: keeps the executor's own threshold. `$HUDI_INSPECTOR_SPARK_MIN_ITEMS` overrides both.
LOCAL_MASTER_MIN_ITEMS = 250_000
APP_NAME = "hudi-timeline-inspector"

#: Spark settings applied unless the user sets them (``--spark-conf`` or spark-defaults.conf win).
DEFAULT_SPARK_CONF: dict[str, str] = {
    "spark.ui.showConsoleProgress": "false",  # our own progress bar instead
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}
#: Extra defaults for local masters only: no web UI port, few shuffle partitions, 2 GiB driver.
LOCAL_SPARK_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    # In local mode the driver JVM is the whole cluster: room for one wave of results (spark.py).
    "spark.driver.memory": "2g",
}

_QUIET_LOG4J2 = """\
# hudi-inspector: Spark logs errors only; a failed stage is reported as one line by the inspector.
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
"""


class EngineError(HudiInspectError):
    """An engine cannot be selected or configured (unknown name, no Java, bad --spark-conf)."""


# -- what is available -----------------------------------------------------------------------------


def java_runtime() -> str | None:
    """Path of the `java` launcher Spark would use (``$JAVA_HOME/bin/java`` or `java` on PATH)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("java")


def pyspark_available() -> bool:
    """Whether PySpark can be imported."""
    return importlib.util.find_spec("pyspark") is not None


def spark_unavailable_reason() -> str | None:
    """Why the Spark engine cannot run here (``None`` when it can)."""
    if not pyspark_available():
        return "PySpark is not installed"
    if java_runtime() is None:
        return "no Java runtime found (set JAVA_HOME or put java on PATH; Spark needs Java 17+)"
    return None


def _stderr_notice(message: str) -> None:
    print(f"hudi-inspect: {message}", file=sys.stderr)


def resolve_engine(engine: str | None = None, notice: Callable[[str], None] | None = _stderr_notice) -> str:
    """The engine to use: `engine`, else ``$HUDI_INSPECTOR_ENGINE``, else spark when Java is present."""
    chosen = engine or os.environ.get(ENGINE_ENV) or None
    if chosen is not None:
        chosen = chosen.strip().lower()
        if chosen not in ENGINES:
            raise EngineError(f"unknown engine {chosen!r}: expected one of {', '.join(ENGINES)}")
        if chosen == "spark":
            reason = spark_unavailable_reason()
            if reason:
                raise EngineError(f"the spark engine was requested but {reason}")
        return chosen
    reason = spark_unavailable_reason()
    if reason is None:
        return "spark"
    if notice is not None:
        notice(f"using the local engine: {reason}")
    return "local"


# -- Spark configuration and the one session ---------------------------------------------------------


def parse_spark_conf(pairs: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``["k=v", …]`` (or a mapping) as a dict; raises :class:`EngineError` on a pair without ``=``."""
    if pairs is None:
        return {}
    if isinstance(pairs, Mapping):
        return {str(k): str(v) for k, v in pairs.items()}
    conf: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise EngineError(f"--spark-conf expects KEY=VALUE, got {pair!r}")
        conf[key.strip()] = value
    return conf


def resolve_master(master: str | None, conf: Mapping[str, str]) -> str:
    """`master`, else ``spark.master`` in `conf`, else ``$SPARK_MASTER``, else ``local[*]``."""
    return master or conf.get("spark.master") or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER


def is_local_master(master: str) -> bool:
    """True for ``local``, ``local[N]``, ``local[*]``, ``local-cluster[…]``."""
    return master.startswith("local")


def spark_settings(master: str | None = None, conf: Iterable[str] | Mapping[str, str] | None = None
                   ) -> tuple[str, dict[str, str]]:
    """The master URL and the full configuration a new session would be built with."""
    user = parse_spark_conf(conf)
    url = resolve_master(master, user)
    settings = dict(DEFAULT_SPARK_CONF)
    if is_local_master(url):
        settings.update(LOCAL_SPARK_CONF)
    settings["spark.app.name"] = APP_NAME
    settings.update(user)
    settings["spark.master"] = url
    return url, settings


_SESSION: SparkSession | None = None
_SESSION_MASTER: str | None = None
_SESSION_LOCK = threading.Lock()
_TMP_DIR: tempfile.TemporaryDirectory[str] | None = None


def _tmp_dir() -> Path:
    global _TMP_DIR
    if _TMP_DIR is None:
        _TMP_DIR = tempfile.TemporaryDirectory(prefix="hudi-inspector-spark-")
    return Path(_TMP_DIR.name)


def _quiet_logging(settings: dict[str, str]) -> None:
    """Point the driver JVM at an errors-only log4j2 file unless the user configured logging."""
    java_opts = settings.get("spark.driver.extraJavaOptions", "")
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if "log4j" in java_opts or (conf_dir and (Path(conf_dir) / "log4j2.properties").is_file()):
        return
    path = _tmp_dir() / "log4j2.properties"
    path.write_text(_QUIET_LOG4J2)
    settings["spark.driver.extraJavaOptions"] = f"{java_opts} -Dlog4j2.configurationFile=file:{path}".strip()


def _python_for_workers(master: str, settings: Mapping[str, str]) -> None:
    """Workers must run a Python with pyarrow and hudi_core: PySpark reads ``PYSPARK_PYTHON``."""
    explicit = settings.get("spark.pyspark.python")
    if explicit:
        os.environ["PYSPARK_PYTHON"] = explicit
    elif not os.environ.get("PYSPARK_PYTHON") and is_local_master(master):
        os.environ["PYSPARK_PYTHON"] = sys.executable
    if is_local_master(master):
        # Local workers import hudi_core from this checkout even when it is not pip-installed.
        source_root = str(Path(__file__).resolve().parent.parent.parent)
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if source_root not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([source_root, *paths])


def package_zip() -> Path:
    """A zip of the ``hudi_core`` package with its data files (for ``addPyFile``), built once per process."""
    target = _tmp_dir() / "hudi_core.zip"
    if target.is_file():
        return target
    root = Path(__file__).resolve().parent.parent
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, Path("hudi_core") / path.relative_to(root))
    return target


def get_spark_session(master: str | None = None, conf: Iterable[str] | Mapping[str, str] | None = None
                      ) -> SparkSession:
    """The process's one Spark session, created on the first call with `master` and `conf`.

    Later calls return the same session; a later call asking for a different master gets the
    existing session and a one-line notice on stderr (Spark allows one context per process).
    """
    global _SESSION, _SESSION_MASTER
    reason = spark_unavailable_reason()
    if reason:
        raise EngineError(f"cannot start Spark: {reason}")
    url, settings = spark_settings(master, conf)
    with _SESSION_LOCK:
        if _SESSION is not None:
            if master and master != _SESSION_MASTER:
                _stderr_notice(f"reusing the Spark session on {_SESSION_MASTER} (asked for {master})")
            return _SESSION
        from pyspark.sql import SparkSession

        _python_for_workers(url, settings)
        _quiet_logging(settings)
        builder = SparkSession.builder
        for key, value in settings.items():
            builder = builder.config(key, value)
        try:
            session = builder.getOrCreate()
        except Exception as exc:
            raise EngineError(f"cannot start Spark on {url}: {str(exc).strip().splitlines()[-1][:300]}") from exc
        session.sparkContext.setLogLevel("ERROR")
        if not is_local_master(url):
            session.sparkContext.addPyFile(str(package_zip()))
        _SESSION, _SESSION_MASTER = session, url
        return session


# -- executors ----------------------------------------------------------------------------------------


def get_executor(engine: str | None = None, master: str | None = None,
                 conf: Iterable[str] | Mapping[str, str] | None = None, progress: ProgressCallback | None = None,
                 notice: Callable[[str], None] | None = _stderr_notice) -> Executor:
    """The executor for `engine` (see :func:`resolve_engine`), configured with `master` and `conf`.

    No JVM starts here: a Spark executor creates (or reuses) the session on its first bulk stage.
    `progress` becomes the executor's default progress callback.
    """
    chosen = resolve_engine(engine, notice)
    if chosen == "local":
        from hudi_core.engines.local import ReportingLocalExecutor  # pyarrow: not at start-up

        return ReportingLocalExecutor(progress=progress)
    from hudi_core.engines.spark import SparkExecutor

    settings = parse_spark_conf(conf)  # validate now, not at the first stage
    return SparkExecutor(lambda: get_spark_session(master, settings), progress=progress,
                         min_items=spark_min_items(master, settings))


def spark_min_items(master: str | None, settings: Mapping[str, str]) -> int:
    """Items below which a stage runs on the driver: `$HUDI_INSPECTOR_SPARK_MIN_ITEMS`, else
    :data:`LOCAL_MASTER_MIN_ITEMS` on a local master, else the executor's default (1,000). Known without
    importing the Spark executor (and pyarrow with it)."""
    env = os.environ.get(MIN_ITEMS_ENV, "").strip()
    if env.isdigit():
        return int(env)
    # On a local master a Spark job runs on the same cores as the thread pool and adds the JVM's start-up and
    # the Python workers' forks: `duplicates` on the M table took 49.5 s on Spark local[*] against 12.9 s on
    # threads (2 cores). Spark pays there only for very large stages.
    return LOCAL_MASTER_MIN_ITEMS if is_local_master(resolve_master(master, settings)) else DEFAULT_MIN_ITEMS


# -- executors made on first use ------------------------------------------------------------------


class DeferredExecutor:
    """An executor made on first use. The engine is resolved and ``--spark-conf`` validated at once
    (errors stay usage errors), but the executor's module, and pyarrow with it, is imported only when
    a bulk stage runs: `info` and `timeline` never run one (a third of their start-up)."""

    def __init__(self, name: str, make: Callable[[], Executor], min_items: int | None = None) -> None:
        self.name = name
        self._make = make
        self._real: Executor | None = None
        if min_items is not None:
            # Known up front, so deciding to run a small stage inline does not import the executor.
            self.min_items = min_items

    @property
    def real(self) -> Executor:
        if self._real is None:
            self._real = self._make()
        return self._real

    def map_batches(self, *args: Any, **kwargs: Any) -> Any:
        return self.real.map_batches(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.real, attr)





def describe_executor(executor: Any) -> dict[str, Any]:
    """Engine facts for reports: name and, for a started Spark session, master and parallelism."""
    info: dict[str, Any] = {"engine": getattr(executor, "name", type(executor).__name__)}
    if isinstance(executor, DeferredExecutor):
        executor = executor._real  # None until a stage ran: then there is no session to describe
    session = getattr(executor, "_session", None)
    if session is not None:
        sc = session.sparkContext
        info.update(spark_version=session.version, master=sc.master, default_parallelism=sc.defaultParallelism)
    return info
