"""Duplicate log-block analysis per (file group, instant): HUDI-6758 (spec `03` §2, seed 003).

Input: the block inventory (:func:`~hudi_core.formats.logfile.inventory.scan_log_files`) and, per completed
deltacommit, the log file names its commit metadata write stats name (`path` of each write stat):
``{instant_time: {file_id: {log file name, ...}}}``. Blocks of one file group are put in reader
order (log files by `LogFileName.sort_key`: instant in the name, version, write token; then block
position), data and delete blocks are grouped by header `INSTANT_TIME`, and each group's blocks
are split into *attempts*:

* by the `BLOCK_IDENTIFIER` attempt number when the block has one (0.14.x Spark writers);
* else by the write token's task attempt id of the log file (a retried Spark task writes with a
  new token), else by the log file itself.

Three verdicts are computed side by side:

(a) ``proposal`` – the seed's proposal: among attempts with sequence numbers, the longest
    sequence wins (the run 0,1,2,... without a gap; corrupt blocks carry no number, so they are
    ignored); a tie goes to the latest attempt (higher attempt number). Attempts without
    sequence numbers are kept (the proposal's backwards compatibility).
(b) ``hudi_014`` – the 0.14.x reader (`reconcileSpuriousBlocksAndGetValidOnes`, §2.3) run over the
    whole file group in read order: rollbacks drop earlier blocks of their target; only if some
    block carried an identifier and some instant has two attempt keys (legacy blocks count as
    attempt 0) is the largest attempt kept, ties to the attempt iterated last in Java
    `HashMap<Long, …>` order.
(c) ``commit_metadata`` – blocks in files the deltacommit's write stats name are committed, the
    others are spurious. A write stat's `logOffset` (`HoodieDeltaWriteStat`, the position where
    the committed append started) refines this for HDFS appends: blocks of the same instant that
    sit before it in a named file were left by another attempt and are spurious too. Unknown when
    the instant has no completed commit metadata (pending, failed or not supplied) or when its
    write stats name no log file of the group (metadata-table file-group initialisation).

Disagreements are risks: (a) or (b) keeping blocks (c) calls spurious (duplicate or uncommitted
data is read), and (a) or (b) dropping blocks (c) calls committed (data loss, issue #10803).
Blocks removed by a rollback command block (or of an instant the caller says was rolled back)
are shown as rolled back, not as duplicates.
"""

from __future__ import annotations

import functools
import posixpath
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.formats.timeline.instant import DELTA_COMMIT, Instant, State
from hudi_core.io.backends import is_valid_name
from hudi_core.io.filenames import base_names, parse_log_file_name
from hudi_core.io.java import long_hashmap_order
from hudi_core.io.memory import as_array, release_mapped_pages

if TYPE_CHECKING:
    from hudi_core.engines.executor import PoolStage, WorkerPool
    from hudi_core.formats.timeline.active import ActiveTimeline
    from hudi_core.io.storage import StorageSpec
    from hudi_core.table import HudiTable

DATA_OR_DELETE = frozenset(
    {"AVRO_DATA_BLOCK", "HFILE_DATA_BLOCK", "PARQUET_DATA_BLOCK", "DELETE_BLOCK", "CDC_DATA_BLOCK",
     "LANCE_DATA_BLOCK"}
)
# The 0.14 reader's switch only tracks these; CDC/LANCE did not exist in its switch.
_HUDI014_TRACKED = frozenset({"AVRO_DATA_BLOCK", "HFILE_DATA_BLOCK", "PARQUET_DATA_BLOCK", "DELETE_BLOCK"})

KEEP = "keep"
DROP = "drop"
ROLLED_BACK = "rolled_back"
UNCOMMITTED = "uncommitted"
COMMITTED = "committed"
SPURIOUS = "spurious"
MIXED = "mixed"
UNKNOWN = "unknown"

#: ``{instant: {file_id: {log file name: log offset}}}`` from the deltacommit write stats. The
#: offset is the stat's `logOffset`: where the committed append started in that file (HDFS appends
#: can put another attempt's blocks before it). A plain iterable of names means offset 0.
CommitLogFiles = Mapping[str, Mapping[str, Mapping[str, int] | Iterable[str]]]


@dataclass(frozen=True)
class BlockRef:
    """One inventory row, as the analysis needs it."""

    path: str
    partition: str
    file_id: str
    block_index: int
    block_offset: int
    block_size: int
    block_type: str
    instant_time: str | None
    target_instant: str | None
    command_type: int | None
    attempt: int | None
    seq: int | None
    record_count: int | None
    corrupt: bool
    task_attempt: int | None
    order: tuple[Any, ...] = ()

    @property
    def file_name(self) -> str:
        return posixpath.basename(self.path)

    @property
    def has_identifier(self) -> bool:
        """Java 0.14 counts an identifier only when both numbers are not -1."""
        return self.attempt is not None and self.seq is not None and self.attempt != -1 and self.seq != -1

    @property
    def is_rollback(self) -> bool:
        return self.block_type == "COMMAND_BLOCK" and self.command_type == 0 and self.target_instant is not None


@dataclass
class AttemptView:
    """The blocks one write attempt left for a (file group, instant), and each verdict on them."""

    key: str
    source: str  # block_identifier | write_token | file
    attempt: int | None
    files: list[str] = field(default_factory=list)
    seqs: list[int | None] = field(default_factory=list)
    blocks: list[BlockRef] = field(default_factory=list)
    rolled_back: bool = False
    proposal: str = KEEP
    hudi_014: str = KEEP
    commit_metadata: str = UNKNOWN

    @property
    def first_position(self) -> tuple[Any, ...]:
        return self.blocks[0].order

    def sequence_length(self) -> int:
        """Length of the gap-free run 0,1,2,... among this attempt's sequence numbers."""
        present = {s for s in self.seqs if s is not None}
        n = 0
        while n in present:
            n += 1
        return n

    def to_dict(self) -> dict[str, Any]:
        counts = [b.record_count for b in self.blocks]
        return {
            "attempt": self.key,
            "source": self.source,
            "attempt_number": self.attempt,
            "files": list(self.files),
            "seqs": list(self.seqs),
            "blocks": [{"path": b.path, "offset": b.block_offset, "type": b.block_type, "seq": b.seq}
                       for b in self.blocks],
            "record_count": None if any(c is None for c in counts) else sum(c or 0 for c in counts),
            "rolled_back": self.rolled_back,
            "proposal": self.proposal,
            "hudi_014": self.hudi_014,
            "commit_metadata": self.commit_metadata,
        }


