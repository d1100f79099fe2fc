"""Cleaner and archiver configuration: Hudi's own keys, both 0.x and 1.x names, with defaults.

Keys and defaults follow `HoodieCleanConfig`, `HoodieArchivalConfig` and `HoodieCompactionConfig`
of Hudi 1.1.x (spec `02` §4 and §5.1). 1.x renamed several cleaner keys to `hoodie.clean.*` and
keeps the old names as alternatives, so both are accepted. Unknown keys are refused with the list
of known ones: a typo must never silently fall back to a default in a dry run.

Two optional archiver guards have key names that could not be verified in released code (spec
`02` §3): A6 (`TimelineArchiverV2`, HUDI-9634) and A7 (`TimelineArchiverV1`, PR #18380). Their keys
are marked ``unverified`` in :data:`KNOWN_KEYS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hudi_core.errors import HudiInspectError

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
CLEANER_POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)


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
    unverified: bool = False

    def names(self) -> tuple[str, ...]:
        """The canonical name followed by the alternatives."""
        return (self.name, *self.alternatives)


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
              "plan from the partitions touched since the last clean's ECTR", ("hoodie.cleaner.incremental.enabled",)),
    ConfigKey("hoodie.cleaner.delete.bootstrap.base.file", "clean_bootstrap_base_file", "bool", False,
              "also delete bootstrap source files"),
    ConfigKey("hoodie.clean.automatic", "clean_automatic", "bool", True, "clean after each write"),
    ConfigKey("hoodie.clean.async", "clean_async", "bool", False, "clean asynchronously",
              ("hoodie.clean.async.enabled",)),
    # Default false since HUDI-7616 (0.15.0 / 1.0.0), which also deprecated the key.
    ConfigKey("hoodie.clean.allow.multiple", "clean_allow_multiple", "bool", False,
              "allow scheduling a clean while another is pending"),
    ConfigKey("hoodie.cleaner.policy.failed.writes", "failed_writes_policy", "str", "EAGER",
              "how failed writes are cleaned (EAGER, LAZY, NEVER)", (), ("EAGER", "LAZY", "NEVER")),
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
    ConfigKey("hoodie.archive.block.on.latest.clean.ectr", "block_on_latest_clean_ectr", "bool", False,
              "A7 (V1, PR #18380): stop before the ECTR recorded by the last completed clean",
              ("hoodie.archive.block.on.clean.ectr",), unverified=True),
    ConfigKey("hoodie.archive.keep.clean.plan.retain.instant", "keep_clean_plan_retain_instant", "bool", False,
              "A6 (V2, HUDI-9634): stop before the latest clean plan's earliestInstantToRetain",
              (), unverified=True),
    # -- related: compaction trigger (guard A2) and metadata table (guard A4) -------------------
    ConfigKey("hoodie.compact.inline.trigger.strategy", "compact_trigger_strategy", "str", "NUM_COMMITS",
              "compaction trigger; NUM_COMMITS/NUM_AND_TIME make the archiver keep delta commits (A2)", (),
              ("NUM_COMMITS", "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME")),
    ConfigKey("hoodie.compact.inline.max.delta.commits", "compact_max_delta_commits", "int", 5,
              "delta commits before compaction is scheduled (A2)"),
    ConfigKey("hoodie.metadata.enable", "metadata_enable", "bool", True,
              "metadata table enabled: archival waits for its compaction (A4)"),
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
        if number < 0:
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
    if key.choices and upper not in key.choices:
        raise ServiceConfigError(f"{given_name}={value!r} is not one of {', '.join(key.choices)}")
    return upper if key.choices else text


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
    explicit: dict[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def from_conf(cls, conf: Mapping[str, Any] | None = None) -> ServiceConfig:
        """Build from ``{hudi key: value}``; refuse unknown keys, listing the known ones.

        When no policy is given, the policy is inferred as Hudi 1.x does (`HoodieCleanConfig.CLEANER_POLICY`
        infer function, `TestHoodieWriteConfig.testInferCleaningPolicy`) only when exactly one of the
        retention keys is set: commits → KEEP_LATEST_COMMITS, hours → KEEP_LATEST_BY_HOURS, file
        versions → KEEP_LATEST_FILE_VERSIONS; with none or several, the default KEEP_LATEST_COMMITS.
        """
        values: dict[str, Any] = {}
        explicit: dict[str, Any] = {}
        for given, raw in (conf or {}).items():
            key = _BY_NAME.get(given.strip())
            if key is None:
                raise ServiceConfigError(
                    f"unknown config key {given!r}; known keys: {', '.join(known_key_names())}"
                )
            parsed = _parse(key, given, raw)
            if key.field in values and values[key.field] != parsed:
                raise ServiceConfigError(f"{key.name} is set twice with different values (also as {given})")
            values[key.field] = parsed
            explicit[key.name] = parsed
        if "cleaner_policy" not in values:
            inferred = [policy for fld, policy in (("commits_retained", KEEP_LATEST_COMMITS),
                                                   ("hours_retained", KEEP_LATEST_BY_HOURS),
                                                   ("file_versions_retained", KEEP_LATEST_FILE_VERSIONS))
                        if fld in values]
            if len(inferred) == 1:
                values["cleaner_policy"] = inferred[0]
        config = cls(**values, explicit=explicit)
        if config.keep_max_commits < config.keep_min_commits:
            raise ServiceConfigError(
                f"hoodie.keep.max.commits={config.keep_max_commits} is less than "
                f"hoodie.keep.min.commits={config.keep_min_commits} (Hudi refuses this)"
            )
        return config

    def to_dict(self) -> dict[str, Any]:
        """Every known key's canonical name with its effective value."""
        return {k.name: getattr(self, k.field) for k in KNOWN_KEYS}


def parse_conf_pairs(pairs: list[str] | None) -> dict[str, str]:
    """`KEY=VALUE` strings (the CLI's `--conf`) as a dict; refuses malformed pairs."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ServiceConfigError(f"--conf expects KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out
