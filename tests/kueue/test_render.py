"""Rendered objects of the example inventory: valid, safe, derived from the inventory, byte-identical."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from quartermaster.capacity import pool_accelerators
from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.modules.kueue import objects_for_cluster, render_cluster, validate_manifests
from quartermaster.modules.kueue.builders import accelerator_flavor_name
from quartermaster.modules.kueue.k8s import canonical_quantity, parse_quantity, selector_matches
from quartermaster.names import POOL_LABEL
from quartermaster.providers.aks.cloud import aks_agent_pools
from quartermaster.yamlwriter import dump_documents
from tests.builders import DURING_THE_BLOCK, make_inventory
from tests.paths import DATA, INVENTORY

GOLDEN = DATA / "kueue" / "golden"


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    result = load(INVENTORY)
    assert result.ok
    return result.inventory


def with_version(inventory: Inventory, version: str) -> Inventory:
    return inventory.model_copy(
        update={"clusters": tuple(c.model_copy(update={"kueue_api_version": version}) for c in inventory.clusters)}
    )


def of_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {
        f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}".lstrip("/"): o
        for o in objects
        if o["kind"] == kind
    }


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_every_rendered_object_passes_schema_cel_webhook_and_runtime_rules(inventory: Inventory, version: str) -> None:
    inv = with_version(inventory, version)
    for cluster in inv.clusters:
        objects = objects_for_cluster(inv, cluster.name, DURING_THE_BLOCK)
        assert objects, cluster.name
        assert all(o["apiVersion"] == f"kueue.x-k8s.io/{version}" for o in objects if "kueue" in o["apiVersion"])
        assert [i.format() for i in validate_manifests(objects, cluster.name)] == []


def test_no_cluster_queue_admits_a_namespace_outside_its_team(inventory: Inventory) -> None:
    every_namespace = {ns for t in inventory.teams for ns in t.namespaces} | {"default", "kube-system", "kueue-system"}
    checked = 0
    for cluster in inventory.clusters:
        for name, cq in of_kind(objects_for_cluster(inventory, cluster.name, DURING_THE_BLOCK), "ClusterQueue").items():
            team = inventory.team_by_name[name]
            selector = cq["spec"]["namespaceSelector"]
            admitted = {
                ns
                for ns in every_namespace
                if selector_matches(selector, {"kubernetes.io/metadata.name": ns, "team": team.name})
            }
            assert admitted == set(team.namespaces), (cluster.name, name)
            checked += 1
    assert checked == sum(
        1
        for c in inventory.clusters
        for t in inventory.teams
        if any(q.flavor in {p.name for p in c.pools} for q in t.quotas)
        or (
            c.multikueue_role == "manager"
            and any(
                q.flavor in {p.name for w in c.multikueue_workers for p in inventory.cluster_by_name[w].pools}
                for q in t.quotas
            )
        )
    )


def test_cluster_queue_quotas_are_the_teams_quotas_in_preference_order(inventory: Inventory) -> None:
    rank = {"reservation": 0, "capacity-block": 1, "on-demand": 2, "flex-start": 3, "spot": 4}
    cluster = inventory.cluster_by_name["gke-gpu-us-east4"]
    pools = {p.name: p for p in cluster.pools}
    for name, cq in of_kind(objects_for_cluster(inventory, cluster.name, DURING_THE_BLOCK), "ClusterQueue").items():
        team = inventory.team_by_name[name]
        [group] = cq["spec"]["resourceGroups"]
        assert group["coveredResources"] == ["nvidia.com/gpu"]
        want = sorted(
            (q for q in team.quotas if q.flavor in pools),
            key=lambda q: (rank[pools[q.flavor].provisioning], list(pools).index(q.flavor)),
        )
        got = [(f["name"], f["resources"][0]) for f in group["flavors"]]
        assert [g[0] for g in got] == [q.flavor for q in want]
        for (_, res), q in zip(got, want, strict=True):
            assert res["nominalQuota"] == q.nominal
            assert res.get("borrowingLimit") == q.borrowing_limit
            assert res.get("lendingLimit") == q.lending_limit
        assert cq["spec"].get("cohortName") == team.cohort


def test_flavors_select_exactly_their_pool(inventory: Inventory) -> None:
    labels = {}
    for cluster in inventory.clusters:
        for name, flavor in of_kind(
            objects_for_cluster(inventory, cluster.name, DURING_THE_BLOCK), "ResourceFlavor"
        ).items():
            labels[name] = flavor["spec"].get("nodeLabels", {})
            if cluster.topology_aware and name != "h100-mega-spot":  # spot scales from 0: a plain flavor
                topologies = of_kind(objects_for_cluster(inventory, cluster.name, DURING_THE_BLOCK), "Topology")
                assert flavor["spec"]["topologyName"] in topologies
    assert labels["h100-mega-resv"] == {"cloud.google.com/gke-nodepool": "h100-mega-resv"}
    assert labels["p5-od"] == {"eks.amazonaws.com/nodegroup": "p5-od"}
    assert labels["ndh100"] == {"kubernetes.azure.com/agentpool": "ndh100"}
    assert labels["dgx-h100-a"] == {"northwind.ai/pool": "dgx-h100-a"}
    # TPU slices are one GKE node pool each (<pool>-<i>), so the TPU labels plus the pool label select them.
    assert labels["v5p-2x2x4"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
        "cloud.google.com/gke-tpu-topology": "2x2x4",
        POOL_LABEL: "v5p-2x2x4",
    }
    assert labels["h100-80gb"] == {}  # the manager's logical flavor has no nodes


def test_accelerator_taints_are_tolerated(inventory: Inventory) -> None:
    objects = objects_for_cluster(inventory, "gke-tpu-us-east5", DURING_THE_BLOCK)
    for flavor in of_kind(objects, "ResourceFlavor").values():
        assert {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"} in flavor["spec"]["tolerations"]


def _levels(inventory: Inventory, cluster: str, pool: str) -> list[str]:
    """The node labels of the Topology that a pool's flavor names."""
    objects = objects_for_cluster(inventory, cluster, DURING_THE_BLOCK)
    name = of_kind(objects, "ResourceFlavor")[pool]["spec"]["topologyName"]
    return [level["nodeLabel"] for level in of_kind(objects, "Topology")[name]["spec"]["levels"]]


