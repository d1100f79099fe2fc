"""Cleaner and archiver configuration: Hudi's own keys, both 0.x and 1.x names, with defaults.

Keys and defaults follow `HoodieCleanConfig`, `HoodieArchivalConfig` and `HoodieCompactionConfig`
of Hudi 1.1.x (spec `02` §4 and §5.1). 1.x renamed several cleaner keys to `hoodie.clean.*` and
keeps the old names as alternatives, so both are accepted.

Configuration comes as users have it: `--conf KEY=VALUE`, Java properties files,
`hudi-defaults.conf` (whitespace or ``=`` separated) and Spark-style `spark.hadoop.hoodie.*` keys
(:func:`read_conf_file`). Keys that do not affect cleaning or archival are accepted and listed as
ignored (:attr:`ServiceConfig.ignored`); a key within two edits of a known key is refused, naming the
key it resembles: a typo must never silently fall back to a default in a dry run.

Two optional archiver guards come with Hudi 1.2 (spec `02` §3): A7 (`TimelineArchiverV1`, PR #18380, key
verified) and A6 (`TimelineArchiverV2`, HUDI-9634: the rule is verified, its key's spelling is not). A key
whose spelling is unverified carries the reason in :attr:`ConfigKey.unverified`, and a plan that sets it
lists it under `unverified_config_keys`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hudi_core.errors import HudiInspectError
from hudi_core.formats.timeline import lsm_rules

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
CLEANER_POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)
#: `HoodieMetadataConfig.DEFAULT_METADATA_CLEANER_COMMITS_RETAINED`: the floor of the metadata table's retention.
METADATA_CLEANER_COMMITS_RETAINED = 20


class ServiceConfigError(HudiInspectError):
    """A cleaner/archiver config key is unknown or its value is not valid."""


@dataclass(frozen=True)
class ConfigKey:
    """One known config key: its canonical name, alternative names, default and meaning."""

    name: str
    field: str
    kind: str  # "int", "bool", "str"
    default: Any
    description: str
    alternatives: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    #: Why the key's name is unverified (its behaviour is Hudi's, its spelling could not be read in Hudi's
    #: source); a plan that sets it says so in `unverified_config_keys`.
    unverified: str = ""
    #: The first emulated Hudi release that reads the key (older releases list it as ignored).
    since: str = "1.1"
    #: Integers: ``"non_negative"``, ``"positive"`` or ``"minus_one_or_positive"`` (-1 = off).
    int_rule: str = "non_negative"
    #: Why the key's behaviour is not emulated (set for 1.2 keys whose semantics could not be read in
    #: Hudi's source); a plan that sets it says so in `not_emulated`.
    not_emulated: str = ""

    def names(self) -> tuple[str, ...]:
        """The canonical name followed by the alternatives."""
        return (self.name, *self.alternatives)

    @property
    def min_int(self) -> int:
        """The smallest integer `int_rule` allows (a form's lower bound; `_parse` enforces the rule)."""
        return {"minus_one_or_positive": -1, "positive": 1}.get(self.int_rule, 0)


#: Emulated Hudi releases (`--hudi-release`), oldest first, and the default (the newest).
HUDI_RELEASES = ("1.1", "1.2")
DEFAULT_HUDI_RELEASE = HUDI_RELEASES[-1]

#: Every key :meth:`ServiceConfig.from_conf` accepts.
KNOWN_KEYS: tuple[ConfigKey, ...] = (
    # -- cleaner (HoodieCleanConfig) ----------------------------------------------------------------
    ConfigKey("hoodie.clean.policy", "cleaner_policy", "str", KEEP_LATEST_COMMITS,
              "cleaning policy", ("hoodie.cleaner.policy",), CLEANER_POLICIES),
    ConfigKey("hoodie.clean.commits.retained", "commits_retained", "int", 10,
              "KEEP_LATEST_COMMITS: completed commits whose files are retained", ("hoodie.cleaner.commits.retained",)),
    ConfigKey("hoodie.clean.hours.retained", "hours_retained", "int", 24,
              "KEEP_LATEST_BY_HOURS: hours of commits whose files are retained", ("hoodie.cleaner.hours.retained",)),
    ConfigKey("hoodie.clean.fileversions.retained", "file_versions_retained", "int", 3,
              "KEEP_LATEST_FILE_VERSIONS: file slices kept per file group",
              ("hoodie.cleaner.fileversions.retained",)),
    ConfigKey("hoodie.clean.trigger.strategy", "clean_trigger_strategy", "str", "NUM_COMMITS",
              "when to plan a clean (NUM_COMMITS is the only strategy)", ("hoodie.cleaner.trigger.strategy",),
              ("NUM_COMMITS",)),
    ConfigKey("hoodie.clean.max.commits", "clean_max_commits", "int", 1,
              "completed commits since the last clean before a new clean is planned",
              ("hoodie.cleaner.trigger.max.commits",)),
    ConfigKey("hoodie.cleaner.incremental.mode", "incremental_mode", "bool", True,
              "plan from the partitions touched since the last clean's ECTR",
              ("hoodie.cleaner.incremental.enabled", "hoodie.clean.incremental.enabled")),
    ConfigKey("hoodie.cleaner.delete.bootstrap.base.file", "clean_bootstrap_base_file", "bool", False,
              "also delete bootstrap source files", ("hoodie.clean.delete.bootstrap.base.file",)),
    ConfigKey("hoodie.clean.automatic", "clean_automatic", "bool", True, "clean after each write"),
    ConfigKey("hoodie.clean.async", "clean_async", "bool", False, "clean asynchronously",
              ("hoodie.clean.async.enabled",)),
    # Default false since HUDI-7616 (0.15.0 / 1.0.0), which also deprecated the key.
    ConfigKey("hoodie.clean.allow.multiple", "clean_allow_multiple", "bool", False,
              "allow scheduling a clean while another is pending", ("hoodie.clean.multiple.enabled",)),
    ConfigKey("hoodie.cleaner.policy.failed.writes", "failed_writes_policy", "str", "EAGER",
              "how failed writes are cleaned (EAGER, LAZY, NEVER)", ("hoodie.clean.failed.writes.policy",),
              ("EAGER", "LAZY", "NEVER")),
    # -- writers (HoodieWriteConfig, HoodieLockConfig): heartbeats decide which failed writes LAZY rolls back ----
    ConfigKey("hoodie.client.heartbeat.interval_in_ms", "heartbeat_interval_ms", "int", 60_000,
              "how often a writer touches its heartbeat file (HoodieHeartbeatClient)", int_rule="positive"),
    ConfigKey("hoodie.client.heartbeat.tolerable.misses", "heartbeat_tolerable_misses", "int", 2,
              "heartbeats missed before the write counts as failed (expiry = interval x misses)",
              int_rule="positive"),
    ConfigKey("hoodie.write.concurrency.mode", "write_concurrency_mode", "str", "SINGLE_WRITER",
              "single writer or multi-writer concurrency control (multi-writer modes make failed writes LAZY)", (),
              ("SINGLE_WRITER", "OPTIMISTIC_CONCURRENCY_CONTROL", "NON_BLOCKING_CONCURRENCY_CONTROL")),
    ConfigKey("hoodie.write.lock.provider", "lock_provider", "str", None,
              "lock provider class (multi-writer)"),
    # -- archiver (HoodieArchivalConfig) ------------------------------------------------------------
    ConfigKey("hoodie.keep.min.commits", "keep_min_commits", "int", 20,
              "completed commits the archiver always keeps active"),
    ConfigKey("hoodie.keep.max.commits", "keep_max_commits", "int", 30,
              "archive when more completed commits than this are active"),
    ConfigKey("hoodie.commits.archival.batch", "archival_batch", "int", 10,
              "V1: archive records per log block"),
    ConfigKey("hoodie.archive.beyond.savepoint", "archive_beyond_savepoint", "bool", False,
              "archive past savepoints, skipping only the savepointed commits (leaves holes)"),
    ConfigKey("hoodie.timeline.compaction.batch.size", "timeline_compaction_batch", "int", 10,
              "V2: LSM timeline files merged per compaction"),
    ConfigKey("hoodie.archive.automatic", "archive_automatic", "bool", True, "archive after each commit"),
    ConfigKey("hoodie.archive.async", "archive_async", "bool", False, "archive asynchronously"),
    ConfigKey("hoodie.archive.delete.parallelism", "archive_delete_parallelism", "int", 100,
              "parallelism deleting archived instant files"),
    ConfigKey("hoodie.archive.limit.instants", "archive_limit_instants", "int", None,
              "V1: cap on instants archived per run (TimelineArchiverV1.ARCHIVE_LIMIT_INSTANTS)"),
    # Verified in `HoodieArchivalConfig.BLOCK_ARCHIVAL_ON_LATEST_CLEAN_ECTR` of a 1.2 snapshot: sinceVersion 1.2.0,
    # no alternative name; `TimelineArchiverV1` reads it (V1 only).
    ConfigKey("hoodie.archive.block.on.latest.clean.ectr", "block_on_latest_clean_ectr", "bool", False,
              "A7 (V1, PR #18380): stop before the ECTR recorded by the last completed clean", since="1.2"),
    # The guard is read in `TimelineArchiverV2` (apache/hudi @66f15315, candidate 6, behind
    # `config.shouldArchiveKeepCleanPlanRetainInstant()`); the ConfigProperty behind that getter is in no copy
    # of HoodieArchivalConfig/HoodieWriteConfig the code index holds, so the key string is our best reading.
    ConfigKey("hoodie.archive.keep.clean.plan.retain.instant", "keep_clean_plan_retain_instant", "bool", False,
              "A6 (V2, HUDI-9634): stop before the latest clean plan's earliestInstantToRetain",
              unverified=("the A6 guard is Hudi's (TimelineArchiverV2, HUDI-9634, getter "
                          "shouldArchiveKeepCleanPlanRetainInstant), but this key's spelling could not be read in "
                          "Hudi's source: if Hudi names it differently, Hudi ignores this setting and archives "
                          "without the guard")),
    # -- related: compaction trigger (guard A2) and metadata table (guard A4) -------------------
    ConfigKey("hoodie.compact.inline.trigger.strategy", "compact_trigger_strategy", "str", "NUM_COMMITS",
              "compaction trigger; NUM_COMMITS/NUM_AND_TIME make the archiver keep delta commits (A2)", (),
              ("NUM_COMMITS", "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME")),
    ConfigKey("hoodie.compact.inline.max.delta.commits", "compact_max_delta_commits", "int", 5,
              "delta commits before compaction is scheduled (A2)"),
    ConfigKey("hoodie.metadata.enable", "metadata_enable", "bool", True,
              "metadata table enabled: archival waits for its compaction (A4)"),
    # -- Hudi 1.2 (spec `06` §1). Names and defaults: `HoodieCleanConfig` of a 1.2 snapshot (read in the code
    # index: MAX_COMMITS_TO_CLEAN, PREWRITE_CLEANER_POLICY, CLEAN_PARTITION_FILTER_REGEX|SELECTED with their
    # `hoodie.cleaner.*` alternatives), the 1.2.0 release notes and the docs/1.2.0 cleaning page.
    # Emulated as Hudi's `TestCleanerUtils.testGetEarliestCommitToRetain_WithMaxCommitsToClean_*` specify it.
    ConfigKey("hoodie.clean.max.commits.to.clean", "max_commits_to_clean", "int", None,
              "1.2: cap on commits cleaned per clean (KEEP_LATEST_COMMITS / KEEP_LATEST_BY_HOURS); unbounded by "
              "default", since="1.2", int_rule="positive"),
    # Emulated (`CleanPlanActionExecutor.requestClean` of 1.2 reads `getIntervalToCreateEmptyCleanHours()`,
    # INTERVAL_TO_CREATE_EMPTY_CLEAN_HOURS; name and range from the docs/1.2.0 cleaning page).
    ConfigKey("hoodie.write.empty.clean.interval.hours", "empty_clean_interval_hours", "int", -1,
              "1.2: write an empty clean every N hours so the ECTR advances on append-only tables (-1 = off)",
              since="1.2", int_rule="minus_one_or_positive"),
    # Emulated (`CleanPlanner.getPartitionPathsForFullCleaning` of 1.2; see clean.full_clean_partitions).
    ConfigKey("hoodie.clean.partition.filter.regex", "clean_partition_filter_regex", "str", None,
              "1.2: full-scan cleans only partitions whose path matches this Java regex (whole path); needs "
              "incremental cleaning off", ("hoodie.cleaner.partition.filter.regex",), since="1.2"),
    ConfigKey("hoodie.clean.partition.filter.selected", "clean_partition_filter_selected", "str", None,
              "1.2: full-scan cleans only these partitions (comma-separated, exact paths; wins over the regex); "
              "needs incremental cleaning off", ("hoodie.cleaner.partition.filter.selected",), since="1.2"),
    # `HoodiePreWriteCleanerPolicy` (1.2): NONE, CLEAN ("force a CLEAN table service call before starting the
    # write"), ROLLBACK_FAILED_WRITES; `fromString` trims, ignores case and reads an empty value as NONE.
    ConfigKey("hoodie.prewrite.cleaner.policy", "prewrite_cleaner_policy", "str", "NONE",
              "1.2: clean or roll back failed writes before a write starts", (),
              ("NONE", "CLEAN", "ROLLBACK_FAILED_WRITES"), since="1.2",
              not_emulated=("changes when the clean runs (CLEAN: a clean call in startCommit before each write, PR "
                            "#18197), not which files it deletes: this plan is the one that clean would make if it "
                            "is scheduled, but whether that call skips the hoodie.clean.max.commits trigger or a "
                            "pending clean could not be verified (no 1.2 BaseHoodieWriteClient with PR #18197 was "
                            "readable here)")),
    # Emulated: `HoodieMetadataWriteUtils.createMetadataWriteConfig` (see ServiceConfig.for_metadata_table).
    ConfigKey("hoodie.metadata.derive.from.datatable.clean.policy", "mdt_derive_clean_policy", "bool", True,
              "1.2: the metadata table's cleaner derives its policy and retention from the data table's (false: "
              "KEEP_LATEST_FILE_VERSIONS, 2 versions)", since="1.2"),
    ConfigKey("hoodie.metadata.compact.max.delta.commits", "mdt_compact_max_delta_commits", "int", 10,
              "metadata table: delta commits before its compaction is scheduled (its archiver's A2 guard)"),
    ConfigKey("hoodie.metadata.compact.trigger.strategy", "mdt_compact_trigger_strategy", "str", "NUM_COMMITS",
              "1.2: the metadata table's compaction trigger (its archiver's A2 guard)", (),
              ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME"),
              since="1.2"),
    # `HoodieArchivalConfig` of a 1.2 snapshot: TIMELINE_MANIFEST_RETAINED_VERSIONS (PR #17996) and
    # TIMELINE_COMPACTION_TARGET_FILE_MAX_BYTES (PR #17784); used by `LSMTimelineWriter` (see timeline.lsm_rules).
    ConfigKey("hoodie.timeline.manifest.retained.versions", "timeline_manifest_retained_versions", "int",
              lsm_rules.RETAINED_VERSIONS,
              "V2: LSM timeline snapshot versions kept after an archival (plus one per compaction it ran)",
              since="1.2", int_rule="positive"),
    ConfigKey("hoodie.timeline.compaction.target.file.max.bytes", "timeline_compaction_max_bytes", "int",
              lsm_rules.MAX_FILE_BYTES, "V2: cap on the total input of one LSM timeline compaction",
              since="1.2", int_rule="positive"),
)

_BY_NAME: dict[str, ConfigKey] = {n: k for k in KNOWN_KEYS for n in k.names()}


def known_key_names() -> list[str]:
    """Every accepted key name (canonical and alternative), sorted."""
    return sorted(_BY_NAME)


def _parse(key: ConfigKey, given_name: str, value: Any) -> Any:
    text = str(value).strip()
    if key.kind == "int":
        try:
            number = int(text)
        except ValueError as exc:
            raise ServiceConfigError(f"{given_name}={value!r} is not an integer") from exc
        if key.int_rule == "positive" and number < 1:
            raise ServiceConfigError(f"{given_name}={value!r} must be at least 1")
        if key.int_rule == "minus_one_or_positive" and number != -1 and number < 1:
            raise ServiceConfigError(f"{given_name}={value!r} must be -1 (off) or at least 1")
        if key.int_rule == "non_negative" and number < 0:
            raise ServiceConfigError(f"{given_name}={value!r} must not be negative")
        return number
    if key.kind == "bool":
        lowered = text.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise ServiceConfigError(f"{given_name}={value!r} is not a boolean (true/false)")
    upper = text.upper()
    if key.field == "prewrite_cleaner_policy" and not upper:
        return "NONE"  # HoodiePreWriteCleanerPolicy.fromString: an empty value is NONE
    if key.field == "clean_partition_filter_regex" and text:
        try:
            re.compile(text)
        except re.error as exc:
            raise ServiceConfigError(f"{given_name}={value!r} is not a regular expression this dry run can apply "
                                     f"({exc}); Hudi matches it with Java's Pattern") from exc
    if key.choices and upper not in key.choices:
        raise ServiceConfigError(f"{given_name}={value!r} is not one of {', '.join(key.choices)}")
    return upper if key.choices else text


#: Prefix Spark passes Hadoop/Hudi configuration with (`spark.hadoop.hoodie.*` in spark-defaults.conf).
SPARK_HADOOP_PREFIX = "spark.hadoop."
#: Namespaces of cleaner/archiver keys: unmodelled keys there are flagged as such when ignored.
_SERVICE_NAMESPACES = ("hoodie.clean.", "hoodie.cleaner.", "hoodie.archive.", "hoodie.keep.",
                       "hoodie.commits.archival.")
#: Most edits between a given key and a known one for the given key to count as a typo of it.
TYPO_DISTANCE = 2


@dataclass(frozen=True)
class IgnoredKey:
    """A key given that does not affect the dry runs: where it came from and why it is ignored."""

    key: str
    value: str
    source: str
    reason: str
    given_as: str
    #: The release that first reads the key when the emulated one is older (``None``: no release reads it).
    read_from_release: str | None = None

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "value": self.value, "source": self.source, "reason": self.reason,
                "given_as": self.given_as}


