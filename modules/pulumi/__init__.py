"""Pulumi components over the cloud specs (`modules.cloud`) and the Kueue manifests (`modules.kueue`).

Thin: each component turns specs into typed provider arguments, parents its children to itself and
registers its outputs last. Type tokens are `quartermaster:<module>:<Type>`. A cluster's cloud resources are its
provider's components (`quartermaster/providers/<name>/pulumi_components.py`), imported by name when a stack of that
provider is declared, so a stack loads only its own cloud's SDK.
"""

from quartermaster.modules.pulumi.cluster import ClusterCapacity, declare_cluster

__all__ = ["ClusterCapacity", "declare_cluster"]
