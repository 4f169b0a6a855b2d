"""The accelerator catalog: machine types and the accelerator registry, shipped as flat CSVs.

Each CSV has a fixed header (checked by a test) and a `source` column with the date the facts were
read. `a100` is deliberately an alias of two accelerators: the registry refuses ambiguous names.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources

from quartermaster.model import Machine

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


def _rows(filename: str) -> tuple[list[str], list[dict[str, str]]]:
    text = resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")
    reader = csv.DictReader(text.splitlines())
    return list(reader.fieldnames or []), list(reader)


@cache
def load_machines() -> tuple[Machine, ...]:
    """The shipped machine catalog."""
    _, rows = _rows("machines.csv")
    return tuple(
        Machine(
            name=r["name"],
            provider=r["provider"],  # type: ignore[arg-type]
            accelerator=r["accelerator"],
            kind=r["kind"],  # type: ignore[arg-type]
            accelerators_per_node=int(r["accelerators_per_node"]),
            accelerator_label=r["accelerator_label"],
            accelerator_memory_gb=int(r["accelerator_memory_gb"]),
            vcpus=int(r["vcpus"] or 0),
            memory_gb=int(r["memory_gb"] or 0),
            tpu_topologies=tuple(t for t in r["tpu_topologies"].split(";") if t),
            source=r["source"],
        )
        for r in rows
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
    import difflib

    close = difflib.get_close_matches(name, list(canonical), n=1)
    hint = f"; did you mean {close[0]}?" if close else f"; known: {', '.join(sorted(canonical))}"
    raise UnknownAccelerator(f"unknown accelerator {name!r}{hint}")
