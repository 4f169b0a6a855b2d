"""Kubernetes' ObjectMeta as Quartermaster writes it: the one class the generated Kueue types (`api.py`) and the
other objects `qm render` emits (`manifest.py`) share."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, kw_only=True)
class ObjectMeta:
    """The part of Kubernetes' ObjectMeta that Quartermaster writes."""

    name: str
    """name: the object's name, unique per kind (and namespace)."""
    namespace: str | None = None
    """namespace: for namespaced kinds; None for cluster-scoped ones."""
    labels: dict[str, str] | None = None
    """labels: left out when None."""
