"""Avro schemas as Hudi compares them: parsing, the flattened field list, and the change between two schemas.

Every rule that decides what a change between two recorded schemas *is* lives here, each from
Hudi 1.x's source:

* **Readable or not** follows `org.apache.hudi.avro.AvroSchemaCompatibility` (Avro 1.10's
  `SchemaCompatibility` as Hudi modified it), with the older schema as the writer and the newer one as
  the reader (`AvroSchemaUtils.isSchemaCompatible(prevSchema, newSchema)`: "newSchema is considered
  compatible to prevSchema iff data written using prevSchema could be read by newSchema"):

  - a field of the new record missing from the old one needs a default (`READER_FIELD_MISSING_DEFAULT_VALUE`);
  - a field of the old record missing from the new one is skipped (a projection);
  - type promotions Avro allows: int -> long, float, double; long -> float, double; float -> double;
    string -> bytes; bytes -> string; and Hudi's own addition: int, long, float, double -> string
    (`case STRING: isTypeNumeric(writer) || writer == BYTES`);
  - a writer union is readable when each of its branches is (a field made required, `["null", T]` -> `T`,
    is not: the null branch has no reader, `MISSING_UNION_BRANCH`); a reader union when one branch reads
    the writer (`T` -> `["null", T]` is);
  - enums: the reader must hold every writer symbol (`MISSING_ENUM_SYMBOLS`); fixed: the same size;
  - decimals (`checkDecimalWidening`, Hudi 1.x): a decimal may widen, never lose integer digits
    (precision - scale) nor scale; Hudi checks it for fixed decimals, and `SchemaChangeUtils.isTypeUpdateAllow`
    (schema-on-read evolution) applies the same to every decimal, as this module does.

* **Nested fields** are named as Hudi names them in its messages (`AvroSchemaCompatibility.getLocationName`,
  `AvroSchemaUtils.findAnyMissingFields`): dotted record paths, ``.element`` for an array's items and
  ``.value`` for a map's values (``address.zip``, ``tags.element``, ``props.value.unit``).

* **Meta fields** (`_hoodie_commit_time`, `_hoodie_commit_seqno`, `_hoodie_record_key`,
  `_hoodie_partition_path`, `_hoodie_file_name`, `_hoodie_operation`: `HoodieRecord.HOODIE_META_COLUMNS_WITH_OPERATION`)
  are left out of the comparison, as Hudi compares table schemas without them
  (`HoodieAvroUtils.removeMetadataFields`, `TableSchemaResolver.getTableAvroSchema(false)`): a commit schema
  recorded with them and one without are the same table schema.

A change that readers of older data fail on is flagged `breaks_readers`: a type narrowed or changed
incompatibly, a required field added without a default, a field made required, enum symbols removed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import orjson

#: `HoodieRecord.HOODIE_META_COLUMNS_WITH_OPERATION`: left out of schema comparisons.
META_FIELDS = frozenset({"_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                         "_hoodie_partition_path", "_hoodie_file_name", "_hoodie_operation"})

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_NUMERIC = ("int", "long", "float", "double")
#: writer type -> reader types that read it (`AvroSchemaCompatibility.calculateCompatibility`, Hudi 1.x).
_PROMOTIONS: dict[str, frozenset[str]] = {
    "int": frozenset({"long", "float", "double", "string"}),
    "long": frozenset({"float", "double", "string"}),
    "float": frozenset({"double", "string"}),
    "double": frozenset({"string"}),
    "string": frozenset({"bytes"}),
    "bytes": frozenset({"string"}),
}


class SchemaError(ValueError):
    """A recorded schema that is not an Avro schema this module reads (names the reason)."""


class ChangeKind(StrEnum):
    """What happened to one field between two consecutive schemas."""

    ADDED = "added"
    REMOVED = "removed"
    RENAMED = "renamed"  # the new field's `aliases` name the old one (Avro `lookupWriterField`)
    TYPE_PROMOTED = "type_promoted"
    TYPE_NARROWED = "type_narrowed"
    TYPE_CHANGED = "type_changed"
    LOGICAL_TYPE_CHANGED = "logical_type_changed"  # same Avro type, another logical type (Avro ignores it)
    MADE_NULLABLE = "made_nullable"
    MADE_REQUIRED = "made_required"
    DEFAULT_ADDED = "default_added"
    DEFAULT_REMOVED = "default_removed"
    DEFAULT_CHANGED = "default_changed"
    NAME_CHANGED = "name_changed"  # a record, enum or fixed type's full name


@dataclass(frozen=True)
class AvroType:
    """One Avro type, names resolved. `items` is an array's element or a map's value type; `branches` the
    branches of a union; `fields` a record's fields (empty for a recursive reference, `recursive`)."""

    kind: str
    logical: str | None = None
    name: str | None = None
    precision: int | None = None
    scale: int | None = None
    size: int | None = None
    symbols: tuple[str, ...] = ()
    items: AvroType | None = None
    fields: tuple[AvroField, ...] = ()
    branches: tuple[AvroType, ...] = ()
    recursive: bool = False

    def stripped(self) -> tuple[AvroType, bool]:
        """(the type without its null branch, whether it is nullable): ``["null", T]`` -> (T, True)."""
        if self.kind != "union":
            return self, self.kind == "null"
        others = tuple(b for b in self.branches if b.kind != "null")
        nullable = len(others) < len(self.branches)
        if len(others) == 1:
            return others[0], nullable
        if not others:
            return AvroType("null"), True
        return AvroType("union", branches=others), nullable

    def text(self) -> str:
        """The type as the field list shows it: ``long``, ``decimal(10,2)``, ``timestamp-micros``, ``record``,
        ``array``, ``map``, ``enum(A,B)``, ``fixed(16)``, ``union(int,string)``."""
        if self.logical == "decimal":
            return f"decimal({self.precision},{self.scale if self.scale is not None else 0})"
        if self.logical:
            return self.logical
        if self.kind == "enum":
            return f"enum({','.join(self.symbols)})"
        if self.kind == "fixed":
            return f"fixed({self.size})"
        if self.kind == "union":
            return f"union({','.join(b.text() for b in self.branches)})"
        return self.kind