@dataclass
class Verdict:
    """What one rule keeps and drops for a (file group, instant)."""

    rule: str
    kept_attempts: list[str]
    dropped_attempts: list[str]
    kept_blocks: int
    dropped_blocks: int
    reason: str
    status: str = "applied"  # applied | not_applicable | unknown

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "status": self.status,
            "kept_attempts": list(self.kept_attempts),
            "dropped_attempts": list(self.dropped_attempts),
            "kept_blocks": self.kept_blocks,
            "dropped_blocks": self.dropped_blocks,
            "reason": self.reason,
        }


@dataclass
class RiskFinding:
    """One disagreement between a reader rule and the commit metadata."""

    code: str
    severity: str
    rule: str
    attempts: list[str]
    blocks: int
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "rule": self.rule,
            "attempts": list(self.attempts),
            "blocks": self.blocks,
            "message": self.message,
        }


@dataclass
class InstantBlocks:
    """The analysis of one (partition, file group, instant)."""

    partition: str
    file_id: str
    instant_time: str
    attempts: list[AttemptView]
    corrupt_blocks: list[dict[str, Any]]
    rolled_back: bool
    verdict_proposal: Verdict
    verdict_hudi_014: Verdict
    verdict_commit_metadata: Verdict
    risks: list[RiskFinding]

    @property
    def live_attempts(self) -> list[AttemptView]:
        return [a for a in self.attempts if not a.rolled_back]

    @property
    def has_duplicates(self) -> bool:
        """More than one attempt survived rollbacks."""
        return len(self.live_attempts) > 1

    @property
    def risk_level(self) -> str:
        """none | info (duplicates, all rules agree) | warning | error (committed data dropped)."""
        if any(r.severity == "error" for r in self.risks):
            return "error"
        if self.risks:
            return "warning"
        return "info" if self.has_duplicates or self.corrupt_blocks else "none"

    @property
    def interesting(self) -> bool:
        """Worth showing: duplicates, corrupt blocks, a rollback, or a risk."""
        return self.has_duplicates or bool(self.corrupt_blocks) or self.rolled_back or bool(self.risks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "file_id": self.file_id,
            "instant_time": self.instant_time,
            "attempts": [a.to_dict() for a in self.attempts],
            "corrupt_blocks": list(self.corrupt_blocks),
            "rolled_back": self.rolled_back,
            "verdict_proposal": self.verdict_proposal.to_dict(),
            "verdict_hudi_014": self.verdict_hudi_014.to_dict(),
            "verdict_commit_metadata": self.verdict_commit_metadata.to_dict(),
            "risk": {"level": self.risk_level, "findings": [r.to_dict() for r in self.risks]},
        }


# -- reading the inventory ------------------------------------------------------------------
def _file_order(path: str) -> tuple[Any, ...]:
    parsed = parse_log_file_name(posixpath.basename(path))
    if parsed is None:
        return ("", 0, "", path)
    return (*parsed.sort_key(), path)


def blocks_from_inventory(inventory: pa.Table) -> list[BlockRef]:
    """Rows of the inventory that are blocks (error rows skipped), in reader order per file."""
    refs = []
    for row in inventory.to_pylist():
        if row.get("block_index") is None or row.get("file_id") is None:
            continue
        refs.append(
            BlockRef(
                path=row["path"],
                partition=row["partition"] or "",
                file_id=row["file_id"],
                block_index=row["block_index"],
                block_offset=row["block_offset"],
                block_size=row["block_size"],
                block_type=row["block_type"],
                instant_time=row["instant_time"],
                target_instant=row["target_instant"],
                command_type=row["command_type"],
                attempt=row["attempt"],
                seq=row["seq"],
                record_count=row["record_count"],
                corrupt=bool(row["corrupt"]),
                task_attempt=row["task_attempt"],
                order=(*_file_order(row["path"]), row["block_index"]),
            )
        )
    refs.sort(key=lambda b: (b.partition, b.file_id, b.order))
    return refs


# -- rule (b): the 0.14 reader ----------------------------------------------------------------
@dataclass
class Hudi014Result:
    """Outcome of the 0.14 reconciliation over one file group's blocks."""

    kept: set[tuple[str, int]]
    rolled_back: set[tuple[str, int]]
    reconciled: bool
    identifiers_present: bool


def _bkey(block: BlockRef) -> tuple[str, int]:
    return (block.path, block.block_offset)


def reconcile_hudi_014(blocks: list[BlockRef], uncommitted: Collection[str] = ()) -> Hudi014Result:
    """`scanInternalV1` + `reconcileSpuriousBlocksAndGetValidOnes` (spec `03` §2.3) over blocks in
    read order. Returns the keys (path, offset) of data/delete blocks that the reader merges.

    Data/delete blocks of `uncommitted` instants (pending on the timeline) are skipped first, as
    the scan does for "an uncommitted block possibly from a failed write"."""
    valid: list[BlockRef] = []
    tracker: dict[str, OrderedDict[int, list[BlockRef]]] = {}
    rolled_back: set[tuple[str, int]] = set()
    identifiers = False
    for block in blocks:
        if block.corrupt:
            valid.append(block)
            continue
        if block.block_type in _HUDI014_TRACKED and block.instant_time is not None:
            if block.instant_time in uncommitted:
                continue
            valid.append(block)
            per_instant = tracker.setdefault(block.instant_time, OrderedDict())
            if block.has_identifier:
                identifiers = True
                key = int(block.attempt or 0)
            else:
                key = 0
            per_instant.setdefault(key, []).append(block)
        elif block.is_rollback:
            target = block.target_instant
            tracker.pop(target or "", None)
            for b in valid:
                if not b.corrupt and b.instant_time == target:
                    rolled_back.add(_bkey(b))
            valid = [b for b in valid if b.corrupt or b.instant_time != target]
    reconciled = False
    if identifiers and any(len(v) > 1 for v in tracker.values()):
        reconciled = True
        drop: set[tuple[str, int]] = set()
        for per_instant in tracker.values():
            if len(per_instant) < 2:
                continue
            best_count, best_attempt = -1, None
            for attempt in long_hashmap_order(per_instant):
                size = len(per_instant[attempt])
                if best_count <= size:
                    best_count, best_attempt = size, attempt
            for attempt, entries in per_instant.items():
                if attempt != best_attempt:
                    drop.update(_bkey(b) for b in entries)
        valid = [b for b in valid if _bkey(b) not in drop]
    kept = {_bkey(b) for b in valid if not b.corrupt}
    return Hudi014Result(kept, rolled_back, reconciled, identifiers)