def strip_spark_prefix(key: str) -> str:
    """`spark.hadoop.hoodie.x` → `hoodie.x` (how Spark hands Hadoop-side configuration to Hudi)."""
    return key[len(SPARK_HADOOP_PREFIX):] if key.startswith(SPARK_HADOOP_PREFIX + "hoodie.") else key


def edit_distance(a: str, b: str, limit: int = TYPO_DISTANCE) -> int:
    """Levenshtein distance of `a` and `b`, or ``limit + 1`` once it exceeds `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > limit:
            return limit + 1
        prev = cur
    return prev[-1]


def resembling_key(name: str) -> str | None:
    """The known key `name` is a likely typo of (within :data:`TYPO_DISTANCE` edits), else ``None``."""
    best: tuple[int, str] | None = None
    for known in sorted(_BY_NAME):
        d = edit_distance(name, known)
        if d <= TYPO_DISTANCE and (best is None or d < best[0]):
            best = (d, known)
    return best[1] if best else None


def _refuse_typo(name: str, given: str, source: str) -> None:
    like = resembling_key(name)
    if like is not None:
        shown = given.strip() if given.strip() == name else f"{given.strip()} (read as {name})"
        raise ServiceConfigError(f"config key {shown!r} from {source} is not a Hudi cleaner/archiver key; "
                                 f"did you mean {like!r}? (a typo would silently fall back to the default)")


#: Parts of key names whose values are never echoed (a pasted spark-defaults.conf carries credentials).
_SECRET_NAME_PARTS = ("secret", "password", "passwd", "token", "credential", "access.key", "accesskey", "auth",
                      "session", "private")


def _shown_value(name: str, raw: Any) -> str:
    """An ignored key's value as the plans list it: redacted when the name looks like a credential."""
    lowered = name.lower()
    return "<redacted>" if any(part in lowered for part in _SECRET_NAME_PARTS) else str(raw)


