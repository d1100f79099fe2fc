"""Schema changes of scenario tables: the columns a scenario declares and evolves, and their values.

A scenario's table has the builder's fixed data columns (`id`, `value`, `ts` and the partition column) and
any `columns` the scenario declares (Avro field definitions: primitives, records, arrays, maps, enums,
decimals). An evolution (the `evolve_schema` step, or `schema` on an insert or upsert) changes the declared
columns, addressed by dotted paths (``address.zip``; ``.element`` / ``.value`` inside arrays and maps):

* ``add``: Avro field definitions (a dotted `name` adds inside a record);
* ``promote`` / ``narrow``: ``{path: new type}``: the builder checks with Hudi's rules
  (:mod:`hudi_core.services.schema_rules`) that a promotion is one and a narrowing is not, so a scenario says
  what it means;
* ``drop``: paths; ``nullable`` / ``required``: paths made a union with null (default null) or not;
* ``default``: ``{path: value}``.

Values: every row a write produces carries a value for every column of the schema it is written with
(deterministic, from the record key and the column), and rows carried over (clustering, compaction, a
copy-on-write merge) are converted to the current schema (a promoted number widened or turned to a string,
a new column filled with its default or a value, a dropped one left out), as Hudi rewrites records with
`HoodieAvroUtils.rewriteRecordWithNewSchema`.
"""

from __future__ import annotations

import copy
import decimal
import zlib
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hudi_core.scenarios.model import ScenarioError

#: The keys an evolution may have.
EVOLUTION_KEYS = frozenset({"add", "promote", "narrow", "drop", "nullable", "required", "default"})


def _inner(t: Any) -> tuple[Any, bool]:
    """(the non-null type, nullable) of an Avro type (a ``["null", T]`` union is T, nullable)."""
    if isinstance(t, list):
        others = [b for b in t if b != "null"]
        if len(others) != 1:
            raise ScenarioError(f"a union of {len(others)} non-null types is not a type the builder writes: {t}")
        return others[0], len(others) < len(t)
    return t, t == "null"


def _resolve(fields: list[dict[str, Any]], path: str) -> tuple[list[dict[str, Any]], int, dict[str, Any] | None,
                                                                 list[str]]:
    """(the field list holding the field at `path`, its index (-1 when absent), the field, the path's parts)."""
    parts = path.split(".")
    current = fields
    for k, name in enumerate(parts[:-1]):
        idx = next((i for i, f in enumerate(current) if f["name"] == name), -1)
        if idx < 0:
            raise ScenarioError(f"no column {'.'.join(parts[:k + 1])} (in {path})")
        t, _ = _inner(current[idx]["type"])
        nxt = parts[k + 1] if k + 1 < len(parts) else None
        while isinstance(t, dict) and t.get("type") in ("array", "map") and nxt in ("element", "value"):
            t, _ = _inner(t["items" if t["type"] == "array" else "values"])
            parts = [*parts[:k + 1], *parts[k + 2:]]
            nxt = parts[k + 1] if k + 1 < len(parts) else None
        if not (isinstance(t, dict) and t.get("type") == "record"):
            raise ScenarioError(f"{'.'.join(parts[:k + 1])} is not a record (in {path})")
        current = t["fields"]
    idx = next((i for i, f in enumerate(current) if f["name"] == parts[-1]), -1)
    return current, idx, current[idx] if idx >= 0 else None, parts


def _field(fields: list[dict[str, Any]], path: str) -> dict[str, Any]:
    _, _, found, _ = _resolve(fields, path)
    if found is None:
        raise ScenarioError(f"no column {path}")
    return found