def test_topology_levels_are_labels_the_platform_puts_on_the_pools_nodes(inventory: Inventory) -> None:
    """Issue 16: every GKE flavor named block/subblock/host levels, which A3 Mega, A3 High flex-start and TPU nodes do
    not carry; Kueue ignores nodes without a level's label, so TAS admitted nothing there. The expected levels are
    the documented ones (quartermaster/catalog/topology_levels.csv cites each page)."""
    host = ["kubernetes.io/hostname"]
    for pool in ("h100-mega-resv", "h100-flex"):  # GKE documents no topology labels for these
        assert _levels(inventory, "gke-gpu-us-east4", pool) == host
    for pool in ("v5p-2x2x4", "v6e-4x4-resv"):  # a multi-host slice is one node pool: the slice level
        assert _levels(inventory, "gke-tpu-us-east5", pool) == ["cloud.google.com/gke-nodepool", *host]
    gke = (
        make_inventory()
        .edit("clusters", "gke-a", topology_aware=True)
        .pool("ultra", machine="a3-ultragpu-8g", provisioning="reservation", nodes=2)
        .pool("ultra-spot", machine="a3-ultragpu-8g", provisioning="spot", nodes=2)
        .build()
    )
    assert _levels(gke, "gke-a", "ultra") == [  # A3 Ultra reserved capacity: the AI Hypercomputer TAS page
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        *host,
    ]
    assert _levels(gke, "gke-a", "ultra-spot") == host
    eks = (
        make_inventory()
        .site("aws", provider="aws", region="us-east-1", zones=["us-east-1a"])
        .cluster(
            "eks",
            kind="eks",
            site="aws",
            project="1",
            topology_aware=True,
            eks={"node_role_arn": "arn", "subnets": {"us-east-1a": "subnet-1"}},
        )
        .pool("p5", cluster="eks", machine="p5.48xlarge", zones=["us-east-1a"], nodes=1)
        .build()
    )
    assert _levels(eks, "eks", "p5") == [  # EKS labels instance types with EC2 instance topology
        "topology.k8s.aws/network-node-layer-1",
        "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3",
        *host,
    ]