@dataclass(frozen=True)
class AvroField:
    """A record field: name, type, default (`has_default`: the schema gives one; a default may be null)."""

    name: str
    type: AvroType
    default: Any = None
    has_default: bool = False
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class FlatField:
    """One entry of the flattened field list: dotted `name` (``.element`` / ``.value`` inside arrays and
    maps), `type` (:meth:`AvroType.text`), `nullable`, `default` and `has_default`."""

    name: str
    type: str
    nullable: bool
    default: Any
    has_default: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "nullable": self.nullable, "default": self.default,
                "has_default": self.has_default}


@dataclass(frozen=True)
class FieldChange:
    """One change of one field: `field` (dotted), `change`, `from_` / `to` (types, defaults, names, as text),
    `breaks_readers` and the `reason` in Hudi's terms."""

    field: str
    change: ChangeKind
    from_: Any
    to: Any
    breaks_readers: bool = False
    reason: str = ""


# -- parsing -------------------------------------------------------------------------------------------------


@dataclass
class _Parser:
    names: dict[str, Any] = field(default_factory=dict)
    stack: list[str] = field(default_factory=list)
    depth: int = 0

    def full_name(self, schema: dict[str, Any], namespace: str | None) -> tuple[str, str | None]:
        name = str(schema.get("name") or "")
        ns = schema.get("namespace", namespace)
        full = name if "." in name or not ns else f"{ns}.{name}"
        return full, (full.rpartition(".")[0] or None)

    def parse(self, schema: Any, namespace: str | None) -> AvroType:
        self.depth += 1
        if self.depth > 200:
            raise SchemaError("the schema is nested too deeply")
        try:
            return self._parse(schema, namespace)
        finally:
            self.depth -= 1

    def _parse(self, schema: Any, namespace: str | None) -> AvroType:
        if isinstance(schema, list):
            return AvroType("union", branches=tuple(self.parse(b, namespace) for b in schema))
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return AvroType(schema)
            ref = (self.names.get(f"{namespace}.{schema}") if namespace and "." not in schema else None) \
                or self.names.get(schema)
            if ref is None:
                raise SchemaError(f"unknown type {schema!r}")
            full = ref[0]
            if full in self.stack:
                return AvroType("record", name=full, recursive=True)
            return ref[1]
        if not isinstance(schema, dict):
            raise SchemaError(f"not an Avro type: {schema!r}")
        kind = schema.get("type")
        if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in _PRIMITIVES and kind not in (
                "record", "error", "enum", "fixed", "array", "map")):
            return self.parse(kind, namespace)  # {"type": {...}} or {"type": "a.named.Type"}
        logical = schema.get("logicalType")
        logical = str(logical) if isinstance(logical, str) else None
        precision = schema.get("precision") if logical == "decimal" else None
        scale = schema.get("scale", 0) if logical == "decimal" else None
        if logical == "decimal":
            _check_decimal(schema, precision, scale)
        if kind in _PRIMITIVES:
            return AvroType(str(kind), logical=logical, precision=precision, scale=scale)
        if kind in ("record", "error"):
            full, ns = self.full_name(schema, namespace)
            raw_fields = schema.get("fields")
            if not isinstance(raw_fields, list):
                raise SchemaError(f"record {full} has no fields list")
            self.names[full] = (full, AvroType("record", name=full, recursive=True))  # until its fields are read
            self.stack.append(full)
            try:
                fields: list[AvroField] = []
                for f in raw_fields:
                    if not isinstance(f, dict) or not isinstance(f.get("name"), str) or "type" not in f:
                        raise SchemaError(f"record {full} has a field without a name or type")
                    if any(existing.name == f["name"] for existing in fields):
                        raise SchemaError(f"record {full} has two fields named {f['name']!r}")
                    raw_aliases = f.get("aliases")
                    aliases = raw_aliases if isinstance(raw_aliases, list) else []
                    field_type = self.parse(f["type"], ns)
                    if "default" in f:
                        _check_default(full, f["name"], field_type, f["default"])
                    fields.append(AvroField(f["name"], field_type, f.get("default"), "default" in f,
                                            tuple(str(a) for a in aliases)))
            finally:
                self.stack.pop()
            out = AvroType("record", name=full, fields=tuple(fields))
            self.names[full] = (full, out)
            return out
        if kind == "enum":
            full, _ = self.full_name(schema, namespace)
            symbols = schema.get("symbols")
            if not isinstance(symbols, list):
                raise SchemaError(f"enum {full} has no symbols")
            out = AvroType("enum", name=full, symbols=tuple(str(s) for s in symbols))
            self.names[full] = (full, out)
            return out
        if kind == "fixed":
            full, _ = self.full_name(schema, namespace)
            size = schema.get("size")
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise SchemaError(f"fixed {full} has size {size!r}, not a byte count")
            out = AvroType("fixed", logical=logical, name=full, size=schema.get("size"), precision=precision,
                           scale=scale)
            self.names[full] = (full, out)
            return out
        if kind == "array":
            if "items" not in schema:
                raise SchemaError("an array without items")
            return AvroType("array", items=self.parse(schema["items"], namespace))
        if kind == "map":
            if "values" not in schema:
                raise SchemaError("a map without values")
            return AvroType("map", items=self.parse(schema["values"], namespace))
        raise SchemaError(f"unknown type {kind!r}")


