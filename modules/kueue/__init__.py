"""Kueue objects from the inventory: builders, rendering, validation against Kueue's own rules, import.

objects_for_cluster(inventory, cluster, at) -> list[dict]   every object of a cluster valid at `at`, in apply order
render_cluster(inventory, cluster, at) -> str               the same as multi-document YAML
validate_manifests(objects, source) -> list[Issue]      schema, CEL, webhook and runtime rules
"""

from quartermaster.modules.kueue.builders import objects_for_cluster
from quartermaster.modules.kueue.render import render_cluster
from quartermaster.modules.kueue.validate import validate_manifests, validate_path

__all__ = ["objects_for_cluster", "render_cluster", "validate_manifests", "validate_path"]
