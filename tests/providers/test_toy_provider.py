"""A provider added in the tests alone: "Toy", a made-up cloud, one package (`tests/providers/toy/`: its core facts
and its emitters, as docs/explanation/providers.md says) registered by its object, then loaded, rendered to Kueue
objects, synthesised to a Terraform stack by CDKTF, declared through Pulumi and planned, with no change to
Quartermaster's code."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from quartermaster.loader import load
from quartermaster.modules.cloud import cluster_spec
from quartermaster.modules.kueue import objects_for_cluster, validate_manifests
from quartermaster.modules.terraform import stack_clusters, stack_spec
from quartermaster.providers import BUILT_IN, discover, provider_of, register, unregister
from quartermaster.schema import schema_dict
from tests.builders import BEFORE_THE_BLOCK, DURING_THE_BLOCK, InventoryBuilder, make_inventory
from tests.paths import REPO
from tests.providers.toy import PROVIDER as TOY
from tests.providers.toy import ToyCluster, ToySettings


@pytest.fixture(autouse=True)
def toy_registered() -> Iterator[None]:
    """The toy provider exists for the test only: registering its object is all it takes."""
    register(TOY)
    yield
    unregister("toy")


MACHINE = "toy-l4x1"


def toy_inventory() -> InventoryBuilder:
    """The base inventory plus a toy site, a toy machine (one L4), a toy cluster with one pool of 4 nodes and a team
    with 2 GPUs in it."""
    return (
        make_inventory()
        .site("toy-west", provider="toycloud", region="west")
        .add(
            "machines",
            name=MACHINE,
            provider="toycloud",
            accelerator="L4",
            kind="gpu",
            accelerators_per_node=1,
            accelerator_label="l4",
            accelerator_memory_gb=24,
            source="tests/test_toy_provider.py",
        )
        .cluster("toy-a", kind="toy", site="toy-west", project="acct-1", toy={"account": "acct-1"})
        .pool("l4", cluster="toy-a", machine=MACHINE, zones=["west-1"], nodes=4)
        .team("vision", quotas={"l4": 2})
    )


def with_prices(b: InventoryBuilder) -> InventoryBuilder:
    """The toy machine's on-demand and 1-year commitment prices at the toy site."""
    for model, term, usd in (("on-demand", 0, "1.00"), ("commit", 12, "0.60")):
        b.add(
            "prices",
            machine=MACHINE,
            site="toy-west",
            pricing_model=model,
            term_months=term,
            usd_per_node_hour=usd,
            source="test",
        )
    return b


def test_the_toy_inventory_loads_with_its_own_settings_and_checks(tmp_path: Path) -> None:
    result = load(toy_inventory().write(tmp_path / "inv"))
    assert result.ok, [i.format() for i in result.issues]
    cluster = result.inventory.cluster_by_name["toy-a"]
    assert isinstance(cluster, ToyCluster) and cluster.toy == ToySettings(account="acct-1")
    # the provider's own check and its offered modes reach the loader
    broken = load(
        toy_inventory()
        .edit("clusters", "toy-a", toy=None)
        .edit_pool("l4", provisioning="flex-start")
        .write(tmp_path / "b")
    )
    messages = [i.format() for i in broken.issues]
    assert any("a toy cluster needs `toy: {account}`" in m for m in messages), messages
    assert any("flex-start (DWS) is a GKE provisioning mode" in m and "(got 'toy')" in m for m in messages), messages
    # the JSON Schema offers the kind and its settings
    kinds = schema_dict()["$defs"]["ToyCluster"]["properties"]["kind"]
    assert kinds["const"] == "toy"


def test_the_toy_cluster_renders_kueue_objects_selecting_its_pool() -> None:
    inventory = toy_inventory().build()
    objects = objects_for_cluster(inventory, "toy-a", DURING_THE_BLOCK)
    [flavor] = [o for o in objects if o["kind"] == "ResourceFlavor"]
    assert flavor["spec"]["nodeLabels"] == {"toy.example/pool": "l4"}
    [queue] = [o for o in objects if o["kind"] == "ClusterQueue"]
    assert queue["metadata"]["name"] == "vision"
    assert validate_manifests(objects) == []


