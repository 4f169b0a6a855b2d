"""Each cross-object rule: a passing case (the base inventory) and the failing cases it must catch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from quartermaster.checks import RULES, run_checks
from quartermaster.issues import Issue
from tests.builders import InventoryBuilder, make_inventory


@dataclass(frozen=True)
class Case:
    change: Callable[[InventoryBuilder], InventoryBuilder]
    want_rule: str
    want_message: str
    want_severity: str = "error"


def issues_of(builder: InventoryBuilder) -> list[Issue]:
    return run_checks(builder.build())


CASES = {
    # Two teams with the same name.
    "duplicate team": Case(lambda b: b.team("ml"), "unique-names", "2 teams are named `ml`"),
    # A namespace claimed by two teams would let one submit to the other's queue.
    "namespace shared by two teams": Case(
        lambda b: b.team("ops", namespaces=["ml"]), "unique-names", "namespace `ml` already belongs to team `ml`"
    ),
    # Issue 37: a residency site twice (a key twice in any list is refused, with where the first one is).
    "site listed twice": Case(
        lambda b: b.edit("teams", "ml", sites=["gcp-us-central1", "gcp-us-central1"]),
        "unique-keys",
        "site `gcp-us-central1` is listed twice",
    ),
    # Issue 17: a team in kube-system gets a Role that can create pods there.
    "team in a system namespace": Case(
        lambda b: b.edit("teams", "ml", namespaces=["kube-system"]),
        "tenancy",
        "namespace `kube-system` is reserved (Kubernetes",
    ),
    "team in a namespace the policy reserves": Case(
        lambda b: b.edit("teams", "ml", namespaces=["monitoring-east"]).policy(system_namespaces=["monitoring-*"]),
        "tenancy",
        "namespace `monitoring-east` is reserved (policy.system_namespaces)",
    ),
    "namespace listed twice": Case(
        lambda b: b.edit("teams", "ml", namespaces=["ml", "ml"]), "tenancy", "namespace `ml` is listed twice"
    ),
    # Issue 17: binding a team role to system:authenticated hands it to every user and service account.
    "system group": Case(
        lambda b: b.edit("teams", "ml", group="system:authenticated"),
        "tenancy",
        "group `system:authenticated` is a Kubernetes system group",
    ),
    "system group for one platform": Case(
        lambda b: b.edit("teams", "ml", groups={"gke": "system:masters"}),
        "tenancy",
        "group `system:masters` is a Kubernetes system group",
    ),
    # Issue 16: GKE matches RBAC Group subjects against Google Group e-mails; a team name matches nothing.
    "group GKE cannot match": Case(
        lambda b: b.edit("teams", "ml", groups={}),
        "rbac-subjects",
        "on GKE the team's RoleBindings name the group `ml`",
        "warning",
    ),
    # Issue 16: an EFA pool's launch-template interfaces carry no security group unless the cluster names them.
    "EFA pool without security groups": Case(
        lambda b: (
            b.site("aws", provider="aws", region="us-east-1", zones=["us-east-1a"])
            .cluster(
                "eks", kind="eks", site="aws", project="1", eks={"node_role_arn": "arn", "subnets": {"us-east-1a": "s"}}
            )
            .pool("p5", cluster="eks", machine="p5.48xlarge", zones=["us-east-1a"], nodes=1, gpudirect=True)
        ),
        "provisioning",
        "EFA interfaces need the cluster's security groups",
    ),
    # Pools of different clusters share the ResourceFlavor namespace.
    "duplicate pool across clusters": Case(
        lambda b: b.cluster("gke-b", kind="gke", site="gcp-us-central1", project="p").pool(
            "h100", cluster="gke-b", nodes=1
        ),
        "unique-names",
        "2 pools are named `h100`",
    ),
    # A 10-slice TPU pool named with 39 characters gets node pools `<name>-9` of 41.
    "slice node pool name too long": Case(
        lambda b: b.pool("v6e-" + "x" * 35, machine="ct6e-standard-4t", tpu={"topology": "2x2", "slices": 10}),
        "derived-names",
        "longer than GKE's 40 characters",
    ),
    # AKS refuses agent pool names that are not 1-12 lower-case alphanumerics.
    "AKS pool name with a dash": Case(
        lambda b: (
            b.site("az", provider="azure", region="eastus", zones=["1"])
            .cluster("aks-a", kind="aks", site="az", project="sub", aks={"resource_group": "rg"})
            .pool("nd-h100", cluster="aks-a", machine="Standard_ND96isr_H100_v5", zones=["1"], nodes=1)
        ),
        "derived-names",
        "AKS agent pool names are 1-12",
    ),
    # 3 nodes over 2 zones: GKE sizes pools per zone.
    "uneven nodes over zones": Case(
        lambda b: b.edit_pool("h100", nodes=3, zones=["us-central1-a", "us-central1-b"]),
        "even-zones",
        "3 nodes cannot be split evenly over 2 zones",
    ),
    "typo in quota flavor": Case(
        lambda b: b.edit("teams", "ml", quotas=[{"flavor": "h100x", "nominal": 8}]),
        "references",
        "no such flavor `h100x`",
    ),
    "unknown machine": Case(
        lambda b: b.edit_pool("h100", machine="a3-megagpu-16g"), "references", "no such machine `a3-megagpu-16g`"
    ),
    "unknown cohort": Case(lambda b: b.edit("teams", "ml", cohort="orgg"), "references", "no such cohort `orgg`"),
    "unknown cohort parent": Case(
        lambda b: b.add("cohorts", name="div", parent="nope"), "references", "no such cohort `nope`"
    ),
    "unknown priority class": Case(
        lambda b: b.edit("teams", "ml", priority_class="urgent"), "references", "no such priority class `urgent`"
    ),
    "unknown commitment": Case(
        lambda b: b.edit_pool("h100", provisioning="reservation", commitment="cud-x"),
        "references",
        "no such commitment `cud-x`",
    ),
    "commitment at unknown site": Case(
        lambda b: b.add(
            "commitments",
            name="cud-a",
            kind="cud",
            machine="a3-megagpu-8g",
            site="gcp-mars",
            count=2,
            term_months=12,
            start="2026-01-01",
            usd_per_node_hour=40,
        ),
        "references",
        "no such site `gcp-mars`",
    ),
    "unknown residency site": Case(
        lambda b: b.edit("teams", "ml", sites=["gcp-eu"]), "references", "no such site `gcp-eu`"
    ),
    "non-canonical accelerator": Case(
        lambda b: b.policy(equivalence={"h100": 1.0}), "accelerator-names", "write `H100-80GB`"
    ),
    "ambiguous accelerator": Case(lambda b: b.policy(equivalence={"a100": 1.0}), "accelerator-names", "ambiguous"),
    "cohort cycle": Case(
        lambda b: b.add("cohorts", name="a", parent="b").add("cohorts", name="b", parent="a"),
        "cohort-cycles",
        "cohorts form a cycle",
    ),
    "AWS machine in a GKE cluster": Case(
        lambda b: b.edit_pool("h100", machine="p5.48xlarge"), "machine-at-provider", "`p5.48xlarge` is a `aws` machine"
    ),
    "EKS cluster at a GCP site": Case(
        lambda b: b.edit("clusters", "gke-a", kind="eks"),
        "machine-at-provider",
        "a `eks` cluster cannot run at a `gcp` site",
    ),
    "zone of another region": Case(
        lambda b: b.edit_pool("h100", zones=["us-east4-a"]),
        "zones-in-region",
        "zone `us-east4-a` is not in site `gcp-us-central1`",
    ),
    "TPU topology of another generation": Case(
        lambda b: b.pool("v5p", machine="ct5p-hightpu-4t", tpu={"topology": "4x4"}),
        "tpu-slices",
        "topology `4x4` is not valid for `ct5p-hightpu-4t`",
    ),
    "TPU node count disagrees with topology": Case(
        lambda b: b.pool("v5p", machine="ct5p-hightpu-4t", tpu={"topology": "2x2x4", "slices": 2}, nodes=4),
        "tpu-slices",
        "slices x chips / chips per host = 2 x 16 / 4 = 8",
    ),
    "TPU machine without slice shape": Case(
        lambda b: b.pool("v6e", machine="ct6e-standard-4t", nodes=4), "tpu-slices", "needs a slice shape"
    ),
    "TPU slice in two zones": Case(
        lambda b: b.pool(
            "v6e", machine="ct6e-standard-4t", tpu={"topology": "4x4"}, zones=["us-central1-a", "us-central1-b"]
        ),
        "tpu-slices",
        "exactly one zone",
    ),
    # Issue 36: a flex-start TPU pool was emitted as always-on fixed-size slices behind a check that never succeeds.
    "flex-start TPU slices": Case(
        lambda b: b.pool(
            "v6e",
            machine="ct6e-standard-4t",
            tpu={"topology": "4x4"},
            zones=["us-central1-a"],
            provisioning="flex-start",
        ),
        "provisioning",
        "a TPU pool cannot be flex-start",
    ),
    "flex-start with fixed size": Case(
        lambda b: b.edit_pool("h100", provisioning="flex-start"), "provisioning", "cannot have a fixed size"
    ),
    "reservation pool without commitment": Case(
        lambda b: b.edit_pool("h100", provisioning="reservation"),
        "provisioning",
        "must name the commitment it consumes",
    ),
    "capacity block on GKE": Case(
        lambda b: b.edit_pool("h100", provisioning="capacity-block", commitment=None),
        "provisioning",
        "capacity blocks are an EC2 (EKS) provisioning mode",
    ),
    "commitment of another machine": Case(
        lambda b: b.add(
            "commitments",
            name="cud-a",
            kind="cud",
            machine="a3-highgpu-8g",
            site="gcp-us-central1",
            count=2,
            term_months=12,
            start="2026-01-01",
            usd_per_node_hour=40,
        ).edit_pool("h100", provisioning="reservation", commitment="cud-a"),
        "commitment-consumers",
        "is for `a3-highgpu-8g`, not `a3-megagpu-8g`",
    ),
    "pools consume more than committed": Case(
        lambda b: b.add(
            "commitments",
            name="cud-a",
            kind="cud",
            machine="a3-megagpu-8g",
            site="gcp-us-central1",
            count=1,
            term_months=12,
            start="2026-01-01",
            usd_per_node_hour=40,
        ).edit_pool("h100", provisioning="reservation", commitment="cud-a"),
        "commitment-consumers",
        "pools consume 2 nodes of commitment `cud-a`, which holds 1",
        "warning",
    ),
    "EKS cluster without subnets": Case(
        lambda b: b.site("aws-use1", provider="aws", region="us-east-1").cluster(
            "eks-a", kind="eks", site="aws-use1", project="1"
        ),
        "cluster-settings",
        "an EKS cluster needs `eks",
    ),
    "MultiKueue worker not marked as worker": Case(
        lambda b: b.cluster(
            "mk",
            kind="gke",
            site="gcp-us-central1",
            project="p",
            multikueue_role="manager",
            multikueue_workers=["gke-a"],
        ),
        "cluster-settings",
        "cluster `gke-a` is listed as a worker but its `multikueue_role` is `none`",
    ),
    "over-subscribed flavor": Case(
        lambda b: b.team("ops", quotas={"h100": 16}),
        "quota-within-capacity",
        "nominal quotas sum to 24 but the pool has 16 accelerators",
    ),
    "over-subscription allowed by policy": Case(
        lambda b: b.team("ops", quotas={"h100": 16}).policy(allow_oversubscription=True),
        "quota-within-capacity",
        "over-subscribed",
        "warning",
    ),
    "lending above nominal": Case(
        lambda b: b.edit("teams", "ml", quotas=[{"flavor": "h100", "nominal": 8, "lending_limit": 9}]),
        "lending-within-nominal",
        "lending_limit (9) is above nominal (8)",
    ),
    "borrowing without cohort": Case(
        lambda b: b.edit("teams", "ml", cohort=None, quotas=[{"flavor": "h100", "nominal": 8, "borrowing_limit": 8}]),
        "cohort-for-borrowing",
        "`borrowing_limit` needs the team to be in a cohort",
    ),
    # Issue 26, point 7: a priced inventory whose spot pool has only an on-demand price; on-demand does not stand in.
    "pool without the price of its pricing model": Case(
        lambda b: b.edit_pool("h100", provisioning="spot").add(
            "prices",
            machine="a3-megagpu-8g",
            site="gcp-us-central1",
            pricing_model="on-demand",
            usd_per_node_hour="88.25",
            source="test",
        ),
        "pool-prices",
        "pool `h100` (spot at gcp-us-central1) has no price: the price book has no `spot` row",
        "warning",
    ),
    # Issue 35, point 3: an on-prem rate's parts must add up to it ((24.50 - 5.50) x 48 x 730 = 665,760, not 600,000).
    "on-prem parts that do not add up to the rate": Case(
        lambda b: (
            b.add(
                "prices",
                machine="dgx-b200",
                site="onprem-sjc",
                pricing_model="onprem",
                usd_per_node_hour="24.50",
                source="PO",
            )
            .add(
                "onprem_costs",
                machine="dgx-b200",
                site="onprem-sjc",
                item="hardware",
                usd_per_node="600000",
                source="PO",
            )
            .add(
                "onprem_costs",
                machine="dgx-b200",
                site="onprem-sjc",
                item="power",
                usd_per_node_hour="5.50",
                source="x",
            )
        ),
        "onprem-cost-parts",
        "capitalises $665,760.00 a node over its term, the capital items $600,000.00",
    ),
    "scenario probabilities do not sum to 1": Case(
        lambda b: b.policy(scenarios=[{"name": "low", "probability": 0.3}, {"name": "high", "probability": 0.3}]),
        "scenario-probabilities",
        "sum to 0.6, not 1",
    ),
}


def test_base_inventory_passes_every_rule() -> None:
    assert issues_of(make_inventory()) == []


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_rule_catches(case: Case) -> None:
    found = issues_of(case.change(make_inventory()))
    matching = [
        i for i in found if i.rule == case.want_rule and case.want_message.lower() in f"{i.message} {i.fix}".lower()
    ]
    assert matching, f"no {case.want_rule} issue mentioning {case.want_message!r}; got {[i.format() for i in found]}"
    assert {i.severity for i in matching} == {case.want_severity}


def test_every_registered_rule_has_a_failing_case() -> None:
    covered = {c.want_rule for c in CASES.values()}
    assert {r.name for r in RULES} <= covered


def test_issues_name_the_objects_they_are_about() -> None:
    issue = next(i for i in issues_of(make_inventory().edit("teams", "ml", cohort="orgg")) if i.rule == "references")
    assert issue.ref == ("teams", "ml", "cohort")