_INT_RANGES = {"int": (-(1 << 31), (1 << 31) - 1), "long": (-(1 << 63), (1 << 63) - 1)}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_decimal(schema: dict[str, Any], precision: Any, scale: Any) -> None:
    """A decimal's precision and scale are integers with 0 <= scale <= precision, 1 <= precision (and a fixed
    decimal's precision fits its size): anything else is an invalid schema, not a type to compare."""
    if not _is_int(precision) or precision < 1:
        raise SchemaError(f"decimal precision {precision!r} is not a positive integer")
    if not _is_int(scale) or not 0 <= scale <= precision:
        raise SchemaError(f"decimal scale {scale!r} is not an integer from 0 to the precision {precision}")


def _check_default(record: str, name: str, t: AvroType, value: Any) -> None:
    """A default must be a value of the field's type (of a union's first branch): an `int` or `long` default out
    of its range, or of another type, makes the schema invalid (Avro refuses it when it parses)."""
    if t.kind == "union":
        if not t.branches:
            return
        t = t.branches[0]
    if t.kind in _INT_RANGES:
        low, high = _INT_RANGES[t.kind]
        if not _is_int(value) or not low <= value <= high:
            raise SchemaError(f"record {record}: field {name!r} has default {value!r}, not a {t.kind}")
    elif t.kind == "boolean" and not isinstance(value, bool):
        raise SchemaError(f"record {record}: field {name!r} has default {value!r}, not a boolean")
    elif t.kind == "null" and value is not None:
        raise SchemaError(f"record {record}: field {name!r} has default {value!r}, not null")