# -- grouping into attempts -------------------------------------------------------------------
def _attempt_key(block: BlockRef) -> tuple[str, str, int | None]:
    if block.has_identifier:
        return (f"attempt:{block.attempt}", "block_identifier", block.attempt)
    if block.task_attempt is not None:
        return (f"task:{block.task_attempt}", "write_token", block.task_attempt)
    return (f"file:{block.file_name}", "file", None)


def _latest_key(attempt: AttemptView) -> tuple[Any, ...]:
    return (attempt.attempt if attempt.attempt is not None else -1, attempt.first_position)


def _proposal(attempts: list[AttemptView]) -> Verdict:
    live = [a for a in attempts if not a.rolled_back]
    sequenced = [a for a in live if a.source == "block_identifier"]
    for a in live:
        a.proposal = KEEP
    for a in attempts:
        if a.rolled_back:
            a.proposal = ROLLED_BACK
    if len(sequenced) < 2:
        reason = "one attempt" if len(live) <= 1 else "attempts without sequence numbers are all kept"
        return _verdict("proposal", attempts, lambda a: a.proposal, reason)
    winner = max(sequenced, key=lambda a: (a.sequence_length(), _latest_key(a)))
    for a in sequenced:
        a.proposal = KEEP if a is winner else DROP
    lengths = ", ".join(f"{a.key}={a.sequence_length()}" for a in sequenced)
    return _verdict("proposal", attempts, lambda a: a.proposal,
                    f"longest sequence wins ({lengths}); tie goes to the latest attempt")


def _verdict(rule: str, attempts: list[AttemptView], label: Any, reason: str, status: str = "applied") -> Verdict:
    kept = [a for a in attempts if label(a) in (KEEP, COMMITTED)]
    dropped = [a for a in attempts if label(a) not in (KEEP, COMMITTED)]
    return Verdict(
        rule=rule,
        kept_attempts=[a.key for a in kept],
        dropped_attempts=[a.key for a in dropped],
        kept_blocks=sum(len(a.blocks) for a in kept),
        dropped_blocks=sum(len(a.blocks) for a in dropped),
        reason=reason,
        status=status,
    )


def _hudi014_verdict(attempts: list[AttemptView], result: Hudi014Result) -> Verdict:
    for a in attempts:
        keys = [_bkey(b) for b in a.blocks]
        if all(k in result.rolled_back for k in keys):
            a.hudi_014 = ROLLED_BACK
        elif all(k in result.kept for k in keys):
            a.hudi_014 = KEEP
        elif any(k in result.kept for k in keys):
            a.hudi_014 = MIXED
        else:
            a.hudi_014 = DROP
    if not result.identifiers_present:
        reason = "no BLOCK_IDENTIFIER in the file group: every block is merged (0.14 and >= 0.15)"
    elif not result.reconciled:
        reason = "identifiers present but no instant has two attempt keys: no reconciliation"
    else:
        reason = "largest attempt per instant kept, ties to the attempt iterated last (HashMap<Long> order)"
    verdict = _verdict("hudi_014", attempts, lambda a: a.hudi_014, reason)
    verdict.kept_blocks = sum(1 for a in attempts for b in a.blocks if _bkey(b) in result.kept)
    verdict.dropped_blocks = sum(len(a.blocks) for a in attempts) - verdict.kept_blocks
    return verdict


def _is_committed(block: BlockRef, named: Mapping[str, int]) -> bool:
    offset = named.get(block.file_name)
    return offset is not None and block.block_offset >= offset


def _commit_verdict(attempts: list[AttemptView], named: Mapping[str, int] | None,
                    no_log_stats: bool = False) -> Verdict:
    if named is None:
        for a in attempts:
            a.commit_metadata = UNKNOWN
        reason = ("the deltacommit's write stats name no log file of this file group" if no_log_stats
                  else "no commit metadata for this instant (pending, rolled back or not supplied)")
        return _verdict("commit_metadata", attempts, lambda a: UNKNOWN, reason, status="unknown")
    for a in attempts:
        inside = [_is_committed(b, named) for b in a.blocks]
        a.commit_metadata = COMMITTED if all(inside) else SPURIOUS if not any(inside) else MIXED
    verdict = _verdict("commit_metadata", attempts, lambda a: a.commit_metadata,
                       "blocks in log files the deltacommit's write stats name are committed")
    verdict.kept_blocks = sum(1 for a in attempts for b in a.blocks if _is_committed(b, named))
    verdict.dropped_blocks = sum(len(a.blocks) for a in attempts) - verdict.kept_blocks
    return verdict


def _risks(attempts: list[AttemptView], named: Mapping[str, int] | None,
           hudi014: Hudi014Result) -> list[RiskFinding]:
    if named is None:
        return []
    rules: list[tuple[str, Any]] = [
        ("proposal", lambda a, b: a.proposal == KEEP),
        ("hudi_014", lambda a, b: _bkey(b) in hudi014.kept),
    ]
    findings = []
    for rule, kept_by_rule in rules:
        keeps_spurious = []
        drops_committed = []
        for a in attempts:
            if a.rolled_back:
                continue
            for b in a.blocks:
                committed = _is_committed(b, named)
                kept = kept_by_rule(a, b)
                if kept and not committed:
                    keeps_spurious.append((a.key, b))
                if not kept and committed:
                    drops_committed.append((a.key, b))
        if keeps_spurious:
            keys = sorted({k for k, _ in keeps_spurious})
            findings.append(RiskFinding(
                "KEEPS_UNCOMMITTED_BLOCKS", "warning", rule, keys, len(keeps_spurious),
                f"rule {rule} merges {len(keeps_spurious)} block(s) in log files the commit does not name",
            ))
        if drops_committed:
            keys = sorted({k for k, _ in drops_committed})
            findings.append(RiskFinding(
                "DROPS_COMMITTED_BLOCKS", "error", rule, keys, len(drops_committed),
                f"rule {rule} drops {len(drops_committed)} block(s) the commit names: data loss (#10803)",
            ))
    return findings