def _ignored_reason(name: str) -> str:
    if name.startswith(_SERVICE_NAMESPACES):
        return "a cleaner/archiver key this dry run does not model (it does not change which files or instants go)"
    return "does not affect cleaning or archival"


@dataclass(frozen=True)
class ServiceConfig:
    """The cleaner and archiver settings a dry run uses (Hudi defaults unless set).

    `explicit` holds the canonical names of the keys the caller set, with their parsed values.
    """

    cleaner_policy: str = KEEP_LATEST_COMMITS
    commits_retained: int = 10
    hours_retained: int = 24
    file_versions_retained: int = 3
    clean_trigger_strategy: str = "NUM_COMMITS"
    clean_max_commits: int = 1
    incremental_mode: bool = True
    clean_bootstrap_base_file: bool = False
    clean_automatic: bool = True
    clean_async: bool = False
    clean_allow_multiple: bool = False
    failed_writes_policy: str = "EAGER"
    heartbeat_interval_ms: int = 60_000
    heartbeat_tolerable_misses: int = 2
    write_concurrency_mode: str = "SINGLE_WRITER"
    lock_provider: str | None = None
    keep_min_commits: int = 20
    keep_max_commits: int = 30
    archival_batch: int = 10
    archive_beyond_savepoint: bool = False
    timeline_compaction_batch: int = 10
    archive_automatic: bool = True
    archive_async: bool = False
    archive_delete_parallelism: int = 100
    archive_limit_instants: int | None = None
    block_on_latest_clean_ectr: bool = False
    keep_clean_plan_retain_instant: bool = False
    compact_trigger_strategy: str = "NUM_COMMITS"
    compact_max_delta_commits: int = 5
    metadata_enable: bool = True
    max_commits_to_clean: int | None = None
    empty_clean_interval_hours: int = -1
    clean_partition_filter_regex: str | None = None
    clean_partition_filter_selected: str | None = None
    prewrite_cleaner_policy: str = "NONE"
    mdt_derive_clean_policy: bool = True
    mdt_compact_max_delta_commits: int = 10
    mdt_compact_trigger_strategy: str = "NUM_COMMITS"
    timeline_manifest_retained_versions: int = lsm_rules.RETAINED_VERSIONS
    timeline_compaction_max_bytes: int = lsm_rules.MAX_FILE_BYTES
    #: The emulated Hudi release (`--hudi-release`).
    hudi_release: str = DEFAULT_HUDI_RELEASE
    explicit: dict[str, Any] = field(default_factory=dict, compare=False)
    #: Keys given that do not affect cleaning or archival (accepted, listed in the plans).
    ignored: tuple[IgnoredKey, ...] = field(default=(), compare=False)
    #: Set on the result of :meth:`for_metadata_table`: how it was derived (so it is never derived twice).
    metadata_table_notes: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def from_conf(cls, conf: Mapping[str, Any] | None = None,
                  hudi_release: str = DEFAULT_HUDI_RELEASE) -> ServiceConfig:
        """Build from ``{hudi key: value}`` (see :meth:`from_layers`)."""
        return cls.from_layers([("--conf", conf or {})], hudi_release)

    @classmethod
    def from_layers(cls, layers: Iterable[tuple[str, Mapping[str, Any]]],
                    hudi_release: str = DEFAULT_HUDI_RELEASE) -> ServiceConfig:
        """Build from ``(source, {key: value})`` layers, later ones overriding earlier ones (a file, then `--conf`).

        Keys are taken as Hudi takes them: a `spark.hadoop.` prefix is dropped; known keys (canonical or
        alternative names) are parsed; a key within two edits of a known key is refused as a likely
        typo; any other key is accepted and recorded in :attr:`ignored`. Within one layer a key set
        twice (under two of its names) with different values is refused.

        When no policy is given, the policy is inferred as Hudi 1.x does (`HoodieCleanConfig.CLEANER_POLICY`
        infer function, `TestHoodieWriteConfig.testInferCleaningPolicy`) only when exactly one of the
        retention keys is set: commits → KEEP_LATEST_COMMITS, hours → KEEP_LATEST_BY_HOURS, file
        versions → KEEP_LATEST_FILE_VERSIONS; with none or several, the default KEEP_LATEST_COMMITS.

        `hudi_release` is the emulated release: keys a release does not read (1.2 keys under 1.1) are
        listed as ignored, saying so.
        """
        if hudi_release not in HUDI_RELEASES:
            raise ServiceConfigError(f"Hudi release {hudi_release!r} is not emulated; choose one of "
                                     f"{', '.join(HUDI_RELEASES)}")
        values: dict[str, Any] = {}
        explicit: dict[str, Any] = {}
        ignored: dict[str, IgnoredKey] = {}
        for source, conf in layers:
            seen: dict[str, tuple[str, Any]] = {}
            for given, raw in conf.items():
                name = strip_spark_prefix(given.strip())
                key = _BY_NAME.get(name)
                if key is None:
                    _refuse_typo(name, given, source)
                    ignored[name] = IgnoredKey(name, _shown_value(name, raw), source, _ignored_reason(name),
                                               given.strip())
                    continue
                if HUDI_RELEASES.index(key.since) > HUDI_RELEASES.index(hudi_release):
                    ignored[name] = IgnoredKey(name, str(raw), source, f"a Hudi {key.since} key: Hudi {hudi_release} "
                                               "does not read it", given.strip(), read_from_release=key.since)
                    continue
                parsed = _parse(key, given, raw)
                if key.field in seen and seen[key.field][1] != parsed:
                    raise ServiceConfigError(f"{key.name} is set twice with different values in {source} "
                                             f"(as {seen[key.field][0]} and as {given})")
                seen[key.field] = (given, parsed)
                values[key.field] = parsed
                explicit[key.name] = parsed
        if "cleaner_policy" not in values:
            inferred = [policy for fld, policy in (("commits_retained", KEEP_LATEST_COMMITS),
                                                   ("hours_retained", KEEP_LATEST_BY_HOURS),
                                                   ("file_versions_retained", KEEP_LATEST_FILE_VERSIONS))
                        if fld in values]
            if len(inferred) == 1:
                values["cleaner_policy"] = inferred[0]
        config = cls(**values, hudi_release=hudi_release, explicit=explicit,
                     ignored=tuple(ignored[k] for k in sorted(ignored)))
        # `HoodieWriteConfig.Builder.validate` (1.1/1.2 as 0.x): only under KEEP_LATEST_COMMITS, and strictly
        # greater, so keep.max == keep.min is refused there and accepted under the other policies.
        if config.cleaner_policy == KEEP_LATEST_COMMITS and config.keep_max_commits <= config.keep_min_commits:
            raise ServiceConfigError(
                f"Increase hoodie.keep.max.commits={config.keep_max_commits} to be greater than "
                f"hoodie.keep.min.commits={config.keep_min_commits} (Hudi's HoodieWriteConfig refuses this "
                "under KEEP_LATEST_COMMITS)"
            )
        return config

    @property
    def multi_writer(self) -> bool:
        """`WriteConcurrencyMode.supportsMultiWriter`: optimistic or non-blocking concurrency control."""
        return self.write_concurrency_mode != "SINGLE_WRITER"

    @property
    def effective_failed_writes_policy(self) -> str:
        """The failed-writes policy a writer runs with: multi-writer modes force LAZY
        (`HoodieWriteConfig.Builder.autoAdjustConfigsForConcurrencyMode`), whatever was set."""
        return "LAZY" if self.multi_writer else self.failed_writes_policy

    @property
    def heartbeat_expiry_ms(self) -> int:
        """`HoodieHeartbeatClient.maxAllowableHeartbeatIntervalInMs`: interval x tolerable misses."""
        return self.heartbeat_interval_ms * self.heartbeat_tolerable_misses

    def ignored_dicts(self) -> list[dict[str, str]]:
        """The plans' `ignored_config_keys`."""
        return [k.to_dict() for k in self.ignored]

    @property
    def release_label(self) -> str:
        """The plans' `hudi_release` (``"1.2.x"``)."""
        return f"{self.hudi_release}.x"

    def not_emulated(self) -> list[dict[str, Any]]:
        """The plans' `not_emulated`: settings of the emulated release whose behaviour this plan does not
        reproduce (so the plan may differ from Hudi's), each with `key`, `value` and `reason`."""
        return [{"key": k.name, "value": self.explicit[k.name], "reason": k.not_emulated} for k in KNOWN_KEYS
                if k.not_emulated and k.name in self.explicit and self.explicit[k.name] != k.default]

    def unverified_keys(self) -> list[dict[str, Any]]:
        """The plans' `unverified_config_keys`: keys set here whose spelling could not be verified in Hudi's
        source (the behaviour is emulated; Hudi may not read the key as spelled), with `key`, `value`, `reason`."""
        return [{"key": k.name, "value": self.explicit[k.name], "reason": k.unverified} for k in KNOWN_KEYS
                if k.unverified and k.name in self.explicit and self.explicit[k.name] != k.default]

    def for_metadata_table(self) -> tuple[ServiceConfig, list[str]]:
        """The metadata table's cleaner and archiver settings, derived from this (the data table's) configuration
        as `HoodieMetadataWriteUtils.createMetadataWriteConfig` derives them (Hudi has no way to set them directly),
        with one line per derived value.

        Both releases: the archiver keeps `hoodie.keep.min.commits + 1` / `hoodie.keep.max.commits + 1`, and the
        metadata table's compaction (its archiver's A2 guard) is scheduled after
        `hoodie.metadata.compact.max.delta.commits`. The cleaner takes the data table's policy with retention x 1.2
        (KEEP_LATEST_COMMITS: `(int) max(20, commits x 1.2)`, 20 being `DEFAULT_METADATA_CLEANER_COMMITS_RETAINED`;
        file versions and hours: `ceil(x 1.2)`), other cleaner keys at their defaults (incremental on, no cap, no
        empty cleans, no partition filter). 1.2 adds: the data table's `hoodie.clean.max.commits` trigger, the
        `hoodie.metadata.compact.trigger.strategy`, and `hoodie.metadata.derive.from.datatable.clean.policy=false`
        for KEEP_LATEST_FILE_VERSIONS with 2 versions.
        """
        if self.metadata_table_notes:
            return self, list(self.metadata_table_notes)  # already the metadata table's
        base = ServiceConfig(hudi_release=self.hudi_release, ignored=self.ignored)
        notes: list[str] = []
        fields: dict[str, Any] = {
            "keep_min_commits": self.keep_min_commits + 1,
            "keep_max_commits": self.keep_max_commits + 1,
            "compact_max_delta_commits": self.mdt_compact_max_delta_commits,
            "failed_writes_policy": self.failed_writes_policy,
            "metadata_enable": False,
        }
        notes.append(f"hoodie.keep.min.commits={self.keep_min_commits + 1}, hoodie.keep.max.commits="
                     f"{self.keep_max_commits + 1}: the data table's {self.keep_min_commits} / {self.keep_max_commits}"
                     " plus one")
        notes.append(f"compaction after {self.mdt_compact_max_delta_commits} delta commits "
                     "(hoodie.metadata.compact.max.delta.commits)")
        derive = self.hudi_release == "1.1" or self.mdt_derive_clean_policy
        if self.hudi_release != "1.1":
            fields["clean_max_commits"] = self.clean_max_commits
            fields["compact_trigger_strategy"] = self.mdt_compact_trigger_strategy
            notes.append(f"clean trigger hoodie.clean.max.commits={self.clean_max_commits} (the data table's); "
                         f"compaction trigger {self.mdt_compact_trigger_strategy}")
        if not derive:
            fields.update(cleaner_policy=KEEP_LATEST_FILE_VERSIONS, file_versions_retained=2)
            notes.append("hoodie.metadata.derive.from.datatable.clean.policy=false: KEEP_LATEST_FILE_VERSIONS, "
                         "2 versions")
        elif self.cleaner_policy == KEEP_LATEST_COMMITS:
            retained = int(max(METADATA_CLEANER_COMMITS_RETAINED, self.commits_retained * 1.2))
            fields.update(cleaner_policy=KEEP_LATEST_COMMITS, commits_retained=retained)
            notes.append(f"KEEP_LATEST_COMMITS, {retained} commits retained = (int) max("
                         f"{METADATA_CLEANER_COMMITS_RETAINED}, {self.commits_retained} x 1.2)")
        elif self.cleaner_policy == KEEP_LATEST_FILE_VERSIONS:
            versions = math.ceil(self.file_versions_retained * 1.2)
            fields.update(cleaner_policy=KEEP_LATEST_FILE_VERSIONS, file_versions_retained=versions)
            notes.append(f"KEEP_LATEST_FILE_VERSIONS, {versions} versions = ceil({self.file_versions_retained} x 1.2)")
        else:
            hours = math.ceil(self.hours_retained * 1.2)
            fields.update(cleaner_policy=KEEP_LATEST_BY_HOURS, hours_retained=hours)
            notes.append(f"KEEP_LATEST_BY_HOURS, {hours} hours = ceil({self.hours_retained} x 1.2)")
        return replace(base, **fields, metadata_table_notes=tuple(notes)), notes

    def to_dict(self) -> dict[str, Any]:
        """Every known key's canonical name with its effective value."""
        return {k.name: getattr(self, k.field) for k in KNOWN_KEYS}


