"""Kueue objects from the inventory: builders, rendering, validation against Kueue's own rules, import.

kueue_objects(inventory, cluster, at) -> list[Emitted]       every object of a cluster valid at `at`, typed (api.py)
objects_for_cluster(inventory, cluster, at) -> list[dict]   the same as manifests, in apply order
render_cluster(inventory, cluster, at) -> str               the same as multi-document YAML
validate_manifests(objects, source) -> list[Issue]      schema, CEL, webhook and runtime rules
"""

from quartermaster.modules.kueue.builders import kueue_objects, objects_for_cluster
from quartermaster.modules.kueue.cluster_files import render_cluster
from quartermaster.modules.kueue.manifest_checks import validate_manifests, validate_path

__all__ = ["kueue_objects", "objects_for_cluster", "render_cluster", "validate_manifests", "validate_path"]