# -- which file groups need the analysis, as columns -------------------------------------------------
def groups_worth_analysing(inventory: pa.Table, commit_log_files: CommitLogFiles | None = None,
                           rolled_back_instants: Collection[str] = (), uncommitted_instants: Collection[str] = (),
                           ) -> pa.Table:
    """The rows of `inventory` of the file groups whose analysis may be interesting (duplicates, corrupt blocks, a
    rollback or a risk: :attr:`InstantBlocks.interesting`), in their order, judged with grouped Arrow operations
    instead of an object per block. A file group is left out only when it cannot be interesting: no corrupt
    block, no rollback command block, no CDC or Lance data block (the 0.14 reader does not track them), and for
    each instant of its data and delete blocks one attempt (one `BLOCK_IDENTIFIER` attempt, write token or file),
    not rolled back on the timeline, and every block where the deltacommit's write stats say (in a named file, at
    or after its log offset) when they name a log file of the group. Then both reading rules keep all its blocks,
    the commit agrees, and :func:`analyze_duplicates` finds nothing to show there."""
    is_block = pc.and_(pc.is_valid(inventory["block_index"]), pc.is_valid(inventory["file_id"]))
    if not pc.all(is_block).as_py():  # error rows: left out (the analysis skips them), the columns it reads only
        inventory = inventory.filter(is_block)
    if inventory.num_rows == 0:
        return inventory
    blocks = inventory.select(["partition", "file_id", "instant_time", "block_type", "corrupt", "command_type",
                               "target_instant", "attempt", "seq", "path", "task_attempt", "block_offset"])
    partition = pc.fill_null(blocks["partition"], "")
    file_id = blocks["file_id"]
    instant = blocks["instant_time"]
    block_type = blocks["block_type"]
    named = _named_columns(commit_log_files)
    if named is None or any(pc.any(pc.match_substring(c, _SEP)).as_py() for c in (partition, file_id, instant)):
        return blocks  # a separator inside a key would make the joined keys ambiguous: every group is analysed
    group = pc.binary_join_element_wise(partition, file_id, _SEP)
    corrupt = pc.fill_null(blocks["corrupt"], False)
    data = _and(pc.invert(corrupt), pc.is_in(block_type, pa.array(sorted(DATA_OR_DELETE))), pc.is_valid(instant))
    rollback = _and(pc.equal(block_type, "COMMAND_BLOCK"), pc.equal(blocks["command_type"], 0),
                    pc.is_valid(blocks["target_instant"]))
    untracked = _and(data, pc.invert(pc.is_in(block_type, pa.array(sorted(_HUDI014_TRACKED)))))
    worth = _or(corrupt, rollback, untracked)
    # Instants of the group with more than one attempt (the key `_attempt_key` gives).
    attempt, seq = blocks["attempt"], blocks["seq"]
    identified = _and(pc.is_valid(attempt), pc.is_valid(seq), pc.not_equal(attempt, -1), pc.not_equal(seq, -1))
    file_name = base_names(blocks["path"])
    attempt_key = pc.if_else(
        identified, pc.binary_join_element_wise("a", pc.cast(attempt, pa.string()), ""),
        pc.if_else(pc.is_valid(blocks["task_attempt"]),
                   pc.binary_join_element_wise("t", pc.cast(blocks["task_attempt"], pa.string()), ""),
                   pc.binary_join_element_wise("f", file_name, "")))
    group_instant = pc.binary_join_element_wise(group, instant, _SEP)
    worth = _or(worth, _and(data, _several_attempts(pc.filter(group_instant, data), pc.filter(attempt_key, data),
                                                    group_instant)))
    # Instants the timeline rolled back; an instant both pending and committed.
    rolled = pa.array(sorted(rolled_back_instants), pa.string())
    both = pa.array(sorted(set(uncommitted_instants) & set(named.instants)), pa.string())
    worth = _or(worth, _and(data, _or(pc.is_in(instant, rolled), pc.is_in(instant, both))))
    # Blocks the commit does not name (another file, or before the committed append's offset) where it names some.
    commit_group = pc.binary_join_element_wise(instant, file_id, _SEP)
    position = pc.index_in(pc.binary_join_element_wise(commit_group, file_name, _SEP), named.keys)
    offset = pc.take(named.offsets, position)
    outside = pc.fill_null(pc.less(blocks["block_offset"], offset), True)
    worth = _or(worth, _and(data, pc.is_in(commit_group, named.groups), outside))
    chosen = pc.unique(pc.filter(group, worth))
    return inventory.filter(pc.is_in(group, chosen))


def _several_attempts(keys: Any, attempts: Any, of: Any) -> Any:
    """Whether each key of `of` has more than one distinct attempt among the (`keys`, `attempts`) pairs: with
    dictionary codes, one kernel at a time (a grouped aggregation runs on Arrow's thread pool, and its buffers
    stayed in the process: +70 MB on L's 100k blocks)."""
    key_codes = as_array(pc.dictionary_encode(keys))
    attempt_codes = as_array(pc.dictionary_encode(attempts))
    width = max(1, len(attempt_codes.dictionary))
    pairs = pc.unique(pc.add(pc.multiply(pc.cast(key_codes.indices, pa.int64()), width),
                             pc.cast(attempt_codes.indices, pa.int64())))
    counts = pc.value_counts(pc.divide(pairs, width))  # integer division: the key's code
    several = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    return pc.is_in(of, pc.take(key_codes.dictionary, several))


#: Joins the parts of a key; a key part holding it sends every group to the analysis.
_SEP = "\x00"


@dataclass(frozen=True)
class _NamedColumns:
    """The log files a deltacommit's write stats name, as columns: ``instant, file id`` of each entry (`groups`),
    ``instant, file id, file name`` (`keys`) with its log offset (`offsets`), and every instant with metadata."""

    groups: pa.Array
    keys: pa.Array
    offsets: pa.Array
    instants: tuple[str, ...]


def _named_columns(commit_log_files: CommitLogFiles | None) -> _NamedColumns | None:
    """:class:`_NamedColumns` of `commit_log_files` (what :func:`_named_files` reads per group); ``None`` when a
    part of a key holds the separator."""
    instants: list[str] = []
    file_ids: list[str] = []
    names: list[str] = []
    offsets: list[int] = []
    ready = isinstance(commit_log_files, NamedLogFiles)
    for instant, per_file in (commit_log_files or {}).items():
        for file_id, entry in per_file.items():
            named = cast(Mapping[str, int], entry) if ready else _named_files(entry)
            for name, offset in named.items():
                instants.append(instant)
                file_ids.append(file_id)
                names.append(name)
                offsets.append(offset)
    try:
        columns = [pa.array(c, pa.string()) for c in (instants, file_ids, names)]
        offset_column = pa.array(offsets, pa.int64())
    except (pa.ArrowException, OverflowError, UnicodeError):
        return None  # an offset beyond 64 bits, a name that is not text: every group is analysed
    if any(pc.any(pc.match_substring(c, _SEP)).as_py() for c in columns):
        return None
    groups = pc.binary_join_element_wise(columns[0], columns[1], _SEP)
    return _NamedColumns(pc.unique(groups), pc.binary_join_element_wise(groups, columns[2], _SEP), offset_column,
                         tuple(commit_log_files or ()))


