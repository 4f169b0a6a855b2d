"""A plan sweep as a KubeRay RayJob that Kueue admits through a team's LocalQueue (`qm plan --rayjob TEAM`).

Kueue manages RayJobs as workloads (kueue.sigs.k8s.io/docs/tasks/run/rayjobs/, read 2026-11-25): the label
`kueue.x-k8s.io/queue-name` names the LocalQueue, Kueue creates the job suspended and lets it start when the head
and every worker fit the ClusterQueue's quota, and it requires `shutdownAfterJobFinishes: true`. `qm render` gives
each team a LocalQueue named after it in every one of its namespaces (modules/kueue/builders.py).
"""

from __future__ import annotations

import shlex
from typing import Any

from quartermaster.issues import did_you_mean
from quartermaster.model import Inventory
from quartermaster.planner.options import PlanInputError

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
RESULTS = "/results"
"""Where the job writes the plan and its sweep: a PersistentVolumeClaim that outlives the Ray cluster."""


def rayjob(
    inventory: Inventory,
    team: str,
    plan_args: list[str],
    *,
    image: str,
    workers: int = 4,
    cpus_per_worker: int = 8,
    memory_gib_per_worker: int = 16,
) -> dict[str, Any]:
    """The RayJob that runs `qm plan /inventory <plan_args> --backend ray --out /results/plan` in the team's first
    namespace, queued to the team's LocalQueue; the image must hold Quartermaster with the `ray` extra and the
    inventory at /inventory, and a PVC `plan-sweep-results` must exist in that namespace."""
    found = inventory.team_by_name.get(team)
    if found is None:
        hint = did_you_mean(team, inventory.team_by_name)
        raise PlanInputError(f"--rayjob: no team `{team}`." + (f" {hint}" if hint else ""))
    entrypoint = shlex.join(["qm", "plan", "/inventory", *plan_args, "--backend", "ray", "--out", f"{RESULTS}/plan"])

    def container(name: str, cpus: int, memory_gib: int, mounts: bool) -> dict[str, Any]:
        size = {"cpu": str(cpus), "memory": f"{memory_gib}Gi"}
        out: dict[str, Any] = {"name": name, "image": image, "resources": {"requests": size, "limits": dict(size)}}
        if mounts:
            out["volumeMounts"] = [{"name": "results", "mountPath": RESULTS}]
        return out

    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "plan-sweep", "namespace": found.namespaces[0], "labels": {QUEUE_LABEL: found.name}},
        "spec": {
            "shutdownAfterJobFinishes": True,
            "entrypoint": entrypoint,
            "rayClusterSpec": {
                "headGroupSpec": {
                    "rayStartParams": {"num-cpus": "0"},  # the driver only; the scenarios run on the workers
                    "template": {
                        "spec": {
                            "containers": [container("ray-head", 1, 4, mounts=True)],
                            "volumes": [
                                {"name": "results", "persistentVolumeClaim": {"claimName": "plan-sweep-results"}}
                            ],
                        }
                    },
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "solvers",
                        "replicas": workers,
                        "minReplicas": workers,
                        "maxReplicas": workers,
                        "rayStartParams": {},
                        "template": {
                            "spec": {
                                "containers": [
                                    container("ray-worker", cpus_per_worker, memory_gib_per_worker, mounts=False)
                                ]
                            }
                        },
                    }
                ],
            },
        },
    }