def parse_schema(text: str | bytes | dict[str, Any]) -> AvroType:
    """An Avro schema (JSON text, or parsed) as :class:`AvroType`; raises :class:`SchemaError` naming why not.
    The root must be a record (a table schema)."""
    if isinstance(text, dict):
        parsed: Any = text
    else:
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            try:  # what orjson refuses and Jackson reads (NaN defaults, very large integers)
                parsed = json.loads(text)
            except ValueError as exc:
                raise SchemaError(f"the schema is not JSON: {exc}") from exc
    root = _Parser().parse(parsed, None)
    if root.kind != "record":
        raise SchemaError(f"the schema's root is a {root.kind}, not a record")
    return root


# -- the flattened field list -----------------------------------------------------------------------------------


def flatten(root: AvroType) -> list[FlatField]:
    """Every field of a record schema, nested ones included, in schema order (a record's fields right after
    it; ``name.element`` after an array, ``name.value`` after a map)."""
    out: list[FlatField] = []

    def walk(name: str, t: AvroType, default: Any, has_default: bool) -> None:
        inner, nullable = t.stripped()
        out.append(FlatField(name, inner.text(), nullable, default, has_default))
        _children(name, inner, walk)

    for f in root.fields:
        walk(f.name, f.type, f.default, f.has_default)
    return out


def _children(name: str, inner: AvroType, walk: Any) -> None:
    if inner.kind == "record" and not inner.recursive:
        for f in inner.fields:
            walk(f"{name}.{f.name}", f.type, f.default, f.has_default)
    elif inner.kind == "array" and inner.items is not None:
        walk(f"{name}.element", inner.items, None, False)
    elif inner.kind == "map" and inner.items is not None:
        walk(f"{name}.value", inner.items, None, False)


# -- readability (Hudi's AvroSchemaCompatibility) ------------------------------------------------------------------


def _decimal_widens(writer: AvroType, reader: AvroType) -> bool:
    """`checkDecimalWidening`: no integer digit nor scale lost."""
    wp, ws_ = writer.precision or 0, writer.scale or 0
    rp, rs = reader.precision or 0, reader.scale or 0
    return not ((rp - rs) < (wp - ws_) or rs < ws_)


def reads(writer: AvroType, reader: AvroType) -> bool:
    """Whether data written with `writer` is read by `reader` (Hudi's `AvroSchemaCompatibility`, names not
    checked below the root, as Hudi checks them only at the top and inside unions; decimals must widen)."""
    if writer.kind == "union":
        return all(reads(b, reader) for b in writer.branches)
    if reader.kind == "union":
        return any(reads(writer, b) for b in reader.branches)
    if writer.logical == "decimal" and reader.logical == "decimal":
        return writer.kind == reader.kind and (writer.kind != "fixed" or writer.size == reader.size) \
            and _decimal_widens(writer, reader)
    if writer.kind == reader.kind:
        if writer.kind == "record":
            if writer.recursive or reader.recursive:
                return True
            by_name = {f.name: f for f in writer.fields}
            for rf in reader.fields:
                wf = by_name.get(rf.name) or next((by_name[a] for a in rf.aliases if a in by_name), None)
                if wf is None:
                    if not rf.has_default:
                        return False
                elif not reads(wf.type, rf.type):
                    return False
            return True
        if writer.kind in ("array", "map"):
            return writer.items is not None and reader.items is not None and reads(writer.items, reader.items)
        if writer.kind == "enum":
            return set(writer.symbols) <= set(reader.symbols)
        if writer.kind == "fixed":
            return writer.size == reader.size
        return True
    return reader.kind in _PROMOTIONS.get(writer.kind, frozenset())


# -- the change between two schemas --------------------------------------------------------------------------------