def _and(*masks: Any) -> Any:
    """Element-wise and, a null (a value missing) counting as false."""
    out = pc.fill_null(masks[0], False)
    for mask in masks[1:]:
        out = pc.and_(out, pc.fill_null(mask, False))
    return out


def _or(*masks: Any) -> Any:
    """Element-wise or, a null counting as false."""
    out = pc.fill_null(masks[0], False)
    for mask in masks[1:]:
        out = pc.or_(out, pc.fill_null(mask, False))
    return out


# -- the analysis -----------------------------------------------------------------------------
def analyze_duplicates(
    inventory: pa.Table | list[BlockRef],
    commit_log_files: CommitLogFiles | None = None,
    rolled_back_instants: Iterable[str] = (),
    only_interesting: bool = False,
    uncommitted_instants: Iterable[str] = (),
) -> list[InstantBlocks]:
    """Analyse every (partition, file group, instant) of the inventory; see the module docstring.

    `commit_log_files` maps each completed deltacommit to `{file_id: {log file name}}` from its
    write stats; `rolled_back_instants` lists instants the timeline says were rolled back (their
    blocks are shown as rolled back even without a command block, as on table version 8+);
    `uncommitted_instants` lists pending write instants (readers skip their blocks: both reading
    rules label them ``uncommitted``).
    """
    timeline_rolled_back = set(rolled_back_instants)
    uncommitted = set(uncommitted_instants)
    if isinstance(inventory, pa.Table) and only_interesting:
        # Only the file groups that may hold something to show become objects (all of a big table's others are
        # judged as columns: one attempt per instant, every block where its commit says).
        inventory = groups_worth_analysing(inventory, commit_log_files, timeline_rolled_back, uncommitted)
    blocks = blocks_from_inventory(inventory) if isinstance(inventory, pa.Table) else list(inventory)
    blocks.sort(key=lambda b: (b.partition, b.file_id, b.order))
    by_group: OrderedDict[tuple[str, str], list[BlockRef]] = OrderedDict()
    for b in blocks:
        by_group.setdefault((b.partition, b.file_id), []).append(b)
    results: list[InstantBlocks] = []
    for (partition, file_id), group in by_group.items():
        results.extend(
            _analyze_file_group(partition, file_id, group, commit_log_files, timeline_rolled_back, uncommitted)
        )
    if only_interesting:
        results = [r for r in results if r.interesting]
    return results


def _analyze_file_group(
    partition: str,
    file_id: str,
    group: list[BlockRef],
    commit_log_files: CommitLogFiles | None,
    timeline_rolled_back: set[str],
    uncommitted: set[str] | None = None,
) -> list[InstantBlocks]:
    uncommitted = uncommitted or set()
    hudi014 = reconcile_hudi_014(group, uncommitted)
    command_targets = {b.target_instant for b in group if b.is_rollback}
    per_instant: OrderedDict[str, OrderedDict[str, AttemptView]] = OrderedDict()
    corrupt_by_instant: dict[str, list[dict[str, Any]]] = {}
    last_instant_in_file: dict[str, tuple[str, str]] = {}
    pending_corrupt: list[BlockRef] = []
    for b in group:
        if b.corrupt:
            owner = last_instant_in_file.get(b.path)
            if owner is None:
                pending_corrupt.append(b)
            else:
                corrupt_by_instant.setdefault(owner[0], []).append(_corrupt_entry(b, owner[1]))
            continue
        if b.block_type not in DATA_OR_DELETE or b.instant_time is None:
            continue
        key, source, number = _attempt_key(b)
        attempts = per_instant.setdefault(b.instant_time, OrderedDict())
        view = attempts.get(key)
        if view is None:
            view = attempts[key] = AttemptView(key, source, number)
        view.blocks.append(b)
        view.seqs.append(b.seq if b.has_identifier else None)
        if b.file_name not in view.files:
            view.files.append(b.file_name)
        last_instant_in_file[b.path] = (b.instant_time, key)
        for c in [c for c in pending_corrupt if c.path == b.path]:
            corrupt_by_instant.setdefault(b.instant_time, []).append(_corrupt_entry(c, None))
            pending_corrupt.remove(c)
    results = []
    for instant, attempts_map in per_instant.items():
        views = list(attempts_map.values())
        rolled = instant in command_targets or instant in timeline_rolled_back
        for a in views:
            a.rolled_back = rolled or all(_bkey(b) in hudi014.rolled_back for b in a.blocks)
        named: dict[str, int] | None = None
        no_log_stats = False
        if commit_log_files is not None and instant in commit_log_files:
            named = _named_files(commit_log_files[instant].get(file_id, ()))
            if not named:
                # The commit wrote no log file of this group: its blocks come from elsewhere (the
                # metadata table's file-group initialisation writes empty DELETE blocks outside
                # any write stat). Nothing to judge them by.
                named, no_log_stats = None, True
        proposal = _proposal(views)
        hudi = _hudi014_verdict(views, hudi014)
        if instant in uncommitted:
            for a in views:
                a.proposal = a.hudi_014 = UNCOMMITTED
            reason = "pending instant: readers skip blocks of uncommitted writes"
            proposal = _verdict("proposal", views, lambda a: a.proposal, reason, status="not_applicable")
            hudi = _verdict("hudi_014", views, lambda a: a.hudi_014, reason, status="not_applicable")
        commit = _commit_verdict(views, named, no_log_stats)
        results.append(
            InstantBlocks(
                partition=partition,
                file_id=file_id,
                instant_time=instant,
                attempts=views,
                corrupt_blocks=corrupt_by_instant.get(instant, []),
                rolled_back=all(a.rolled_back for a in views),
                verdict_proposal=proposal,
                verdict_hudi_014=hudi,
                verdict_commit_metadata=commit,
                risks=_risks(views, named, hudi014),
            )
        )
    return results


def _named_files(entry: Mapping[str, int] | Iterable[str]) -> dict[str, int]:
    if isinstance(entry, Mapping):
        return {posixpath.basename(str(k)): int(v or 0) for k, v in entry.items()}
    return {posixpath.basename(str(k)): 0 for k in entry}