def test_flavors_tolerate_the_taints_the_platform_adds(inventory: Inventory) -> None:
    """Issue 16: GKE taints flex-start nodes `cloud.google.com/gke-queued` and AKS taints Spot nodes
    `kubernetes.azure.com/scalesetpriority=spot`; a flavor without the toleration never lands its pods (TAS checks
    taints against the flavor's tolerations)."""
    flex = of_kind(objects_for_cluster(inventory, "gke-gpu-us-east4", DURING_THE_BLOCK), "ResourceFlavor")["h100-flex"]
    assert {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in flex[
        "spec"
    ]["tolerations"]
    aks = (
        make_inventory()
        .site("az", provider="azure", region="eastus", zones=["1"])
        .cluster("aks", kind="aks", site="az", project="sub", aks={"resource_group": "rg"})
        .pool("spot", cluster="aks", machine="Standard_ND96isr_H100_v5", zones=["1"], nodes=1, provisioning="spot")
        .build()
    )
    spot = of_kind(objects_for_cluster(aks, "aks", DURING_THE_BLOCK), "ResourceFlavor")["spot"]
    assert {
        "key": "kubernetes.azure.com/scalesetpriority",
        "operator": "Equal",
        "value": "spot",
        "effect": "NoSchedule",
    } in spot["spec"]["tolerations"]
    spot_pool = aks_agent_pools(aks, aks.cluster_by_name["aks"])[0]
    assert "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in spot_pool.node_taints
    assert spot_pool.node_labels["kubernetes.azure.com/scalesetpriority"] == "spot"
    regular = objects_for_cluster(inventory, "gke-gpu-us-east4", DURING_THE_BLOCK)
    assert all(
        t["key"] != "cloud.google.com/gke-queued"
        for t in of_kind(regular, "ResourceFlavor")["h100-mega-resv"]["spec"]["tolerations"]
    )


def test_flex_start_pools_get_a_scoped_provisioning_check(inventory: Inventory) -> None:
    objects = objects_for_cluster(inventory, "gke-gpu-us-east4", DURING_THE_BLOCK)
    config = of_kind(objects, "ProvisioningRequestConfig")["h100-flex-flex-start"]["spec"]
    assert config["provisioningClassName"] == "queued-provisioning.gke.io"
    assert config["parameters"] == {"maxRunDurationSeconds": str(168 * 3600)}
    users = {t.name for t in inventory.teams if any(q.flavor == "h100-flex" for q in t.quotas)}
    for name, cq in of_kind(objects, "ClusterQueue").items():
        checks = cq["spec"].get("admissionChecksStrategy", {}).get("admissionChecks", [])
        assert checks == ([{"name": "h100-flex-flex-start", "onFlavors": ["h100-flex"]}] if name in users else [])


def test_multikueue_manager_quota_is_the_sum_of_worker_quotas(inventory: Inventory) -> None:
    manager = inventory.cluster_by_name["mk-manager"]
    objects = objects_for_cluster(inventory, "mk-manager", DURING_THE_BLOCK)
    worker_pools = {p.name: p for w in manager.multikueue_workers for p in inventory.cluster_by_name[w].pools}
    queues = of_kind(objects, "ClusterQueue")
    for team in inventory.teams:
        want: dict[str, int] = {}
        for q in team.quotas:
            if q.flavor in worker_pools:
                accelerator = inventory.machine_by_name[worker_pools[q.flavor].machine].accelerator
                flavor = accelerator_flavor_name(accelerator)
                want[flavor] = want.get(flavor, 0) + q.nominal
        if not want:
            assert team.name not in queues
            continue
        flavors = queues[team.name]["spec"]["resourceGroups"][0]["flavors"]
        assert {f["name"]: f["resources"][0]["nominalQuota"] for f in flavors} == want
        [check] = queues[team.name]["spec"]["admissionChecksStrategy"]["admissionChecks"]
        config = of_kind(objects, "MultiKueueConfig")[check["name"]]["spec"]["clusters"]
        assert config == [
            w
            for w in manager.multikueue_workers
            if any(q.flavor in {p.name for p in inventory.cluster_by_name[w].pools} for q in team.quotas)
        ]
    for worker in manager.multikueue_workers:
        source = of_kind(objects, "MultiKueueCluster")[worker]["spec"]["clusterSource"]["kubeConfig"]
        assert source == {"location": inventory.cluster_by_name[worker].kubeconfig_secret, "locationType": "Secret"}


def test_cohorts_carry_the_tree(inventory: Inventory) -> None:
    cohorts = of_kind(objects_for_cluster(inventory, "onprem-sjc", DURING_THE_BLOCK), "Cohort")
    assert {n: c["spec"].get("parentName") for n, c in cohorts.items()} == {c.name: c.parent for c in inventory.cohorts}
    assert cohorts["research"]["spec"]["fairSharing"] == {"weight": 2}


def test_v1beta1_renames(inventory: Inventory) -> None:
    objects = objects_for_cluster(with_version(inventory, "v1beta1"), "mk-manager", DURING_THE_BLOCK)
    for cq in of_kind(objects, "ClusterQueue").values():
        assert "cohortName" not in cq["spec"] and "cohort" in cq["spec"]
    for mk in of_kind(objects, "MultiKueueCluster").values():
        assert "kubeConfig" in mk["spec"] and "clusterSource" not in mk["spec"]


def test_local_queues_and_namespaces_per_team_namespace(inventory: Inventory) -> None:
    objects = objects_for_cluster(inventory, "gke-gpu-us-east4", DURING_THE_BLOCK)
    queues = of_kind(objects, "LocalQueue")
    namespaces = of_kind(objects, "Namespace")
    team = inventory.team_by_name["llm-pretrain"]
    for ns in team.namespaces:
        assert queues[f"{ns}/default"]["spec"]["clusterQueue"] == team.name
        assert queues[f"{ns}/{team.name}"]["spec"]["clusterQueue"] == team.name
        assert namespaces[ns]["metadata"]["labels"] == {
            "quartermaster.dev/team": team.name,
            "quartermaster.dev/cost-center": team.cost_center,
        }


def test_no_team_can_write_cluster_queues_cohorts_or_flavors(inventory: Inventory) -> None:
    for cluster in inventory.clusters:
        objects = objects_for_cluster(inventory, cluster.name, DURING_THE_BLOCK)
        assert not [o for o in objects if o["kind"] in ("ClusterRole", "ClusterRoleBinding")]
        team_of_namespace = {ns: t for t in inventory.teams for ns in t.namespaces}
        for binding in of_kind(objects, "RoleBinding").values():
            team = team_of_namespace[binding["metadata"]["namespace"]]
            # the platform's own name for the group (GKE: a Google Group e-mail; AKS: an Entra object id)
            name = team.groups.get(cluster.kind) or team.group or team.name
            assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}]
        for role in of_kind(objects, "Role").values():
            for rule in role["rules"]:
                if "kueue.x-k8s.io" in rule["apiGroups"]:
                    assert set(rule["verbs"]) <= {"get", "list", "watch"}
                    assert set(rule["resources"]) <= {"localqueues", "workloads"}


