"""The Prometheus metric and label names Quartermaster reads, each with the source it was checked against.

Kueue (kubernetes-sigs/kueue v0.19.2, tag commit 8eab687, read 2026-08: `pkg/metrics/metrics.go` and
`site/content/en/docs/reference/metrics.md`):
- `kueue_cluster_queue_resource_reservation` and `kueue_cluster_queue_resource_usage`, gauges with labels
  `cohort`, `cluster_queue`, `flavor`, `resource`, `replica_role`: "the cluster_queue's total resource
  reservation (usage) within all the flavors". A reservation is quota held by a workload (granted, its admission
  checks may still be running); usage is quota of admitted workloads. Both count *requests* in the flavor.
- `kueue_cluster_queue_nominal_quota`, same labels.
- These three (with `..._borrowing_limit` and `..._lending_limit`) are "optional metrics", exported only when
  the manager's Configuration sets `metrics.enableClusterQueueResources: true`.
- `kueue_cluster_queue_resource_pending`, labels `cluster_queue`, `resource`, `replica_role`: requests of pending
  workloads, not yet assigned to a flavor.
- `kueue_pending_workloads`, labels `cluster_queue`, `status` (`active` or `inadmissible`), `replica_role`.
- `replica_role` is `leader`, `follower` or `standalone`; a follower replica's gauges are left out so that an HA
  pair is not counted twice.
"""

from __future__ import annotations

KUEUE_RESERVATION = "kueue_cluster_queue_resource_reservation"
KUEUE_USAGE = "kueue_cluster_queue_resource_usage"
KUEUE_NOMINAL_QUOTA = "kueue_cluster_queue_nominal_quota"
KUEUE_RESOURCE_PENDING = "kueue_cluster_queue_resource_pending"
KUEUE_PENDING_WORKLOADS = "kueue_pending_workloads"

CLUSTER_QUEUE = "cluster_queue"
FLAVOR = "flavor"
RESOURCE = "resource"
REPLICA_ROLE = "replica_role"
NOT_FOLLOWER = f'{REPLICA_ROLE}!="follower"'

KUEUE_NAMESPACE = "kueue-system"
"""Where Kueue's manager runs, so the namespace its metrics carry when scraped in-cluster."""
DEFAULT_CLUSTER_LABEL = "cluster"
"""The external label that names the cluster when one Prometheus (or Thanos, Mimir) holds several clusters."""


def resource_matcher(resources: list[str]) -> str:
    """A label matcher for the accelerator resources, e.g. `resource=~"google\\\\.com/tpu|nvidia\\\\.com/gpu"`."""
    alternatives = "|".join(r.replace(".", "\\\\.") for r in sorted(set(resources)))
    return f'{RESOURCE}=~"{alternatives}"'