def _corrupt_entry(block: BlockRef, after_attempt: str | None) -> dict[str, Any]:
    return {
        "path": block.path,
        "offset": block.block_offset,
        "size": block.block_size,
        # A corrupt block has no header; it is attributed to the attempt of the block before it
        # in the same file (None: no earlier block in that file).
        "after_attempt": after_attempt,
    }


# -- table level ----------------------------------------------------------------------------------
def commit_log_files(table: HudiTable, pool: WorkerPool | None = None) -> dict[str, dict[str, dict[str, int]]]:
    """``{instant: {file_id: {log file name: logOffset}}}`` from the write stats of every completed
    deltacommit of the active timeline (`HoodieDeltaWriteStat.path`, `logFiles`, `logOffset`). With `pool` (worker
    processes over local files) the bodies the active-timeline index lacks are decoded there."""
    return _CommitLogFiles(table, pool).result()


#: Delta commit bodies from which their log-file stats are read in worker processes (when a pool is given).
POOL_MIN_BODIES = 100
#: Most bodies in a batch given to a worker (a batch of Avro bodies is decoded together: the bigger the cheaper).
POOL_BODY_BATCH = 512
_REF, _METADATA, _NO_METADATA, _REDO = 0, 1, 2, 3

COMMIT_REFS_SCHEMA = pa.schema([
    ("file", pa.string()),  # the instant file
    ("kind", pa.int8()),  # 1: commit metadata (its stats' rows follow), 2: none, 3: decode it in the caller; 0: a stat
    ("file_id", pa.string()),  # a stat's row: what `_named_refs` makes of it
    ("log_name", pa.string()),
    ("log_offset", pa.int64()),
    ("log_files", pa.list_(pa.string())),
])


def commit_log_refs(spec: StorageSpec, paths: list[str]) -> pa.Table:
    """Batch function: the write stats of completed deltacommit files (root-relative paths) that name log files,
    as :meth:`CommitMetadata.log_write_refs` reads them and :func:`_named_refs` keeps them, in each body's order.
    Each file has a row of its own first: commit metadata, none (an empty body), or to be decoded by the caller (a
    body that fails to read or decode, or holds what Arrow cannot: the caller's timeline then reports it).

    Avro bodies (layout 2) of one writer schema are decoded together, column-wise (:mod:`hudi_core.formats.avro.
    vector`: a batch decodes whole and exactly, or is read the ordinary way), the others by
    :func:`~hudi_core.formats.timeline.bodies.decode_body` as the timeline decodes them."""
    from hudi_core.formats.timeline.bodies import decode_body
    from hudi_core.formats.timeline.records import CommitMetadata

    storage = spec.open()
    data: list[bytes | None] = []
    for path in paths:
        try:
            data.append(storage.read(path))
        except Exception:  # the caller reads it again and reports what it meets
            data.append(None)
    columnwise = _avro_log_refs(data)
    rows: list[tuple[Any, ...]] = []
    for k, path in enumerate(paths):
        if k in columnwise:
            rows.append((path, _METADATA, None, None, None, None))
            rows.extend((path, _REF, *ref) for ref in columnwise[k])
            continue
        try:
            if data[k] is None:
                raise ValueError("not read")
            record = decode_body(data[k], DELTA_COMMIT, State.COMPLETED).record  # type: ignore[arg-type]
            if not isinstance(record, CommitMetadata):
                rows.append((path, _NO_METADATA, None, None, None, None))
                continue
            refs = [(path, _REF, *ref) for ref in _named_refs(record.log_write_refs())]
            if not all(_arrow_safe(ref) for ref in refs):
                raise ValueError("a stat Arrow cannot hold")
        except Exception:  # the caller decodes it again and reports (or raises) what it meets
            rows.append((path, _REDO, None, None, None, None))
            continue
        rows.append((path, _METADATA, None, None, None, None))
        rows.extend(refs)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(COMMIT_REFS_SCHEMA)
    return pa.table(dict(zip(COMMIT_REFS_SCHEMA.names, columns, strict=True)), schema=COMMIT_REFS_SCHEMA)


#: The fields of a `HoodieWriteStat` the duplicate analysis reads, as the column-wise decoder captures them.
_REF_FIELDS = {"fileId": ("file_id", "string"), "path": ("path", "string"), "logOffset": ("log_offset", "long"),
               "logFiles": ("log_files", "string_list")}


def _avro_log_refs(data: list[bytes | None]) -> dict[int, list[tuple[Any, ...]]]:
    """``{k: [what _named_refs makes of a stat]}`` of the Avro bodies among `data` the column-wise decoder reads,
    in each body's order; the rest are left out."""
    import numpy as np

    from hudi_core.formats.avro.container import AVRO_MAGIC
    from hudi_core.formats.timeline.write_stats import containers_columnwise

    avro = [k for k, d in enumerate(data) if d is not None and d[:4] == AVRO_MAGIC]
    if not avro:
        return {}
    bodies = pa.array([data[k] for k in avro], pa.binary())
    tables, done = containers_columnwise(bodies, np.arange(len(avro)), [DELTA_COMMIT] * len(avro), _refs_tree,
                                         _decode_refs)
    out: dict[int, list[tuple[Any, ...]]] = {avro[int(b)]: [] for b in np.flatnonzero(done)}
    for table in tables:
        may = _and(pc.is_valid(table["file_id"]), pc.not_equal(table["file_id"], ""),
                   _or(pc.starts_with(base_names(table["path"]), "."),
                       pc.greater(pc.list_value_length(table["log_files"]), 0)))
        kept = table.filter(may)
        for body, file_id, path, offset, log_files in zip(*(kept[c].to_pylist() for c in (
                "body", "file_id", "path", "log_offset", "log_files")), strict=True):
            out[avro[body]].extend(_named_refs([(file_id, path, offset, log_files)]))
    return out


@functools.lru_cache(maxsize=32)
def _refs_tree(schema_json: bytes) -> tuple[Any, str]:
    from hudi_core.formats.avro import vector as av
    from hudi_core.formats.timeline.write_stats import commit_writer_schema

    parsed, record_type = commit_writer_schema(schema_json)
    return av.compile_schema(parsed, (("partitionToWriteStats",),), _REF_FIELDS), record_type


