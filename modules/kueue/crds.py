"""Kueue's CRDs (v0.19.2, shipped in `crds/`): schema validation with the Kubernetes extensions, and defaulting.

The served version's `openAPIV3Schema` is checked with `jsonschema`, extended the way the API server reads a
structural schema:
- unknown fields are errors (kubectl's strict field validation), unless `x-kubernetes-preserve-unknown-fields`;
- `x-kubernetes-int-or-string` (the CRDs spell it out as `anyOf: [integer, string]` + the quantity pattern);
- `nullable`, `format: int32/int64` ranges;
- `x-kubernetes-list-type: map` (unique `x-kubernetes-list-map-keys`) and `set` (unique items);
- `x-kubernetes-validations`: CEL rules, compiled once and evaluated with cel-python (`modules.kueue.cel`);
- `default`: filled in before validation, as the API server does (CEL and webhooks see defaulted objects).
Schemas are prepared and validators built once per (kind, version) and cached.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema import Draft7Validator, ValidationError

from quartermaster.modules.kueue.cel import CelRule, compile_rule

CRD_DIR = Path(__file__).parent / "crds"
GROUP = "kueue.x-k8s.io"
# Kind -> plural (the CRD file is kueue.x-k8s.io_<plural>.yaml).
PLURALS = {
    "AdmissionCheck": "admissionchecks",
    "ClusterQueue": "clusterqueues",
    "Cohort": "cohorts",
    "LocalQueue": "localqueues",
    "MultiKueueCluster": "multikueueclusters",
    "MultiKueueConfig": "multikueueconfigs",
    "ProvisioningRequestConfig": "provisioningrequestconfigs",
    "ResourceFlavor": "resourceflavors",
    "Topology": "topologies",
    "WorkloadPriorityClass": "workloadpriorityclasses",
    "Workload": "workloads",
}
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


@dataclass(frozen=True)
class Crd:
    """One served version of a Kueue kind."""

    kind: str
    version: str
    namespaced: bool
    deprecated: bool
    schema: dict[str, Any]  # the original openAPIV3Schema (for defaulting)
    validator: Any  # a jsonschema validator over the prepared schema


@dataclass(frozen=True)
class SchemaError:
    """A schema or CEL violation at a path inside the object."""

    path: tuple[str | int, ...]
    message: str
    keyword: str  # jsonschema keyword, `x-kubernetes-list-type`, or `x-kubernetes-validations`
    schema_path: tuple[str | int, ...]
    cel: CelRule | None = None
    value: Any = None
    known_fields: tuple[str, ...] = ()  # for unknown-field errors: the fields the schema has


@cache
def _crd_file(kind: str) -> dict[str, Any]:
    crd: dict[str, Any] = yaml.load((CRD_DIR / f"{GROUP}_{PLURALS[kind]}.yaml").read_text(), Loader=yaml.CSafeLoader)
    return crd


def served_versions(kind: str) -> list[str]:
    return [v["name"] for v in _crd_file(kind)["spec"]["versions"] if v.get("served", True)]


@cache
def crd(kind: str, version: str) -> Crd | None:
    """The CRD of `kind` at `version`, or None if Kueue does not serve that kind/version."""
    if kind not in PLURALS:
        return None
    doc = _crd_file(kind)
    for v in doc["spec"]["versions"]:
        if v["name"] == version and v.get("served", True):
            schema = v["schema"]["openAPIV3Schema"]
            return Crd(
                kind,
                version,
                doc["spec"]["scope"] == "Namespaced",
                bool(v.get("deprecated")),
                schema,
                _Validator(_prepare(schema, top=True), format_checker=_FORMATS),
            )
    return None


# --- schema preparation ----------------------------------------------------------------------------


def _prepare(node: Any, top: bool = False) -> Any:
    """Copy a structural schema into plain JSON Schema plus our keywords (see the module docstring)."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {k: _prepare(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _prepare(value)
        elif key in ("anyOf", "allOf", "oneOf"):
            out[key] = [_prepare(v) for v in value]
        elif key in ("default", "description"):
            continue
        elif key == "x-kubernetes-validations":
            out[key] = [compile_rule(r) for r in value]
        elif key == "pattern":
            out[key] = _python_regex(value)
        else:
            out[key] = value
    if top:
        # metadata is checked by the validator module (name rules); the API server owns its schema.
        out["properties"] = {**out.get("properties", {}), "metadata": {"type": "object"}}
    if (
        out.get("type") == "object"
        and "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if out.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def _python_regex(pattern: str) -> str:
    """Go (RE2) allows inline flags anywhere, Python only at the start: `^(?i)x` -> `(?i)^x`."""
    match = re.match(r"^(\^?)\(\?([a-z]+)\)", pattern)
    return f"(?{match.group(2)}){match.group(1)}{pattern[match.end() :]}" if match else pattern


def _list_type(validator: Any, list_type: str, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    if not isinstance(instance, list):
        return
    if list_type == "set":
        seen: list[Any] = []
        for item in instance:
            if item in seen:
                yield ValidationError(f"duplicate entry {item!r} (the list is a set)")
            seen.append(item)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys", [])
        seen_keys: set[tuple[Any, ...]] = set()
        for item in instance:
            if not isinstance(item, dict):
                continue
            key = tuple(item.get(k) for k in keys)
            if key in seen_keys:
                shown = ", ".join(f"{k}={v!r}" for k, v in zip(keys, key, strict=True))
                yield ValidationError(f"duplicate entry with {shown} (list keyed by {', '.join(keys)})")
            seen_keys.add(key)


def _cel(validator: Any, rules: list[CelRule], instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    for rule in rules:
        failure = rule.check(instance, schema)
        if failure is not None:
            error = ValidationError(failure)
            error.cel_rule = rule
            yield error


def _is_int_format(checker: Any, instance: Any, fmt: str) -> bool:
    if not isinstance(instance, int) or isinstance(instance, bool):
        return True
    low, high = INT_RANGES[fmt]
    return low <= instance <= high


_FORMATS = jsonschema.FormatChecker(formats=())
for _fmt in INT_RANGES:
    _FORMATS.checks(_fmt)(lambda instance, _f=_fmt: _is_int_format(None, instance, _f))

_VALID_ITEMS: set[tuple[int, str]] = set()
MEMO_LIMIT = 500_000


def _items(validator: Any, items: Any, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    """Draft 7 `items`, remembering which (item schema, item JSON) pairs were valid: validity is a pure
    function of the two, and generated fleets repeat the same list items (flavors, resources) many times."""
    if not isinstance(items, dict) or not isinstance(instance, list):
        yield from _DRAFT7_ITEMS(validator, items, instance, schema)
        return
    for index, item in enumerate(instance):
        if not isinstance(item, dict | list):
            yield from validator.descend(item, items, path=index)
            continue
        key = (id(items), json.dumps(item, sort_keys=True, separators=(",", ":")))
        if key in _VALID_ITEMS:
            continue
        errors = list(validator.descend(item, items, path=index))
        if not errors:
            if len(_VALID_ITEMS) > MEMO_LIMIT:
                _VALID_ITEMS.clear()
            _VALID_ITEMS.add(key)
        yield from errors


_DRAFT7_ITEMS = Draft7Validator.VALIDATORS["items"]
_Validator = jsonschema.validators.extend(
    Draft7Validator,
    {"x-kubernetes-list-type": _list_type, "x-kubernetes-validations": _cel, "items": _items},
)


def schema_errors(c: Crd, obj: dict[str, Any]) -> list[SchemaError]:
    """Every schema and CEL violation of an (already defaulted) object."""
    out = []
    for e in c.validator.iter_errors(obj):
        for leaf in _leaves(e):
            known = tuple(leaf.schema.get("properties", {})) if isinstance(leaf.schema, dict) else ()
            out.append(
                SchemaError(
                    tuple(leaf.absolute_path),
                    leaf.message,
                    str(leaf.validator),
                    tuple(leaf.absolute_schema_path),
                    getattr(leaf, "cel_rule", None),
                    leaf.instance,
                    known,
                )
            )
    return out


def _leaves(error: ValidationError) -> list[ValidationError]:
    """For anyOf (int-or-string), report the branch errors only when no branch matched by type."""
    if error.validator == "anyOf" and error.context:
        typed = [c for c in error.context if c.validator != "type"]
        return typed or [error]
    return [error]


# --- defaulting ------------------------------------------------------------------------------------


def apply_defaults(schema: dict[str, Any], value: Any) -> Any:
    """A copy of `value` with the schema's defaults filled in, top-down, as the API server does."""
    value = json.loads(json.dumps(value))  # a deep copy of plain JSON, faster than copy.deepcopy
    _default(schema, value)
    return value


def _default(schema: dict[str, Any], value: Any) -> None:
    if isinstance(value, dict):
        props = schema.get("properties")
        if props:
            for key, sub in props.items():
                if key not in value and "default" in sub:
                    value[key] = copy.deepcopy(sub["default"])
                if key in value:
                    _default(sub, value[key])
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for item in value.values():
                _default(extra, item)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _default(schema["items"], item)