def apply_evolution(fields: Sequence[dict[str, Any]], spec: dict[str, Any], fixed: Sequence[str]
                    ) -> list[dict[str, Any]]:
    """The declared columns after `spec` (a copy; `fields` is left alone). `fixed` are the builder's own
    columns, which an evolution may not touch. Raises :class:`ScenarioError` naming what does not apply."""
    from hudi_core.services import schema_rules as rules

    unknown = set(spec) - EVOLUTION_KEYS
    if unknown:
        raise ScenarioError(f"unknown schema change key(s) {', '.join(sorted(unknown))} "
                            f"(known: {', '.join(sorted(EVOLUTION_KEYS))})")
    out = copy.deepcopy(list(fields))

    def check_path(path: str) -> None:
        if path.split(".")[0] in fixed:
            raise ScenarioError(f"{path}: the builder's own columns ({', '.join(fixed)}) do not change")

    for raw in spec.get("add") or []:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or "type" not in raw:
            raise ScenarioError(f"add: {raw!r} is not an Avro field definition (name, type)")
        check_path(raw["name"])
        holder, idx, _, parts = _resolve(out, raw["name"])
        if idx >= 0:
            raise ScenarioError(f"add: column {raw['name']} exists")
        holder.append({**copy.deepcopy(raw), "name": parts[-1]})
    for key in ("promote", "narrow"):
        for path, new_type in (spec.get(key) or {}).items():
            check_path(path)
            f = _field(out, path)
            old_inner, nullable = _inner(f["type"])
            old = rules.parse_schema({"type": "record", "name": "r", "fields": [{"name": "f", "type": old_inner}]})
            new = rules.parse_schema({"type": "record", "name": "r", "fields": [{"name": "f", "type": new_type}]})
            promoted = rules.reads(old.fields[0].type, new.fields[0].type)
            if key == "promote" and not promoted:
                raise ScenarioError(f"promote: {path} from {old.fields[0].type.text()} to {new.fields[0].type.text()} "
                                    "is not a promotion Hudi reads (use narrow)")
            if key == "narrow" and promoted:
                raise ScenarioError(f"narrow: {path} from {old.fields[0].type.text()} to {new.fields[0].type.text()} "
                                    "is a promotion (use promote)")
            f["type"] = ["null", copy.deepcopy(new_type)] if nullable else copy.deepcopy(new_type)
    for path in spec.get("drop") or []:
        check_path(path)
        holder, idx, _, _ = _resolve(out, path)
        if idx < 0:
            raise ScenarioError(f"drop: no column {path}")
        del holder[idx]
    for path in spec.get("nullable") or []:
        check_path(path)
        f = _field(out, path)
        inner, nullable = _inner(f["type"])
        if nullable:
            raise ScenarioError(f"nullable: {path} is nullable already")
        f["type"] = ["null", inner]
        f["default"] = None
    for path in spec.get("required") or []:
        check_path(path)
        f = _field(out, path)
        inner, nullable = _inner(f["type"])
        if not nullable:
            raise ScenarioError(f"required: {path} is required already")
        f["type"] = inner
        if "default" in f and f["default"] is None:
            del f["default"]
    for path, value in (spec.get("default") or {}).items():
        check_path(path)
        _field(out, path)["default"] = value
    return out


# -- Arrow types of Avro types (base files) ---------------------------------------------------------------------


def arrow_type(t: Any) -> pa.DataType:
    """The Parquet (Arrow) type a base file stores an Avro type as (parquet-avro's mapping)."""
    inner, _ = _inner(t)
    if isinstance(inner, str):
        simple = {"string": pa.string(), "long": pa.int64(), "int": pa.int32(), "float": pa.float32(),
                  "double": pa.float64(), "boolean": pa.bool_(), "bytes": pa.binary()}
        if inner not in simple:
            raise ScenarioError(f"type {inner!r} is not one the builder writes")
        return simple[inner]
    kind = inner.get("type")
    if inner.get("logicalType") == "decimal":
        return pa.decimal128(int(inner["precision"]), int(inner.get("scale", 0)))
    if kind == "record":
        return pa.struct([pa.field(f["name"], arrow_type(f["type"]), nullable=_inner(f["type"])[1])
                          for f in inner["fields"]])
    if kind == "array":
        return pa.list_(arrow_type(inner["items"]))
    if kind == "map":
        return pa.map_(pa.string(), arrow_type(inner["values"]))
    if kind == "enum":
        return pa.string()
    if isinstance(kind, str):
        return arrow_type(kind)
    raise ScenarioError(f"type {inner!r} is not one the builder writes")


