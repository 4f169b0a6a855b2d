"""The component of one cluster's stack: cloud capacity (pools, reservations, quota requests) and Kueue."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pulumi

from quartermaster.loader import SourceMap
from quartermaster.model import Inventory
from quartermaster.modules.cloud import ClusterSpec, cluster_spec
from quartermaster.modules.observability.emit import kubernetes_objects
from quartermaster.modules.pulumi.kueue import KueueObjects
from quartermaster.modules.pulumi.provider_components import declare_capacity
from quartermaster.modules.pulumi.resource_error import ResourceError


class ClusterCapacity(pulumi.ComponentResource):
    """Everything a cluster's stack declares. The cluster itself exists already and is referenced by name."""

    def __init__(
        self,
        name: str,
        spec: ClusterSpec[Any],
        manifests: Sequence[dict[str, Any]] = (),
        kubeconfig: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("quartermaster:cluster:ClusterCapacity", name, None, opts)
        self.spec = spec
        if manifests and kubeconfig is None:
            raise ResourceError(
                f"cluster {spec.cluster}: Kueue objects need a kubeconfig; set "
                "`pulumi config set --secret quartermaster:kubeconfig ...`",
                self,
            )
        self.pools = declare_capacity(self, spec)
        self.kueue = None
        if manifests:
            assert kubeconfig is not None
            self.kueue = KueueObjects(
                f"{spec.cluster}-kueue",
                manifests,
                kubeconfig,
                pools=self.pools,
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.pool_names = sorted(self.pools)
        self.register_outputs({"pools": self.pool_names})


def declare_cluster(
    inventory: Inventory,
    cluster_name: str,
    kubeconfig: pulumi.Input[str] | None,
    now: dt.datetime,
    sources: SourceMap | None = None,
) -> ClusterCapacity:
    """Declare one cluster's stack as it should be at `now`: its cloud specs and, when Kueue is in use, its Kueue
    objects, with its alert rules and dashboard when `observability.enabled` (`sources`: for runbooks to name
    inventory files)."""
    spec = cluster_spec(inventory, cluster_name, now)
    objects = kubernetes_objects(inventory, cluster_name, now, sources)
    return ClusterCapacity(cluster_name, spec, objects, kubeconfig)
