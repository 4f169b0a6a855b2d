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


# --- issue 36: every pod set Kueue creates, within nominal quota -------------------------------------------------


def nominal_of(inventory: Inventory, team: str, flavor: str) -> int:
    return next(q.nominal for q in inventory.team_by_name[team].quotas if q.flavor == flavor)


def test_every_teams_job_fits_its_nominal_quota_with_every_pod_set(example: Inventory) -> None:
    """Before issue 36, 5 of 8 teams' jobs asked more than their nominal quota (rl-research, inference and
    search-ranking 40 GPUs against 16): admitted only by borrowing, they could be preempted mid-sweep."""
    for team in example.teams:
        target = team_target(example, team.name, BEFORE_THE_BLOCK)
        assert target is not None
        job = job_of(example, team.name)
        sets = pod_sets_of(job)
        assert [s.name for s in sets] == ["head", "solvers"]  # HTTPMode: no submitter pod set
        asked = sum(s.requests[target.resource] * s.count for s in sets)
        assert asked <= nominal_of(example, team.name, target.flavor), team.name
        assert job_refusals(example, job, target, BEFORE_THE_BLOCK) == [], team.name


def test_the_k8s_job_mode_job_is_refused_for_its_submitter(example: Inventory) -> None:
    """KubeRay's default submissionMode (K8sJobMode) makes Kueue count a `submitter` pod set (cpu 500m, memory
    200Mi, KubeRay's default submitter); the queues cover only accelerators, so `BlockUndeclared` refuses it."""
    target = team_target(example, "llm-pretrain", BEFORE_THE_BLOCK)
    assert target is not None and not target.pod_resources
    job = job_of(example, "llm-pretrain")
    del job["spec"]["submissionMode"]  # unset: KubeRay's CRD default, K8sJobMode
    submitter = pod_sets_of(job)[-1]
    assert (submitter.name, submitter.count) == ("submitter", 1)
    assert submitter.requests == {"cpu": Decimal("0.5"), "memory": Decimal(200 * 2**20)}
    reasons = [r.reason for r in job_refusals(example, job, target, BEFORE_THE_BLOCK)]
    assert any("requests `cpu`, which the ClusterQueue does not cover" in r for r in reasons), reasons


@pytest.mark.parametrize(
    "mode, want_sets, want_head_cpu",
    [
        ("K8sJobMode", ["head", "w", "submitter"], Decimal(1)),  # a submitter Job of its own
        ("SidecarMode", ["head", "w"], Decimal("1.5")),  # the submitter container runs in the head pod
        ("HTTPMode", ["head", "w"], Decimal(1)),  # the operator submits over HTTP
        ("InteractiveMode", ["head", "w"], Decimal(1)),  # the user submits
    ],
)
def test_pod_sets_follow_kueues_rayjob_rules(mode: str, want_sets: list[str], want_head_cpu: Decimal) -> None:
    template = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}}
    job = {
        "spec": {
            "submissionMode": mode,
            "rayClusterSpec": {
                "headGroupSpec": {"template": template},
                "workerGroupSpecs": [{"groupName": "w", "replicas": 2, "numOfHosts": 4, "template": template}],
            },
        }
    }
    sets = pod_sets_of(job)
    assert [s.name for s in sets] == want_sets
    assert sets[0].requests["cpu"] == want_head_cpu  # the limit is the request, as Kubernetes defaults it
    assert sets[1].count == 2 * 4  # replicas times hosts per replica (`effectiveWorkerCount`)
