"""The Prometheus metric and label names Quartermaster reads, each with the source it was checked against.

Kueue (kubernetes-sigs/kueue v0.19.2, tag commit 8eab687, read 2026-08: `pkg/metrics/metrics.go` and
`site/content/en/docs/reference/metrics.md`):
- `kueue_cluster_queue_resource_reservation` and `kueue_cluster_queue_resource_usage`, gauges with labels
  `cohort`, `cluster_queue`, `flavor`, `resource`, `replica_role`: "the cluster_queue's total resource
  reservation (usage) within all the flavors". A reservation is quota held by a workload (granted, its admission
  checks may still be running); usage is quota of admitted workloads. Both count *requests* in the flavor.
- `kueue_cluster_queue_nominal_quota`, `kueue_cluster_queue_borrowing_limit`, `kueue_cluster_queue_lending_limit`,
  same labels (a limit that is unset reports +Inf).
- These five are "optional metrics", exported only when the manager's Configuration sets
  `metrics.enableClusterQueueResources: true`.
- `kueue_cluster_queue_resource_pending`, labels `cluster_queue`, `resource`, `replica_role`: requests of pending
  workloads, not yet assigned to a flavor.
- `kueue_pending_workloads`, labels `cluster_queue`, `status` (`active` or `inadmissible`), `replica_role`.
- `replica_role` is `leader`, `follower` or `standalone`; a follower replica's gauges are left out so that an HA
  pair is not counted twice.

kube-state-metrics (kubernetes/kube-state-metrics `docs/metrics/workload/pod-metrics.md`, main, read 2026-08):
`kube_pod_container_resource_requests`, labels `namespace`, `pod`, `uid`, `container`, `node`, `resource`,
`unit`; the resource name is sanitised to a label value, so `nvidia.com/gpu` reads `nvidia_com_gpu`.

NVIDIA DCGM exporter (NVIDIA/dcgm-exporter commit d5e5f51, 2026-05-12: `etc/default-counters.csv`,
`internal/pkg/rendermetrics/render_metrics.go`, `internal/pkg/transformation/const.go`): `DCGM_FI_DEV_GPU_UTIL`,
a gauge, "GPU utilization (in %)" 0-100, labels `gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname`
and, with the Kubernetes pod mapping on, `namespace`, `pod`, `container`.
"""

from __future__ import annotations

KUEUE_RESERVATION = "kueue_cluster_queue_resource_reservation"
KUEUE_USAGE = "kueue_cluster_queue_resource_usage"
KUEUE_NOMINAL_QUOTA = "kueue_cluster_queue_nominal_quota"
KUEUE_BORROWING_LIMIT = "kueue_cluster_queue_borrowing_limit"
KUEUE_LENDING_LIMIT = "kueue_cluster_queue_lending_limit"
KUEUE_RESOURCE_PENDING = "kueue_cluster_queue_resource_pending"
KUEUE_PENDING_WORKLOADS = "kueue_pending_workloads"

CLUSTER_QUEUE = "cluster_queue"
FLAVOR = "flavor"
RESOURCE = "resource"
REPLICA_ROLE = "replica_role"
NOT_FOLLOWER = f'{REPLICA_ROLE}!="follower"'

KSM_POD_REQUESTS = "kube_pod_container_resource_requests"
DCGM_GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"

DEFAULT_CLUSTER_LABEL = "cluster"
"""The external label that names the cluster when one Prometheus (or Thanos, Mimir) holds several clusters."""


def ksm_resource(resource: str) -> str:
    """A Kubernetes resource name as kube-state-metrics writes it in its `resource` label."""
    return resource.replace(".", "_").replace("/", "_")


def resource_matcher(resources: list[str]) -> str:
    """A label matcher for the accelerator resources, e.g. `resource=~"google\\\\.com/tpu|nvidia\\\\.com/gpu"`."""
    alternatives = "|".join(r.replace(".", "\\\\.") for r in sorted(set(resources)))
    return f'{RESOURCE}=~"{alternatives}"'