#: Largest configuration file read (a hudi-defaults.conf is a few KiB).
CONF_FILE_LIMIT = 4 * 1024 * 1024


def parse_conf_text(text: str, source: str) -> dict[str, str]:
    """Java properties / `hudi-defaults.conf` text as ``{key: value}``.

    As Hudi's `DFSPropertiesConfiguration`: blank lines and `#` / `!` comments are skipped, runs of
    whitespace count as one, and a line splits at its first ``=`` if it has one, else at its first
    whitespace; from Java properties, `key: value` / `key:value` and a trailing backslash continuing a
    line. Later lines win. A line with a key and no separator is refused, naming the file and line.
    """
    out: dict[str, str] = {}
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not pending and (not line or line.startswith(("#", "!"))):
            continue
        if not pending:
            start = number
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending += line[:-1]
            continue
        line, pending = pending + line, ""
        line = " ".join(line.split())
        sep = "=" if "=" in line else " " if " " in line else ":" if ":" in line else ""
        if not sep:
            raise ServiceConfigError(f"{source}, line {start}: {line!r} has no value (expected KEY=VALUE or KEY VALUE)")
        key, _, value = line.partition(sep)
        if sep == " " and key.endswith(":"):  # Java properties' `key: value`
            key = key[:-1]
        if not key.strip():
            raise ServiceConfigError(f"{source}, line {start}: no key before {sep!r}")
        out[key.strip()] = value.strip()
    if pending:
        raise ServiceConfigError(f"{source}, line {start}: the last line ends with a continuation backslash")
    return out


