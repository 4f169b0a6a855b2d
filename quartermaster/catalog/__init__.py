"""The accelerator catalog: machine types and the accelerator registry, shipped as flat CSVs.

Each CSV has a fixed header (checked by a test) and a `source` column with the date the facts were
read. `a100` is deliberately an alias of two accelerators: the registry refuses ambiguous names.
"""

from __future__ import annotations

import csv
import difflib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

MACHINES_HEADER = [
    "name",
    "provider",
    "accelerator",
    "kind",
    "accelerators_per_node",
    "accelerator_label",
    "accelerator_memory_gb",
    "vcpus",
    "memory_gb",
    "tpu_topologies",
    "source",
]
ACCELERATORS_HEADER = ["name", "kind", "vendor", "memory_gb", "aliases", "source"]
TOPOLOGY_LEVELS_HEADER = ["cluster_kind", "machines", "provisioning", "levels", "source"]
PLATFORM_TAINTS_HEADER = ["cluster_kind", "provisioning", "key", "value", "effect", "declared", "source"]
RESERVED_NAMESPACES_HEADER = ["pattern", "owner", "source"]
HOSTNAME_LABEL = "kubernetes.io/hostname"


def _rows(filename: str) -> tuple[list[str], list[dict[str, str]]]:
    text = resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")
    reader = csv.DictReader(text.splitlines())
    return list(reader.fieldnames or []), list(reader)


@dataclass(frozen=True)
class ReservedNamespace:
    """A namespace (or a glob of them) that a team may never use: the tool's own, Kubernetes' or a platform
    add-on's (`reserved_namespaces.csv`, each row with its source)."""

    pattern: str
    owner: str
    source: str


@cache
def reserved_namespaces() -> tuple[ReservedNamespace, ...]:
    """The one list of reserved namespaces: Kubernetes', Kueue's, Quartermaster's own (observability)
    and the common platform add-ons' (`reserved_namespaces.csv`)."""
    _, rows = _rows("reserved_namespaces.csv")
    return tuple(ReservedNamespace(r["pattern"], r["owner"], r["source"]) for r in rows)


@cache
def machine_rows() -> tuple[dict[str, Any], ...]:
    """The shipped machine catalog as plain rows with typed values (the model's `catalog_machines` makes
    `Machine`s of them; the catalog imports nothing of the model)."""
    _, rows = _rows("machines.csv")
    return tuple(
        {
            "name": r["name"],
            "provider": r["provider"],
            "accelerator": r["accelerator"],
            "kind": r["kind"],
            "accelerators_per_node": int(r["accelerators_per_node"]),
            "accelerator_label": r["accelerator_label"],
            "accelerator_memory_gb": int(r["accelerator_memory_gb"]),
            "vcpus": int(r["vcpus"] or 0),
            "memory_gb": int(r["memory_gb"] or 0),
            "tpu_topologies": tuple(t for t in r["tpu_topologies"].split(";") if t),
            "source": r["source"],
        }
        for r in rows
    )


def topology_levels(cluster_kind: str, machine: str, provisioning: str) -> tuple[str, ...]:
    """The node labels, coarsest first, that the platform puts on nodes of this machine and provisioning
    (`topology_levels.csv`, each row with its source); the hostname alone where no row says more."""
    _, rows = _rows("topology_levels.csv")
    for r in rows:
        if (
            r["cluster_kind"] == cluster_kind
            and machine in r["machines"].split(";")
            and r["provisioning"] in ("*", provisioning)
        ):
            return tuple(r["levels"].split(";"))
    return (HOSTNAME_LABEL,)


@dataclass(frozen=True)
class PlatformTaint:
    """A taint the platform puts on nodes by itself; `declared`: the node pool must also declare it."""

    key: str
    value: str
    effect: str
    declared: bool


def platform_taints(cluster_kind: str, provisioning: str) -> tuple[PlatformTaint, ...]:
    """Taints the platform adds to nodes of this provisioning (`platform_taints.csv`, each row with its source)."""
    _, rows = _rows("platform_taints.csv")
    return tuple(
        PlatformTaint(r["key"], r["value"], r["effect"], r["declared"] == "yes")
        for r in rows
        if r["cluster_kind"] == cluster_kind and r["provisioning"] == provisioning
    )


@dataclass(frozen=True)
class Accelerator:
    """A canonical accelerator of the registry."""

    name: str
    kind: str
    vendor: str
    memory_gb: int
    source: str


class UnknownAccelerator(ValueError):
    """An accelerator name the registry does not know, or knows twice."""


@cache
def _registry() -> tuple[dict[str, Accelerator], dict[str, tuple[str, ...]]]:
    _, rows = _rows("accelerators.csv")
    canonical = {
        r["name"]: Accelerator(r["name"], r["kind"], r["vendor"], int(r["memory_gb"]), r["source"]) for r in rows
    }
    spellings: dict[str, list[str]] = {}
    for r in rows:
        for alias in [r["name"], *r["aliases"].split(";")]:
            names = spellings.setdefault(_normalise(alias), [])
            if r["name"] not in names:
                names.append(r["name"])
    return canonical, {k: tuple(v) for k, v in spellings.items()}


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def accelerators() -> dict[str, Accelerator]:
    """Every canonical accelerator by name."""
    return dict(_registry()[0])


def canonical_accelerator(name: str) -> str:
    """Map a spelling such as `h100` or `nvidia-h100-80gb` to its canonical name.

    Raises UnknownAccelerator for unknown and ambiguous names, saying what to write instead.
    """
    canonical, spellings = _registry()
    matches = spellings.get(_normalise(name), ())
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise UnknownAccelerator(f"accelerator {name!r} is ambiguous; write one of {', '.join(matches)}")
    close = difflib.get_close_matches(name, list(canonical), n=1)
    hint = f"; did you mean {close[0]}?" if close else f"; known: {', '.join(sorted(canonical))}"
    raise UnknownAccelerator(f"unknown accelerator {name!r}{hint}")
