"""Shared pieces of the cloud builders: the spec error, taints, zone arithmetic and the fact tables."""

from __future__ import annotations

import csv
import datetime as dt
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from quartermaster.bounds import calendar_problem
from quartermaster.errors import ProblemsFound
from quartermaster.model import Machine, Pool
from quartermaster.providers import Provider

# The taint every accelerator node carries, so that only pods that tolerate it land there
# (GKE and GoogleCloudPlatform/cluster-toolkit's gke-node-pool use `nvidia.com/gpu=present` / `google.com/tpu=present`).
ACCELERATOR_TAINT_VALUE = "present"


class SpecError(ProblemsFound):
    """The inventory asks for something the provider cannot express; the message says how to fix it."""


def moment(text: str | None, option: str) -> dt.datetime:
    """The moment the specs are built for (capacity blocks are dated): `text` in ISO 8601 with a time zone
    (`2026-12-01T00:00:00Z`) or a day (`2026-12-01`, its midnight UTC), or now (UTC) when None. `option` names
    where the text came from, for the error."""
    if text is None:
        return dt.datetime.now(dt.UTC)
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        parsed = None
    if parsed is not None and parsed.tzinfo is None and len(text) == len("2026-12-01"):
        parsed = parsed.replace(tzinfo=dt.UTC)  # a day: its midnight UTC
    if parsed is None or parsed.tzinfo is None:
        raise SpecError(
            f"{option} {text!r}: not a day or a moment with a time zone. Write it as ISO 8601, such as 2026-12-01 "
            "(midnight UTC) or 2026-12-01T08:00:00Z, or leave it out for now."
        )
    problem = calendar_problem(parsed.astimezone(dt.UTC))
    if problem:
        raise SpecError(f"{option} {text!r} {problem}; give a moment inside it, or leave it out for now.")
    return parsed.astimezone(dt.UTC)


@dataclass(frozen=True)
class TaintSpec:
    """A node taint in Kubernetes spelling (`NoSchedule`); emitters convert the effect per provider."""

    key: str
    value: str
    effect: str


def pool_taints(pool: Pool, machine: Machine, provider: Provider) -> tuple[TaintSpec, ...]:
    """The pool's own taints, the accelerator taint (unless the pool already taints that key) and the taints the
    platform adds that the pool must declare (AKS Spot), so that the provider shows no drift."""
    own = tuple(TaintSpec(t.key, t.value, t.effect) for t in pool.taints)
    platform = tuple(
        TaintSpec(t.key, t.value, t.effect)
        for t in provider.platform_taints(pool.provisioning)
        if t.declared and all(o.key != t.key for o in own)
    )
    if any(t.key == machine.resource_name for t in own):
        return (*own, *platform)
    return (*own, TaintSpec(machine.resource_name, ACCELERATOR_TAINT_VALUE, "NoSchedule"), *platform)


def upper_snake_effect(effect: str) -> str:
    """`NoSchedule` -> `NO_SCHEDULE` (GKE and EKS spell taint effects this way)."""
    return "".join("_" + c if c.isupper() and i else c for i, c in enumerate(effect)).upper()


def per_zone(count: int, zones: int, pool: str, what: str) -> int:
    """`count` nodes split evenly over `zones` zones, or a SpecError that says how to make it even."""
    if count % zones:
        raise SpecError(
            f"pool {pool}: {what} of {count} nodes cannot be split evenly over {zones} zones (the provider "
            f"sizes pools per zone). Use a multiple of {zones} or list fewer zones."
        )
    return count // zones


def sorted_labels(labels: dict[str, str]) -> dict[str, str]:
    """Labels with sorted keys, so specs and their emitted output are deterministic."""
    return dict(sorted(labels.items()))


@cache
def read_table(path: Path) -> tuple[dict[str, str], ...]:
    """Rows of a provider's fact table (`quartermaster/providers/<name>/data/*.csv`; each row cites its source)."""
    with path.open(newline="") as f:
        return tuple(csv.DictReader(f))
