"""Typed objects -> the manifests `qm render` writes, and the Kubernetes objects emitted next to Kueue's.

The builders return typed objects (`api.py`, generated from Kueue's v1beta2 CRDs, plus the Namespace and RBAC
classes here); `to_manifest` turns one into the plain document the YAML writer prints and the validators read, in
the cluster's `kueue_api_version`: for v1beta1, Kueue's conversion of the fields that moved (kueue-rules.md rules
83-89: a ClusterQueue's `cohortName` is `cohort`, a MultiKueueCluster's `clusterSource.kubeConfig` is `kubeConfig`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, ClassVar, Protocol

from quartermaster.modules.kueue import api
from quartermaster.modules.kueue.meta import ObjectMeta

KUEUE_GROUP = "kueue.x-k8s.io"
RBAC_GROUP = "rbac.authorization.k8s.io"


class Emitted(Protocol):
    """A typed object `qm render` emits: a class with its kind and metadata."""

    KIND: ClassVar[str]

    @property
    def metadata(self) -> ObjectMeta: ...


@dataclasses.dataclass(frozen=True, kw_only=True)
class Namespace:
    """A team's namespace (core/v1)."""

    KIND: ClassVar[str] = "Namespace"
    metadata: ObjectMeta


@dataclasses.dataclass(frozen=True, kw_only=True)
class PolicyRule:
    """One rule of a Role: verbs allowed on resources of API groups."""

    api_groups: list[str]
    """apiGroups: "" is the core group."""
    resources: list[str]
    """resources: plural resource names."""
    verbs: list[str]
    """verbs: what the subject may do."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoleRef:
    """What a RoleBinding grants."""

    api_group: str
    """apiGroup: rbac.authorization.k8s.io."""
    kind: str
    """kind: Role or ClusterRole."""
    name: str
    """name: the role's name."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Subject:
    """Who a RoleBinding grants to."""

    api_group: str
    """apiGroup: rbac.authorization.k8s.io for users and groups."""
    kind: str
    """kind: User, Group or ServiceAccount."""
    name: str
    """name: as the cluster's authenticator names them."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Role:
    """A namespaced Role (rbac.authorization.k8s.io/v1)."""

    KIND: ClassVar[str] = "Role"
    metadata: ObjectMeta
    rules: list[PolicyRule]
    """rules: what the role allows."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoleBinding:
    """A namespaced RoleBinding (rbac.authorization.k8s.io/v1)."""

    KIND: ClassVar[str] = "RoleBinding"
    metadata: ObjectMeta
    role_ref: RoleRef
    """roleRef: the role granted."""
    subjects: list[Subject]
    """subjects: who gets it."""


API_VERSIONS = {"Namespace": "v1", "Role": f"{RBAC_GROUP}/v1", "RoleBinding": f"{RBAC_GROUP}/v1"}


def json_name(f: dataclasses.Field[Any]) -> str:
    """A field's name in the manifest: its `json` metadata, else the camelCase of its Python name."""
    named: str | None = f.metadata.get("json")
    if named is not None:
        return named
    head, *rest = f.name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_FIELDS: dict[type, tuple[tuple[str, str], ...] | None] = {}
"""Per type: (Python name, manifest name) of each field of a dataclass, None for any other type."""
_PLAIN = frozenset({str, int, float, bool})
"""Types written as they are."""


def to_json(value: Any) -> Any:
    """A typed value as plain JSON data: dataclasses as dicts of their set fields (None is left out). Field names
    are read once per type (a fleet of 1,000 teams writes 380,000 values)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind not in _FIELDS:
        fields = dataclasses.fields(value) if dataclasses.is_dataclass(value) else None
        _FIELDS[kind] = None if fields is None else tuple((f.name, json_name(f)) for f in fields)
    named = _FIELDS[kind]
    if named is not None:
        out = {}
        for attr, key in named:
            item = getattr(value, attr)
            if item is not None:
                out[key] = item if type(item) in _PLAIN else to_json(item)
        return out
    if isinstance(value, list | tuple):
        return [v if type(v) in _PLAIN else to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: v if type(v) in _PLAIN else to_json(v) for k, v in value.items()}
    return value


def to_manifest(obj: Emitted, kueue_version: str = "v1beta2") -> dict[str, Any]:
    """The document for `obj`: apiVersion and kind first, then its fields, in `kueue_version` for Kueue kinds."""
    body = to_json(obj)
    api_version = API_VERSIONS.get(obj.KIND, f"{KUEUE_GROUP}/{kueue_version}")
    out: dict[str, Any] = {"apiVersion": api_version, "kind": obj.KIND, **body}
    if kueue_version == "v1beta1" and obj.KIND == "ClusterQueue" and "cohortName" in out["spec"]:
        out["spec"]["cohort"] = out["spec"].pop("cohortName")  # Kueue rule 83
    if kueue_version == "v1beta1" and obj.KIND == "MultiKueueCluster":
        out["spec"] = out["spec"]["clusterSource"]  # Kueue rule 87: v1beta1 has kubeConfig at the top of spec
    return out


def from_json(cls: type[Any], data: Any) -> Any:
    """`data` (plain JSON) read as an instance of dataclass `cls`: fields by their manifest names, nested classes,
    lists and maps by the type hints. It reads what a schema check has passed; a value of another shape than its
    hint is kept as it is, and unknown fields are left out."""
    if not isinstance(data, dict):
        return data
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        name = json_name(f)
        if name in data:
            values[f.name] = _decode(hints[f.name], data[name])
    try:
        return cls(**values)
    except TypeError:  # a required field is missing: the schema check reports it
        return None


def _decode(hint: Any, value: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        classes = [a for a in args if dataclasses.is_dataclass(a)]
        lists = [a for a in args if typing.get_origin(a) in (list, dict)]
        hint = (classes or lists or [None])[0]
        if hint is None:
            return value
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return from_json(hint, value)
    if origin is list and isinstance(value, list):
        return [_decode(args[0], v) for v in value]
    if origin is dict and isinstance(value, dict):
        return {k: _decode(args[1], v) for k, v in value.items()}
    return value


_HINTS: dict[str, dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    """The resolved type hints of a dataclass of `api` or of this module, read once per class."""
    key = f"{cls.__module__}.{cls.__qualname__}"
    if key not in _HINTS:
        _HINTS[key] = typing.get_type_hints(cls, {**vars(api), **globals()})
    return _HINTS[key]


def from_manifest(document: Any) -> Any:
    """A Kueue manifest (v1beta2, or v1beta1 converted up) as its typed object; None for other kinds and groups."""
    if not isinstance(document, dict) or not str(document.get("apiVersion", "")).startswith(f"{KUEUE_GROUP}/"):
        return None
    cls = getattr(api, str(document.get("kind")), None) if document.get("kind") in api.KUEUE_KINDS else None
    if cls is None:
        return None
    spec = document.get("spec")
    if document["apiVersion"].endswith("/v1beta1") and isinstance(spec, dict):
        if cls is api.ClusterQueue and "cohort" in spec:
            spec = {**{k: v for k, v in spec.items() if k != "cohort"}, "cohortName": spec["cohort"]}
        if cls is api.MultiKueueCluster and "kubeConfig" in spec:
            spec = {"clusterSource": spec}
        document = {**document, "spec": spec}
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    typed = from_json(cls, {**document, "metadata": {k: v for k, v in metadata.items() if k in _META}})
    return typed


_META = ("name", "namespace", "labels")