def test_render_is_byte_identical_and_matches_the_golden_files(
    inventory: Inventory, golden: Callable[[Path, str], None]
) -> None:
    for cluster in inventory.clusters:
        text = render_cluster(inventory, cluster.name, DURING_THE_BLOCK)
        assert text == render_cluster(load(INVENTORY).inventory, cluster.name, DURING_THE_BLOCK)
        golden(GOLDEN / f"{cluster.name}.yaml", text)


def test_qm_render_out_writes_one_file_per_cluster(tmp_path: Path, inventory: Inventory) -> None:
    result = CliRunner().invoke(app, ["render", str(INVENTORY), "--out", str(tmp_path / "out"), "--at", "2026-11-15"])
    assert result.exit_code == 0, result.output
    for cluster in inventory.clusters:
        assert (tmp_path / "out" / f"{cluster.name}.yaml").read_text() == render_cluster(
            inventory, cluster.name, DURING_THE_BLOCK
        )


def test_qm_render_one_cluster_to_stdout(inventory: Inventory) -> None:
    result = CliRunner().invoke(app, ["render", str(INVENTORY), "--cluster", "aks-eastus", "--at", "2026-11-15"])
    assert result.exit_code == 0
    assert result.stdout == render_cluster(inventory, "aks-eastus", DURING_THE_BLOCK)