@pytest.mark.node  # CDKTF synthesises through jsii, which runs Node.js
def test_the_toy_cluster_synthesises_a_terraform_stack(tmp_path: Path) -> None:
    from quartermaster.modules.terraform.app import synth

    inventory = toy_inventory().build()
    assert "toy-a" in stack_clusters(inventory)
    [path] = synth(inventory, ["toy-a"], tmp_path / "out", BEFORE_THE_BLOCK)
    stack = json.loads(path.read_text())
    assert stack["terraform"]["required_providers"]["toycloud"] == {"source": "example/toycloud", "version": "~> 1.0"}
    assert stack["provider"]["toycloud"] == [{"region": "west"}]
    pool = stack["resource"]["toycloud_node_pool"]["l4"]
    assert {k: pool[k] for k in ("account", "machine_type", "size")} == {
        "account": "acct-1",
        "machine_type": MACHINE,
        "size": 4,
    }
    # the Kueue objects wait for the toy pool, as they wait for any provider's pools
    assert stack["resource"]["terraform_data"]["node_pools"]["depends_on"] == ["toycloud_node_pool.l4"]


def test_the_toy_cluster_is_declared_through_pulumi() -> None:
    from quartermaster.modules.pulumi.cluster import ClusterCapacity
    from tests.pulumi.harness import run_program

    spec = cluster_spec(toy_inventory().build(), "toy-a", BEFORE_THE_BLOCK)
    registered = run_program("toy-a", {}, lambda: ClusterCapacity("toy-a", spec))
    [pool] = registered.of_type("quartermaster:toy:Pool")
    assert pool.name == "l4"


def test_a_plan_buys_toy_capacity_and_the_forecast_names_the_toy_cloud() -> None:
    from quartermaster.planner import PlanOptions, plan
    from quartermaster.reports.focus import plan_focus_rows
    from tests.planner.planning import EXACT, curves

    inventory = with_prices(toy_inventory()).build()
    # a steady 2 L4s at the toy site every hour of 2027Q1, the 2 vision holds quota for (toy_inventory; the plan
    # serves a team only within its quota): a 1-year commitment (0.60 < 1.00 on demand) covers both
    demand = curves("vision", ["2027Q1"], level=2.0, accelerator="L4", site="toy-west")
    result = plan(inventory, PlanOptions(start="2027Q1", horizon=1, **EXACT), demand_curves=demand)
    bought = result.frame("purchase_schedule")
    assert list(
        bought[["site", "machine", "pricing_model", "term_months", "nodes"]].itertuples(index=False, name=None)
    ) == [("toy-west", MACHINE, "commit", 12, 2)]
    rows = plan_focus_rows(inventory, result, "2027Q1")
    assert {r["x_PlannedProvider"] for r in rows if r["x_PlannedProvider"] != "Multiple providers"} == {"Toy Cloud"}
    assert provider_of("toy").focus_provider_name == "Toy Cloud"


def test_a_provider_is_found_by_its_folder() -> None:
    # the toy's folder, under `tests/providers/`, is found as the built-in ones are under `quartermaster/providers/`:
    # each folder's `PROVIDER`, in their `order` (GKE 10, EKS 20, AKS 30, on-prem 40: the order messages list them in)
    assert discover("tests.providers") == (TOY,)
    assert [p.kind for p in BUILT_IN] == ["gke", "eks", "aks", "onprem"]
    folders = sorted(p.parent.name for p in (REPO / "quartermaster" / "providers").glob("*/__init__.py"))
    assert sorted(p.kind for p in BUILT_IN) == folders


def test_a_provider_folder_without_its_objects_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a package whose provider object is missing, and an emitter module whose object is of another type: the
    # error names the module and the name it looks for, instead of an AttributeError deep in a stack
    (tmp_path / "cloudless" / "nameless").mkdir(parents=True)
    (tmp_path / "cloudless" / "__init__.py").write_text("")
    (tmp_path / "cloudless" / "nameless" / "__init__.py").write_text("TOY = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match=r"cloudless\.nameless: a provider's package names its `Provider` object"):
        discover("cloudless")
    from tests.providers.toy import terraform_resources

    monkeypatch.setattr(terraform_resources, "RESOURCES", terraform_resources.terraform)
    with pytest.raises(
        TypeError, match=r"toy\.terraform_resources\.RESOURCES must be a TerraformResources \(got function\)"
    ):
        stack_spec(cluster_spec(toy_inventory().build(), "toy-a", BEFORE_THE_BLOCK), [])


def test_without_its_registration_the_kind_is_refused_again() -> None:
    unregister("toy")
    try:
        with pytest.raises(ValidationError, match="expected tags: 'gke', 'eks', 'aks', 'onprem'"):
            toy_inventory().build()
    finally:  # the fixture unregisters it again
        register(TOY)