def _decode_refs(buf: Any, starts: Any, ends: Any, members: Any, header: int, tree: Any) -> tuple[pa.Table, Any]:
    """The stats' (body, file_id, path, log_offset, log_files) of one group of containers of one header, in each
    body's order (`containers_columnwise`'s group decoder)."""
    import numpy as np

    from hudi_core.formats.avro import vector as av
    from hudi_core.formats.avro.container import container_datums

    members, datum_starts, sizes = container_datums(buf, starts, ends, members, header)
    cap = av.decode(tree, buf, datum_starts, datum_starts + sizes, {s: k for s, k in _REF_FIELDS.values()})
    datum = cap.entry_datum[cap.row_entry]
    n = datum.size

    def strings(ids: Any, at: Any, lengths: Any) -> pa.Array:
        full_start, full_len, valid = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, bool)
        full_start[ids], full_len[ids], valid[ids] = at, lengths, True
        return av.gather_strings(buf, full_start, full_len, valid)

    ids, values = cap.columns["log_offset"]
    offsets, have = np.zeros(n, np.int64), np.zeros(n, bool)
    offsets[ids], have[ids] = values, True
    ids, at, lengths = cap.columns["log_files"]
    order = np.argsort(ids, kind="stable")
    list_offsets = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(ids, minlength=n) if ids.size else np.zeros(n, np.int64), out=list_offsets[1:])
    log_files = pa.ListArray.from_arrays(pa.array(list_offsets, pa.int32()),
                                         av.gather_strings(buf, at[order], lengths[order], None))
    table = pa.table({"body": pa.array(members[datum], pa.int64()), "file_id": strings(*cap.columns["file_id"]),
                      "path": strings(*cap.columns["path"]), "log_offset": pa.array(offsets, pa.int64(), mask=~have),
                      "log_files": log_files})
    # A body's stats in the order read: rows are numbered as read, so a stable sort by body keeps it.
    return table.take(pa.array(np.argsort(datum, kind="stable"), pa.int64())), members


def _arrow_safe(ref: tuple[Any, ...]) -> bool:
    _, _, file_id, log_name, offset, log_files = ref
    texts = [file_id, log_name, *log_files]
    return (all(t is None or (isinstance(t, str) and (t.isascii() or is_valid_name(t))) for t in texts)
            and (offset is None or (isinstance(offset, int) and -(1 << 63) <= offset < (1 << 63))))


