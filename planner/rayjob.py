"""A plan sweep as a KubeRay RayJob that Kueue admits against a team's accelerator quota (`qm plan --rayjob TEAM`).

Kueue manages RayJobs as workloads (kueue.sigs.k8s.io/docs/tasks/run/rayjobs/, read 2026-11-25): the label
`kueue.x-k8s.io/queue-name` names the LocalQueue, Kueue creates the job suspended and lets it start when the head
and every worker fit the ClusterQueue's quota, and it requires `shutdownAfterJobFinishes: true`. Team queues cover
accelerators (and cpu and memory only where a quota sets them), and under Kueue's default quota check a pod that
requests a resource its queue does not cover is never admitted; so every pod asks for one node's accelerators of
the queue's first flavor, and for cpu and memory only when the queue covers them (`QueueTarget`, found by
`modules/kueue/admission.py`, which also checks the job: tests/planner). The job fits the queue's nominal quota
(borrowed quota is reclaimed by preempting the job mid-sweep) and is submitted in HTTPMode (no submitter pod).
Results go to a PersistentVolumeClaim the team creates and names (`results_claim`); the job creates no storage.
"""

from __future__ import annotations

import shlex
from typing import Any, Protocol

from quartermaster.issues import did_you_mean
from quartermaster.model import Inventory
from quartermaster.planner.options import PlanInputError

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
RESULTS = "/results"
"""Where the head writes the plan and its sweep: the team's PersistentVolumeClaim, which outlives the Ray cluster."""
DEFAULT_WORKERS = 4
SUBMISSION_MODE = "HTTPMode"
"""The operator submits the job to the Ray head over HTTP. KubeRay's default, K8sJobMode, adds a submitter Job whose
pod (cpu 500m, memory 200Mi) Kueue counts as a third pod set; a queue that covers only accelerators refuses the
whole RayJob for it under Kueue's default quota check (ray-project/kuberay v1.7.0 `JobSubmissionMode`;
kubernetes-sigs/kueue v0.19.2 `RayJob.PodSets`)."""


class Target(Protocol):
    """Where the job is queued and what each pod asks for (`modules.kueue.admission.QueueTarget`)."""

    @property
    def namespace(self) -> str: ...
    @property
    def queue(self) -> str: ...
    @property
    def flavor(self) -> str: ...
    @property
    def resource(self) -> str: ...
    @property
    def per_node(self) -> int: ...
    @property
    def nodes(self) -> int: ...
    @property
    def pod_resources(self) -> bool: ...
    @property
    def topology_annotation(self) -> str | None: ...


def rayjob(
    inventory: Inventory,
    team: str,
    plan_args: list[str],
    *,
    image: str,
    target: Target | None,
    results_claim: str | None,
    workers: int | None = None,
    cpus_per_worker: int = 8,
    memory_gib_per_worker: int = 16,
) -> dict[str, Any]:
    """The RayJob that runs `qm plan /inventory <plan_args> --backend ray --out /results/plan` in the team's first
    namespace, queued to the team's LocalQueue: a head and `workers` workers (default: up to 4, as many as the
    queue's nominal quota holds), each pod one node of the target flavor's accelerators; the image must hold
    Quartermaster with the `ray` extra and the inventory at /inventory, and `results_claim` must be a PVC in that
    namespace."""
    found = inventory.team_by_name.get(team)
    if found is None:
        hint = did_you_mean(team, inventory.team_by_name)
        raise PlanInputError(f"--rayjob: no team `{team}`." + (f" {hint}" if hint else ""))
    if results_claim is None:
        raise PlanInputError(
            "--rayjob needs --results-claim: the PersistentVolumeClaim in the team's namespace that the plan is "
            "written to (docs/how-to/plan-sweeps.md shows one to create)."
        )
    if target is None:
        raise PlanInputError(
            f"--rayjob: team `{team}` has no ClusterQueue on a cluster that runs pods (no quota in any pool). "
            "Give it quota in its file under inventory/teams/, or pick a team that has some."
        )
    most = target.nodes - 1
    count = min(DEFAULT_WORKERS, most) if workers is None else workers
    if count < 1 or count > most:
        raise PlanInputError(
            f"--rayjob: team `{team}`'s queue holds {target.nodes} node(s) of {target.per_node} {target.resource} in "
            f"flavor {target.flavor} in its nominal quota; the job needs a head and at least one worker, each a node"
            + (f", and {count} workers need {count + 1}" if workers is not None else "")
            + ". Raise the team's quota there, or use `qm plan --backend processes` locally."
        )
    entrypoint = shlex.join(["qm", "plan", "/inventory", *plan_args, "--backend", "ray", "--out", f"{RESULTS}/plan"])
    accelerators = str(target.per_node)

    def template(name: str, cpus: int, memory_gib: int, mounts: bool) -> dict[str, Any]:
        size = {target.resource: accelerators}
        if target.pod_resources:
            size.update({"cpu": str(cpus), "memory": f"{memory_gib}Gi"})
        container: dict[str, Any] = {
            "name": name,
            "image": image,
            "resources": {"requests": size, "limits": dict(size)},
        }
        spec: dict[str, Any] = {"containers": [container]}
        if mounts:
            container["volumeMounts"] = [{"name": "results", "mountPath": RESULTS}]
            spec["volumes"] = [{"name": "results", "persistentVolumeClaim": {"claimName": results_claim}}]
        out: dict[str, Any] = {"spec": spec}
        if target.topology_annotation:
            out["metadata"] = {"annotations": {TOPOLOGY_ANNOTATION: target.topology_annotation}}
        return out

    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "plan-sweep", "namespace": target.namespace, "labels": {QUEUE_LABEL: target.queue}},
        "spec": {
            "shutdownAfterJobFinishes": True,
            "submissionMode": SUBMISSION_MODE,
            "entrypoint": entrypoint,
            "rayClusterSpec": {
                "headGroupSpec": {
                    "rayStartParams": {"num-cpus": "0"},  # the driver only; the scenarios run on the workers
                    "template": template("ray-head", 1, 4, mounts=True),
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "solvers",
                        "replicas": count,
                        "minReplicas": count,
                        "maxReplicas": count,
                        "rayStartParams": {"num-cpus": str(cpus_per_worker)},
                        "template": template("ray-worker", cpus_per_worker, memory_gib_per_worker, mounts=False),
                    }
                ],
            },
        },
    }
