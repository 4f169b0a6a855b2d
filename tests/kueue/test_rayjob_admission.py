"""The plan sweep's RayJob (`qm plan --rayjob`) requests the team's accelerators and is admissible under Kueue's
default quota check, proven by the offline admission check (issue 28, point 6); it mounts only storage the team
names."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from bench.generate import enterprise_inventory
from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.modules.kueue.admission import job_refusals, pod_sets_of, team_target
from quartermaster.planner.options import PlanInputError
from quartermaster.planner.rayjob import rayjob
from tests.builders import BEFORE_THE_BLOCK, make_inventory
from tests.paths import INVENTORY

ARGS = ["--horizon", "8q", "--draws", "2", "--seed", "7"]


@pytest.fixture(scope="module")
def example() -> Inventory:
    return load(INVENTORY).inventory


def job_of(inventory: Inventory, team: str, now: dt.datetime = BEFORE_THE_BLOCK) -> dict:
    target = team_target(inventory, team, now)
    return rayjob(inventory, team, ARGS, image="qm:1", target=target, results_claim="sweeps")


def test_every_team_of_the_example_gets_a_job_its_queue_admits(example: Inventory) -> None:
    checked = 0
    for team in example.teams:
        target = team_target(example, team.name, BEFORE_THE_BLOCK)
        assert target is not None, team.name  # every example team has a queue on a cluster that runs pods
        job = job_of(example, team.name)
        assert job_refusals(example, job, target, BEFORE_THE_BLOCK) == [], team.name
        for pod_set in pod_sets_of(job):  # one node's accelerators a pod, nothing the queue does not cover
            assert pod_set.requests[target.resource] == target.per_node
            assert set(pod_set.requests) <= {target.resource, "cpu", "memory"}
            assert ("cpu" in pod_set.requests) == target.pod_resources
        checked += 1
    assert checked == len(example.teams)


def test_the_job_mounts_only_the_claim_the_team_names(example: Inventory) -> None:
    job = job_of(example, "llm-pretrain")
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    assert head["volumes"] == [{"name": "results", "persistentVolumeClaim": {"claimName": "sweeps"}}]
    workers = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert "volumes" not in workers
    with pytest.raises(PlanInputError, match="--rayjob needs --results-claim"):
        rayjob(
            example,
            "llm-pretrain",
            ARGS,
            image="qm:1",
            target=team_target(example, "llm-pretrain", BEFORE_THE_BLOCK),
            results_claim=None,
        )


def test_the_old_cpu_and_memory_job_is_refused_under_the_default_check(example: Inventory) -> None:
    """Issue 28: the job asked only cpu and memory while the queue covers GPUs: refused under `BlockUndeclared`."""
    target = team_target(example, "llm-pretrain", BEFORE_THE_BLOCK)
    assert target is not None and not target.pod_resources
    job = job_of(example, "llm-pretrain")
    for group in [job["spec"]["rayClusterSpec"]["headGroupSpec"], *job["spec"]["rayClusterSpec"]["workerGroupSpecs"]]:
        group["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "8", "memory": "16Gi"}}
    reasons = [r.reason for r in job_refusals(example, job, target, BEFORE_THE_BLOCK)]
    assert any("requests `cpu`, which the ClusterQueue does not cover" in r for r in reasons), reasons


def test_a_queue_that_covers_cpu_and_memory_gets_them_requested() -> None:
    declared = (
        make_inventory()
        .edit("teams", "ml", cohort=None, quotas=[{"flavor": "h100", "nominal": 16, "cpu": 100, "memory_gib": 400}])
        .build()
    )
    target = team_target(declared, "ml", BEFORE_THE_BLOCK)
    assert target is not None and target.pod_resources
    job = job_of(declared, "ml")
    sets = pod_sets_of(job)
    # 16 GPUs = two 8-GPU nodes: a head and one worker; 1 + 8 cpus and 4 + 16 GiB
    assert [(s.name, s.count) for s in sets] == [("head", 1), ("solvers", 1)]
    assert sum(s.requests["cpu"] * s.count for s in sets) == Decimal(9)
    assert job_refusals(declared, job, target, BEFORE_THE_BLOCK) == []


def test_a_mixed_queue_asks_for_a_topology_to_reach_its_tas_flavor(example: Inventory) -> None:
    """rl-research's queue has the reserved TAS flavor and the plain spot flavor: without the annotation Kueue would
    never place the job on the reserved pool."""
    target = team_target(example, "rl-research", BEFORE_THE_BLOCK)
    assert target is not None and target.flavor == "h100-mega-resv"
    assert target.topology_annotation == "kubernetes.io/hostname"
    assert all(s.topology_request for s in pod_sets_of(job_of(example, "rl-research")))


def test_a_queue_too_small_for_a_head_and_a_worker_is_refused() -> None:
    small = make_inventory().edit("teams", "ml", cohort=None, quotas=[{"flavor": "h100", "nominal": 8}]).build()
    with pytest.raises(PlanInputError, match=r"holds 1 node\(s\) of 8 nvidia.com/gpu in flavor h100"):
        job_of(small, "ml")


def test_every_team_of_a_generated_organisation_gets_an_admissible_job(tmp_path: Path) -> None:
    inventory = load(enterprise_inventory(tmp_path / "inv", teams=6, flavors=4, gpus_per_quota=16)).inventory
    inventory = inventory.model_copy(
        update={"policy": inventory.policy.model_copy(update={"quota_contact_email": "capacity@example.com"})}
    )
    for team in inventory.teams:
        target = team_target(inventory, team.name, BEFORE_THE_BLOCK)
        assert target is not None
        assert job_refusals(inventory, job_of(inventory, team.name), target, BEFORE_THE_BLOCK) == [], team.name