class _CommitLogFiles:
    """:func:`commit_log_files` in two steps: made, it hands the bodies to decode to the pool's workers (the
    caller builds the file-system view meanwhile); :meth:`result` collects them."""

    def __init__(self, table: HudiTable, pool: WorkerPool | None) -> None:
        self.table = table
        self.timeline = timeline = table.timeline
        self.delta_commits = [i for i in timeline.completed() if i.action == "deltacommit"]
        everything = list(range(len(self.delta_commits)))
        self.indexed = _indexed_log_refs(timeline, self.delta_commits, everything)
        # The rest: read from the index's columns when a bulk decode fills it, else from the workers' rows.
        self.rest = [k for k in everything if k not in self.indexed]
        self.stage: PoolStage | None = None
        files = [f.path for k in self.rest if (f := self.delta_commits[k].file(State.COMPLETED)) is not None]
        if pool is not None and table.storage.is_local and len(files) >= POOL_MIN_BODIES:
            size = max(1, min(POOL_BODY_BATCH, -(-len(files) // pool.workers)))
            self.stage = pool.submit(commit_log_refs, table.storage.spec, files, size, COMMIT_REFS_SCHEMA)

    def result(self) -> dict[str, dict[str, dict[str, int]]]:
        timeline, delta_commits, indexed = self.timeline, self.delta_commits, self.indexed
        decoded: dict[str, list[tuple[Any, ...]] | None] = {}
        if self.stage is not None:
            decoded = _refs_by_file(self.stage.result())
        elif self.rest:
            # The bulk decode keeps each body's index row (one by one kept every parsed JSON body, 2.1 GB of dicts
            # on L's 10k deltacommits), and on a big timeline its worker rows join the index, read as columns too.
            # What the index already has is not rebuilt as records.
            timeline.decode_all(self.table.executor, [delta_commits[k] for k in self.rest],
                                only=("deltacommit", State.COMPLETED))
            indexed.update(_indexed_log_refs(timeline, delta_commits, self.rest))
        out = NamedLogFiles()
        for position, inst in enumerate(delta_commits):
            if position in indexed:
                named: Iterable[tuple[str, str | None, int, tuple[str, ...]]] = _named_refs(indexed[position])
            else:
                file = inst.file(State.COMPLETED)
                got = decoded.get(file.path, _REDO) if file is not None else _REDO
                if got is None:
                    continue
                if isinstance(got, list):
                    named = got
                else:  # not decoded by a worker: here, as the timeline decodes it (and reports a failure)
                    meta = timeline.commit_metadata(inst)
                    if meta is None:
                        continue
                    named = _named_refs(meta.log_write_refs())
            per_file: dict[str, dict[str, int]] = out.setdefault(inst.requested_time, {})
            for stat_file_id, log_name, offset, log_files in named:
                names = per_file.setdefault(stat_file_id, {})
                if log_name is not None:
                    names[log_name] = min(names.get(log_name, 1 << 62), offset)
                for name in log_files:
                    names.setdefault(name, 0)
        return out


class NamedLogFiles(dict[str, dict[str, dict[str, int]]]):
    """What :func:`commit_log_files` returns: ``{instant: {file_id: {log file name: logOffset}}}``, a plain dict
    whose entries are already what :func:`_named_files` makes of them (file names, integer offsets), so the
    columnar selection takes them as they are."""


def _named_refs(refs: Iterable[tuple[Any, ...]]) -> list[tuple[str, str | None, int, tuple[str, ...]]]:
    """Of the ``(file_id, path, log_offset, log_files)`` of a body's write stats, those naming log files, as
    :func:`commit_log_files` reads them: ``(file_id, the path's file name when it is a log file's, the offset
    (0 when missing), the file names of `log_files`)``. A base-file stat names none (the analysis reads a missing
    and an empty entry alike: L's 900k insert stats were not made 900k empty dicts)."""
    out = []
    for stat_file_id, path, offset, log_files in refs:
        if not stat_file_id:
            continue
        file_name = posixpath.basename(path) if path else None
        is_log = bool(file_name and file_name.startswith(".") and parse_log_file_name(file_name) is not None)
        if not is_log and not log_files:
            continue
        out.append((stat_file_id, file_name if is_log else None, int(offset or 0),
                    tuple(posixpath.basename(name) for name in log_files)))
    return out


def _refs_by_file(rows: pa.Table) -> dict[str, list[tuple[str, str | None, int, tuple[str, ...]]] | None]:
    """The rows of :func:`commit_log_refs` by instant file: its :func:`_named_refs`, ``None`` for a file without
    commit metadata; a file to decode again is left out."""
    out: dict[str, list[tuple[str, str | None, int, tuple[str, ...]]] | None] = {}
    current: list[tuple[str, str | None, int, tuple[str, ...]]] = []
    for file, kind, file_id, log_name, offset, log_files in zip(
            *(rows[c].to_pylist() for c in COMMIT_REFS_SCHEMA.names), strict=True):
        if kind == _REF:
            current.append((file_id, log_name, offset, tuple(log_files)))
        elif kind == _METADATA:
            current = out[file] = []
        elif kind == _NO_METADATA:
            out[file] = None
    return out


#: A path whose file name starts with a dot (a log file's does): the stats worth a Python row.
_DOT_FILE = r"(^|/)\.[^/]*$"


def _indexed_log_refs(timeline: ActiveTimeline, instants: list[Instant], positions: list[int]
                      ) -> dict[int, list[tuple[Any, ...]]]:
    """``position in instants -> [(file_id, path, log_offset, log_files)]`` of the stats that may name a log file
    (a dot file's path, or log files), in each body's order, for the instants at `positions` whose stats the
    active-timeline index has: read from its columns, four fields of a million stats on L without a Python object
    per base-file stat (as tuples they took ~650 MB with their mapped pages). An instant with no such stat maps to
    ``[]``."""
    index = timeline.summaries()
    files = {k: instants[k].file(State.COMPLETED) for k in positions}
    present = [k for k in positions if files[k] is not None]
    got = index.stats_table([files[k] for k in present],  # type: ignore[misc]
                            ("file_id", "path", "log_offset", "log_files")) if index is not None and present else None
    if got is None:
        return {}
    stats, covered = got
    out: dict[int, list[tuple[Any, ...]]] = {present[k]: [] for k in covered}
    wanted = pc.or_(pc.fill_null(pc.match_substring_regex(stats["path"], _DOT_FILE), False),
                    pc.fill_null(pc.greater(pc.list_value_length(stats["log_files"]), 0), False))
    rows = stats.filter(wanted)  # a copy: every stat's path was read, those pages of the index are not read again
    del stats, wanted
    release_mapped_pages()
    for body, file_id, path, offset, log_files in zip(*(rows[c].to_pylist() for c in (
            "body", "file_id", "path", "log_offset", "log_files")), strict=True):
        out[present[body]].append((file_id, path, offset, tuple(log_files or ())))
    return out


def rolled_back_instants(table: HudiTable) -> set[str]:
    """Instants that rollbacks and restores of the active timeline rolled back (or plan to)."""
    from hudi_core.table.facts import rollback_facts

    return {t for fact in rollback_facts(table.timeline) for t in fact.rolled_back}


def duplicate_analysis(
    table: HudiTable,
    partition: str | None = None,
    file_id: str | None = None,
    only_interesting: bool = False,
    decode_counts: bool = True,
) -> list[InstantBlocks]:
    """The duplicate analysis of a table: inventory (with record counts unless `decode_counts` is off:
    the verdicts do not need them) through the executor, commit metadata and rollbacks from the timeline.

    On local files of a big table worker processes start first: they decode the deltacommits' write stats while
    this process builds the file-system view, then scan the log headers (rows as Arrow). With `only_interesting`
    the file groups with nothing to show are found as columns (:func:`groups_worth_analysing`) and, on local disk,
    record counts are read for the others' files only."""
    from hudi_core.services.log_inventory import log_file_paths, scan_paths, scan_pool

    with scan_pool(table) or nullcontext() as pool:
        commits = _CommitLogFiles(table, pool)
        # Record counts in a second scan of the interesting groups' files only: on local disk, where a header scan
        # is cheap; on an object store every file is fetched once, with its counts (a second GET of each file
        # would cost more than the blocks it saves decoding).
        counts_now = decode_counts and (not only_interesting or not table.storage.is_local)
        inventory = scan_paths(table, log_file_paths(table, partition, file_id), counts_now, pool=pool)
        named = commits.result()
        rolled_back = rolled_back_instants(table)
        uncommitted = uncommitted_write_instants(table)
        if decode_counts and not counts_now:
            shown = groups_worth_analysing(inventory, named, rolled_back, uncommitted)
            inventory = scan_paths(table, pc.unique(shown["path"]).to_pylist(), True, pool=pool)
    return analyze_duplicates(inventory, named, rolled_back, only_interesting, uncommitted_instants=uncommitted)


def uncommitted_write_instants(table: HudiTable) -> set[str]:
    """Pending commits and delta commits: readers skip their blocks, so they are not duplicates."""
    return {i.requested_time for i in table.timeline.pending() if i.action in ("deltacommit", "commit")}


DUPLICATES_SCHEMA = pa.schema([
    ("partition", pa.string()),
    ("file_id", pa.string()),
    ("instant_time", pa.string()),
    ("attempts", pa.string()),  # "attempt:0[0,1] attempt:1[0,1,2]" (seq "-" = no identifier)
    ("attempt_count", pa.int32()),
    ("corrupt_blocks", pa.int32()),
    ("rolled_back", pa.bool_()),
    ("proposal_keeps", pa.list_(pa.string())),
    ("hudi_014_keeps", pa.list_(pa.string())),
    ("commit_keeps", pa.list_(pa.string())),  # null when the commit metadata is unknown
    ("risk_level", pa.string()),  # none | info | warning | error
    ("findings", pa.list_(pa.string())),  # "CODE(rule)"
])


def duplicates_to_arrow(results: list[InstantBlocks]) -> pa.Table:
    """One row per (partition, file group, instant) of :func:`analyze_duplicates`' result."""
    rows = []
    for r in results:
        commit = r.verdict_commit_metadata
        rows.append({
            "partition": r.partition,
            "file_id": r.file_id,
            "instant_time": r.instant_time,
            "attempts": " ".join(
                f"{a.key}[{','.join('-' if s is None else str(s) for s in a.seqs)}]" for a in r.attempts),
            "attempt_count": len(r.attempts),
            "corrupt_blocks": len(r.corrupt_blocks),
            "rolled_back": r.rolled_back,
            "proposal_keeps": r.verdict_proposal.kept_attempts,
            "hudi_014_keeps": r.verdict_hudi_014.kept_attempts,
            "commit_keeps": None if commit.status == "unknown" else commit.kept_attempts,
            "risk_level": r.risk_level,
            "findings": [f"{f.code}({f.rule})" for f in r.risks],
        })
    return pa.Table.from_pylist(rows, schema=DUPLICATES_SCHEMA)