def read_conf_file(path: str | Path) -> dict[str, str]:
    """A local configuration file (Java properties, `hudi-defaults.conf`, spark-defaults.conf) as ``{key: value}``."""
    p = Path(path)
    try:
        if not p.is_file():
            raise ServiceConfigError(f"--conf-file {path}: not a regular file")
        if p.stat().st_size > CONF_FILE_LIMIT:
            raise ServiceConfigError(f"--conf-file {path}: larger than {CONF_FILE_LIMIT} bytes")
        data = p.read_bytes()
    except OSError as exc:
        raise ServiceConfigError(f"--conf-file {path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")  # java.util.Properties.load(InputStream) reads ISO 8859-1
    return parse_conf_text(text, str(path))


def conf_layers(conf_files: list[str] | None, pairs: list[str] | None) -> list[tuple[str, dict[str, str]]]:
    """The CLI's `--conf-file` files (in order) then its `--conf` pairs, as :meth:`ServiceConfig.from_layers` layers."""
    layers = [(str(f), read_conf_file(f)) for f in conf_files or []]
    layers.append(("--conf", parse_conf_pairs(pairs)))
    return layers


def parse_conf_pairs(pairs: list[str] | None) -> dict[str, str]:
    """`KEY=VALUE` strings (the CLI's `--conf`) as a dict; refuses malformed pairs."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ServiceConfigError(f"--conf expects KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out