def test_qm_render_unknown_cluster_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["render", str(INVENTORY), "--cluster", "aks-eastu"])
    assert result.exit_code == 2
    assert "no such cluster `aks-eastu`" in result.output and "Did you mean `aks-eastus`?" in result.output


def test_quota_never_exceeds_what_the_inventory_allows(inventory: Inventory) -> None:
    """Rendered nominal quotas per flavor add up to the inventory's, which the loader keeps within capacity."""
    for cluster in inventory.clusters:
        queues = of_kind(objects_for_cluster(inventory, cluster.name, DURING_THE_BLOCK), "ClusterQueue").values()
        for pool in cluster.pools:
            total = sum(
                f["resources"][0]["nominalQuota"]
                for cq in queues
                for g in cq["spec"]["resourceGroups"]
                for f in g["flavors"]
                if f["name"] == pool.name
            )
            assert total == sum(q.nominal for t in inventory.teams for q in t.quotas if q.flavor == pool.name)
            assert total <= pool_accelerators(inventory, pool)


@pytest.mark.parametrize(
    "text", ["0800", "08", "y", "n", "N", "1e3", "0o17", "0x1F", "1_000", "yes", "on", "~", ".inf", "-.5", "12:30"]
)
def test_strings_that_a_yaml_reader_could_take_for_numbers_or_booleans_stay_strings(text: str) -> None:
    """Issue 16: `cost_center: "0800"` rendered as the label `0800`, which kubectl reads as a number and refuses.
    Every string comes back as the same string through a YAML 1.2 parser (ruamel.yaml) and a 1.1 one (PyYAML)."""
    from ruamel.yaml import YAML

    rendered = dump_documents([{"metadata": {"labels": {"quartermaster.dev/cost-center": text}}}])
    assert YAML(typ="safe").load(rendered)["metadata"]["labels"]["quartermaster.dev/cost-center"] == text
    assert yaml.safe_load(rendered)["metadata"]["labels"]["quartermaster.dev/cost-center"] == text


@pytest.mark.parametrize(
    "value, gib, want",
    [
        (64, False, 64),  # already canonical: stays a number
        (1000, False, "1k"),  # the webhook's re-marshalled form of 1000
        (1500, False, 1500),  # 1.5k is not whole, so no suffix
        (2_000_000, False, "2M"),
        (0.75, False, "750m"),
        (0, False, 0),
        (1024, True, "1Ti"),  # 1024 GiB = 1 TiB
        (1536, True, "1536Gi"),  # 1.5 TiB is not whole
        (0, True, 0),
    ],
)
def test_quantities_are_written_in_the_api_servers_canonical_form(value: float, gib: bool, want: object) -> None:
    """Issue 16: quotas that Kueue's webhook re-marshals (1000 -> 1k) gave Terraform an inconsistent result after
    apply. Each expectation is apimachinery's rule: the largest suffix that keeps the number whole."""
    assert canonical_quantity(value, gib=gib) == want
    assert parse_quantity(want) == (Decimal(value) * 2**30 if gib else Decimal(str(value)))  # the same amount