def _fmt_default(f: AvroField | None) -> str | None:
    """A field's default as JSON text (``"null"`` for a null default), ``None`` when it has none."""
    if f is None or not f.has_default:
        return None
    return orjson.dumps(f.default, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def diff(old: AvroType, new: AvroType, skip_meta: bool = True) -> list[FieldChange]:
    """The changes from the record schema `old` to `new`, field by field (nested fields by dotted path), in
    the new schema's field order, removed fields after. Meta fields are left out unless `skip_meta` is off."""
    out: list[FieldChange] = []
    if old.name != new.name and old.name and new.name:
        out.append(FieldChange("", ChangeKind.NAME_CHANGED, old.name, new.name, False,
                               "the table record's full name changed (Hudi checks it only when validating a write "
                               "with naming checks on)"))
    _diff_records("", old, new, out, skip_meta)
    return out


def _diff_records(prefix: str, old: AvroType, new: AvroType, out: list[FieldChange], skip_meta: bool) -> None:
    top = not prefix
    old_by_name = {f.name: f for f in old.fields}
    matched: set[str] = set()
    for nf in new.fields:
        if top and skip_meta and nf.name in META_FIELDS:
            continue
        path = f"{prefix}{nf.name}"
        of = old_by_name.get(nf.name)
        if of is None:
            alias = next((a for a in nf.aliases if a in old_by_name and a not in {f.name for f in new.fields}), None)
            if alias is not None:
                of = old_by_name[alias]
                matched.add(alias)
                out.append(FieldChange(path, ChangeKind.RENAMED, f"{prefix}{alias}", path, False,
                                       f"the field's aliases name {alias}: Avro reads the old field into it"))
        else:
            matched.add(nf.name)
        if of is None:
            _, nullable = nf.type.stripped()
            breaks = not nf.has_default and not nullable
            reason = ("a required field without a default: records written before have no value for it "
                      "(Avro READER_FIELD_MISSING_DEFAULT_VALUE)" if breaks else
                      "added with a default" if nf.has_default else
                      "nullable but without a default: Hudi fills null, Avro's own check asks for a default")
            out.append(FieldChange(path, ChangeKind.ADDED, None, _type_text(nf.type), breaks, reason))
            continue
        _diff_field(path, of, nf, out, skip_meta)
    for of in old.fields:
        if of.name in matched or (top and skip_meta and of.name in META_FIELDS):
            continue
        out.append(FieldChange(f"{prefix}{of.name}", ChangeKind.REMOVED, _type_text(of.type), None, False,
                               "readers skip it in older data (a projection); Hudi refuses it on write unless "
                               "hoodie.datasource.write.schema.allow.auto.evolution.column.drop is set"))


def _type_text(t: AvroType) -> str:
    inner, _ = t.stripped()
    return inner.text()


def _diff_field(path: str, of: AvroField, nf: AvroField, out: list[FieldChange], skip_meta: bool) -> None:
    _diff_types(path, of.type, nf.type, out, skip_meta)
    if of.has_default != nf.has_default:
        kind = ChangeKind.DEFAULT_ADDED if nf.has_default else ChangeKind.DEFAULT_REMOVED
        out.append(FieldChange(path, kind, _fmt_default(of), _fmt_default(nf), False,
                               "a default only matters to readers of data written without the field"))
    elif of.has_default and _fmt_default(of) != _fmt_default(nf):
        out.append(FieldChange(path, ChangeKind.DEFAULT_CHANGED, _fmt_default(of), _fmt_default(nf), False,
                               "a default only matters to readers of data written without the field"))


def _diff_types(path: str, old: AvroType, new: AvroType, out: list[FieldChange], skip_meta: bool) -> None:
    o, o_null = old.stripped()
    n, n_null = new.stripped()
    if o_null and not n_null:
        out.append(FieldChange(path, ChangeKind.MADE_REQUIRED, "nullable", "required", True,
                               "older records may hold null, which the new type cannot read "
                               "(Avro MISSING_UNION_BRANCH)"))
    elif n_null and not o_null:
        out.append(FieldChange(path, ChangeKind.MADE_NULLABLE, "required", "nullable", False,
                               "a union with null reads every older value"))
    if o.kind == n.kind == "record":
        if o.name != n.name and o.name and n.name and not o.recursive and not n.recursive:
            out.append(FieldChange(path, ChangeKind.NAME_CHANGED, o.name, n.name, False,
                                   "a nested record's name is not checked outside unions"))
        if not (o.recursive or n.recursive):
            _diff_records(f"{path}.", o, n, out, skip_meta)
        return
    if o.kind == n.kind and o.kind in ("array", "map") and o.items is not None and n.items is not None:
        _diff_types(f"{path}.{'element' if o.kind == 'array' else 'value'}", o.items, n.items, out, skip_meta)
        return
    if o.text() == n.text() and o.kind == n.kind:
        return
    _classify(path, o, n, out)


def _classify(path: str, o: AvroType, n: AvroType, out: list[FieldChange]) -> None:
    """A change of a non-record type: promoted, narrowed, changed, or a logical type alone."""
    ot, nt = o.text(), n.text()
    if o.logical == "decimal" and n.logical == "decimal":
        if reads(o, n):
            out.append(FieldChange(path, ChangeKind.TYPE_PROMOTED, ot, nt, False,
                                   "the decimal widens (checkDecimalWidening)"))
        else:
            narrows = o.kind == n.kind and (o.kind != "fixed" or o.size == n.size)
            out.append(FieldChange(path, ChangeKind.TYPE_NARROWED if narrows else ChangeKind.TYPE_CHANGED, ot, nt,
                                   True, "the decimal loses integer digits or scale (checkDecimalWidening: lossy)"
                                   if narrows else "a fixed decimal of another size (FIXED_SIZE_MISMATCH)"))
        return
    if o.kind == n.kind and o.kind in _PRIMITIVES:
        out.append(FieldChange(path, ChangeKind.LOGICAL_TYPE_CHANGED, ot, nt, False,
                               f"the same Avro {o.kind}: Avro reads it, what the values mean changed"))
        return
    if o.kind == n.kind == "enum":
        if set(o.symbols) <= set(n.symbols):
            out.append(FieldChange(path, ChangeKind.TYPE_PROMOTED, ot, nt, False, "enum symbols added"))
        else:
            missing = ", ".join(s for s in o.symbols if s not in n.symbols)
            out.append(FieldChange(path, ChangeKind.TYPE_NARROWED, ot, nt, True,
                                   f"enum symbols removed: {missing} (Avro MISSING_ENUM_SYMBOLS)"))
        return
    if reads(o, n):
        why = ("a promotion Hudi adds (numbers read as strings)" if n.kind == "string" and o.kind in _NUMERIC
               else "an Avro type promotion")
        out.append(FieldChange(path, ChangeKind.TYPE_PROMOTED, ot, nt, False, why))
    elif reads(n, o):
        out.append(FieldChange(path, ChangeKind.TYPE_NARROWED, ot, nt, True,
                               f"{nt} cannot hold every {ot} written before (the reverse is a promotion; "
                               "Avro TYPE_MISMATCH)"))
    else:
        out.append(FieldChange(path, ChangeKind.TYPE_CHANGED, ot, nt, True,
                               f"{nt} does not read {ot} (Avro TYPE_MISMATCH)"))


def comparable(root: AvroType, skip_meta: bool = True) -> tuple[Any, ...]:
    """A value equal for two schemas exactly when :func:`diff` finds no change between them (the record's
    name, and every non-meta field's name, type, nullability, default and aliases)."""
    def norm(t: AvroType) -> Any:
        if t.kind == "union":
            inner, nullable = t.stripped()  # the null branch's place in the union is no change
            if inner.kind == "union":  # the branches' order is no change either
                return ("union", nullable, tuple(sorted((norm(b) for b in inner.branches), key=repr)))
            return ("nullable" if nullable else "required", norm(inner))
        if t.kind == "record":
            return ("record", t.name, t.recursive, tuple((f.name, norm(f.type), f.has_default,
                                                          _hashable(f.default), f.aliases) for f in t.fields))
        return (t.kind, t.text(), t.name if t.kind in ("enum", "fixed") else None,
                norm(t.items) if t.items is not None else None)

    fields = tuple((f.name, norm(f.type), f.has_default, _hashable(f.default), f.aliases) for f in root.fields
                   if not (skip_meta and f.name in META_FIELDS))
    return (root.name, fields)


def with_null_defaults(root: AvroType) -> tuple[AvroType, int]:
    """`root` as Spark's Avro conversion writes it, and how many fields that changed: every nullable field (a union
    with null) without a default gets ``default: null``, in nested records too. A create schema (in
    `hoodie.properties`) and the writer's schema of the first commit differ only so on a table never evolved."""
    filled = 0

    def fill(t: AvroType) -> AvroType:
        nonlocal filled
        if t.kind == "record" and not t.recursive:
            fields = []
            for f in t.fields:
                typ = fill(f.type)
                nullable = typ.kind == "union" and any(b.kind == "null" for b in typ.branches)
                if nullable and not f.has_default:
                    filled += 1
                    fields.append(AvroField(f.name, typ, None, True, f.aliases))
                else:
                    fields.append(AvroField(f.name, typ, f.default, f.has_default, f.aliases))
            return replace(t, fields=tuple(fields))
        if t.kind == "union":
            return replace(t, branches=tuple(fill(b) for b in t.branches))
        if t.items is not None:
            return replace(t, items=fill(t.items))
        return t

    return fill(root), filled


def _hashable(value: Any) -> Any:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS) if isinstance(value, (dict, list)) else value


__all__ = ["META_FIELDS", "AvroField", "AvroType", "ChangeKind", "FieldChange", "FlatField",
           "SchemaError", "comparable", "diff", "flatten", "parse_schema", "reads", "with_null_defaults"]
