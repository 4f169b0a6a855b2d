"""Pulumi components over the cloud specs (`modules.cloud`) and the Kueue manifests (`modules.kueue`).

Thin: each component turns specs into typed provider arguments, parents its children to itself and
registers its outputs last. Type tokens are `quartermaster:<module>:<Type>`. Provider SDKs are imported
by the component that needs them, so a stack loads only its own cloud's SDK.
"""

from quartermaster.modules.pulumi.cluster import ClusterCapacity, declare_cluster

__all__ = ["ClusterCapacity", "declare_cluster"]
