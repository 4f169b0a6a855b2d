"""Fluent builders for test inventories.

    make_inventory().pool("h100-b", nodes=4).team("ml", quotas={"h100-b": 32}).build()

The base inventory is small and valid: one GCP site, one GKE cluster with one a3-megagpu-8g pool of
2 nodes (16 GPUs), one cohort and one team with 8 GPUs of nominal quota in it.
"""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from quartermaster.model import Inventory
from quartermaster.providers import validate_inventory

BEFORE_THE_BLOCK = dt.datetime(2026, 9, 1, tzinfo=dt.UTC)
"""The moment the cloud stacks are built for in tests: before the example's capacity block (aws-p5-cb-2026q4 starts
2026-10-01), so its node group is empty and both scheduled actions are ahead."""
DURING_THE_BLOCK = dt.datetime(2026, 11, 15, tzinfo=dt.UTC)
"""A moment at which every pool of the example has its nodes (aws-p5-cb-2026q4 runs 2026-10-01 11:30 UTC to
2026-12-31 10:50 UTC, the node group's scale-down; every other dated pool is open then): the Kueue golden files are
rendered for it."""


class InventoryBuilder:
    """Plain data for an inventory, changed step by step, then built or written as YAML files."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {
            "sites": [
                {
                    "name": "gcp-us-central1",
                    "provider": "gcp",
                    "region": "us-central1",
                    "zones": ["us-central1-a", "us-central1-b"],
                }
            ],
            "clusters": [
                {
                    "name": "gke-a",
                    "kind": "gke",
                    "site": "gcp-us-central1",
                    "project": "proj",
                    "pools": [{"name": "h100", "machine": "a3-megagpu-8g", "zones": ["us-central1-a"], "nodes": 2}],
                }
            ],
            "cohorts": [{"name": "org"}],
            "priority_classes": [{"name": "training", "value": 100}],
            "teams": [
                {
                    "name": "ml",
                    "cost_center": "CC-1",
                    "owners": ["@ml-leads"],
                    "namespaces": ["ml"],
                    "groups": {"gke": "ml@example.com"},
                    "cohort": "org",
                    "quotas": [{"flavor": "h100", "nominal": 8}],
                }
            ],
        }

    def _named(self, section: str, name: str) -> dict[str, Any]:
        return next(o for o in self.data.setdefault(section, []) if o["name"] == name)

    def site(self, name: str, **fields: Any) -> InventoryBuilder:
        self.data["sites"].append({"name": name, **fields})
        return self

    def cluster(self, name: str, **fields: Any) -> InventoryBuilder:
        self.data["clusters"].append({"name": name, "pools": [], **fields})
        return self

    def pool(self, name: str, cluster: str = "gke-a", **fields: Any) -> InventoryBuilder:
        fields.setdefault("machine", "a3-megagpu-8g")
        fields.setdefault("zones", ["us-central1-a"])
        self._named("clusters", cluster)["pools"].append({"name": name, **fields})
        return self

    def edit_pool(self, name: str, **fields: Any) -> InventoryBuilder:
        for cluster in self.data["clusters"]:
            for pool in cluster["pools"]:
                if pool["name"] == name:
                    pool.update(fields)
        return self

    def edit(self, section: str, name: str, **fields: Any) -> InventoryBuilder:
        self._named(section, name).update(fields)
        return self

    def team(self, name: str, quotas: dict[str, int] | None = None, **fields: Any) -> InventoryBuilder:
        fields.setdefault("cost_center", "CC-1")
        fields.setdefault("owners", ["@owners"])
        fields.setdefault("namespaces", [name])
        fields.setdefault("groups", {"gke": f"{name}@example.com"})  # GKE binds Google Groups by e-mail
        fields.setdefault("quotas", [{"flavor": f, "nominal": n} for f, n in (quotas or {}).items()])
        self.data["teams"].append({"name": name, **fields})
        return self

    def add(self, section: str, **fields: Any) -> InventoryBuilder:
        self.data.setdefault(section, []).append(fields)
        return self

    def policy(self, **fields: Any) -> InventoryBuilder:
        self.data.setdefault("policy", {}).update(fields)
        return self

    def build(self) -> Inventory:
        return validate_inventory(copy.deepcopy(self.data))

    def write(self, directory: Path) -> Path:
        """Write one YAML file per section into `directory`; return it."""
        directory.mkdir(parents=True, exist_ok=True)
        for section, value in self.data.items():
            (directory / f"{section}.yaml").write_text(yaml.safe_dump({section: value}, sort_keys=False))
        return directory


def make_inventory() -> InventoryBuilder:
    """A small valid inventory to change in a test."""
    return InventoryBuilder()