# -- values -----------------------------------------------------------------------------------------------------


def _seed(key: str, name: str) -> int:
    return zlib.crc32(f"{key}/{name}".encode())


def value_for(t: Any, key: str, name: str) -> Any:
    """A deterministic value of Avro type `t` for the record `key` and column path `name`."""
    inner, _ = _inner(t)
    seed = _seed(key, name)
    if isinstance(inner, str):
        return {"string": f"{name.rsplit('.', 1)[-1]}-{key}", "long": seed % 100_000, "int": seed % 1000,
                "float": (seed % 1000) / 4, "double": (seed % 100_000) / 8, "boolean": seed % 2 == 0,
                "bytes": f"{key}".encode()}.get(inner)
    kind = inner.get("type")
    if inner.get("logicalType") == "decimal":
        scale = int(inner.get("scale", 0))
        digits = max(int(inner["precision"]) - scale, 1)
        whole = decimal.Decimal(seed % (10 ** min(digits, 6) - 1 or 1))
        return (whole + decimal.Decimal(seed % 100) / 100).quantize(decimal.Decimal(1).scaleb(-scale),
                                                                    rounding=decimal.ROUND_DOWN)
    if kind == "record":
        return {f["name"]: value_for(f["type"], key, f"{name}.{f['name']}") for f in inner["fields"]}
    if kind == "array":
        return [value_for(inner["items"], key, f"{name}.element")]
    if kind == "map":
        return {"k": value_for(inner["values"], key, f"{name}.value")}
    if kind == "enum":
        symbols = inner["symbols"]
        return symbols[seed % len(symbols)]
    return value_for(kind, key, name)


def conform(value: Any, t: Any, key: str, name: str, has_default: bool = False, default: Any = None,
            present: bool = True) -> Any:
    """`value` (written with an older schema, `present` false when it had no such column) as a value of the
    Avro type `t`: a missing column takes its default, else a generated value (null when nullable); numbers
    widen or become strings, strings become numbers when narrowed, records conform field by field."""
    inner, nullable = _inner(t)
    if not present:
        if has_default:
            return default
        return None if nullable else value_for(inner, key, name)
    if value is None:
        return None if nullable else value_for(inner, key, name)
    kind = inner if isinstance(inner, str) else inner.get("type")
    if isinstance(inner, dict) and inner.get("logicalType") == "decimal":
        return decimal.Decimal(str(value)).quantize(decimal.Decimal(1).scaleb(-int(inner.get("scale", 0))))
    if kind == "record":
        given = value if isinstance(value, dict) else {}
        return {f["name"]: conform(given.get(f["name"]), f["type"], key, f"{name}.{f['name']}", "default" in f,
                                   f.get("default"), f["name"] in given) for f in inner["fields"]}
    if kind == "array":
        return [conform(v, inner["items"], key, f"{name}.element") for v in (value if isinstance(value, list) else [])]
    if kind == "map":
        items = value.items() if isinstance(value, dict) else []
        return {str(k): conform(v, inner["values"], key, f"{name}.value") for k, v in items}
    if kind == "enum":
        return value if value in inner["symbols"] else inner["symbols"][0]
    if kind in ("long", "int"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value) if kind == "long" else int(value) % (2**31)
        return _seed(key, name) % 1000
    if kind in ("float", "double"):
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
    if kind == "string":
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    if kind == "bytes":
        return value if isinstance(value, bytes) else str(value).encode()
    if kind == "boolean":
        return bool(value)
    return value


__all__ = ["EVOLUTION_KEYS", "apply_evolution", "arrow_type", "conform", "value_for"]
