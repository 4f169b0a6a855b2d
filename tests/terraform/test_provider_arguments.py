"""Every argument the stacks emit exists in the lowest version each provider pin allows (issue 16: google-beta
`~> 7.30` let 7.30-7.33 fail on `gpudirect_strategy`, which v7.30's `node_config.go` does not declare; the pin is
now `~> 7.34`). The names per type come from the providers' source at the floor tags
(`tests/data/terraform/provider_arguments.json`, written by `tests/terraform/provider_arguments.py`)."""

from __future__ import annotations

import importlib
import inspect
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from quartermaster.modules.terraform import provider_pins
from tests.paths import DATA
from tests.terraform.conftest import BRANCH_POOLS

FLOORS = json.loads((DATA / "terraform" / "provider_arguments.json").read_text())
META = {"//", "depends_on", "lifecycle", "provider", "count", "for_each"}  # Terraform's, not the provider's
FREE_FORM = {"labels", "node_labels", "tags", "dimensions", "manifest", "resource_labels"}  # user keys: not arguments
PREFIX = {"google_": "google-beta", "azurerm_": "azurerm", "kubernetes_": "kubernetes", "aws_": "aws"}


def _keys(body: Any, path: str = "") -> Iterator[str]:
    """Every argument name in a body, nested blocks included, as `path.name`."""
    items = body if isinstance(body, list) else [body]
    for item in items:
        if not isinstance(item, dict):
            continue
        for key, value in item.items():
            if key in META:
                continue
            yield f"{path}{key}"
            if key not in FREE_FORM:
                yield from _keys(value, f"{path}{key}.")


AWS_MODULES = {  # Terraform type -> the Pulumi AWS SDK modules declaring its arguments and nested blocks
    "provider": ("provider",),
    "aws_eks_node_group": ("eks.node_group", "eks._inputs"),
    "aws_launch_template": ("ec2.launch_template", "ec2._inputs"),
    "aws_placement_group": ("ec2.placement_group",),
    "aws_ec2_capacity_reservation": ("ec2.capacity_reservation",),
    "aws_servicequotas_service_quota": ("servicequotas.service_quota",),
    "data.aws_servicequotas_service_quota": ("servicequotas.get_service_quota",),
    "aws_autoscaling_schedule": ("autoscaling.schedule",),
}


def _aws_names(kind: str) -> set[str]:
    """Argument names of `kind` in the installed Pulumi AWS SDK (built from hashicorp/aws 6.x), singular forms
    included (the SDK calls the block `taint` `taints`)."""
    names: set[str] = set()
    for module in (importlib.import_module(f"pulumi_aws.{m}") for m in AWS_MODULES[kind]):
        for name, member in vars(module).items():
            if (name.endswith("Args") and inspect.isclass(member)) or name.startswith("get_"):
                target = member.__init__ if inspect.isclass(member) else member
                names |= {p for p in inspect.signature(target).parameters if p not in ("self", "__self__", "opts")}
    return names | {n[:-1] for n in names if n.endswith("s")}


def _allowed(provider: str, kind: str) -> set[str]:
    if provider == "aws":
        return _aws_names(kind)
    return set(FLOORS[provider]["types"][kind])


def test_the_pins_floors_are_the_versions_the_names_were_read_at() -> None:
    for provider, floor in FLOORS.items():
        assert provider_pins()[provider].version == "~> " + re.sub(r"^v(\d+\.\d+)\.0$", r"\1", floor["tag"])


EXAMPLE = ["gke-gpu-us-east4", "gke-tpu-us-east5", "eks-us-east-1", "aks-eastus", "mk-manager"]


@pytest.mark.node
@pytest.mark.parametrize(
    ("stack_set", "cluster"), [("example", c) for c in EXAMPLE] + [("every-branch", c) for c in BRANCH_POOLS]
)
def test_every_emitted_argument_exists_in_the_floor_version(
    request: pytest.FixtureRequest, stack_set: str, cluster: str
) -> None:
    """The example's stacks, and the stacks with the pools the example lacks (GPUDirect RDMA, an ODCR the stack
    creates, AKS Spot), so that every argument an emitter can write is checked."""
    stack = request.getfixturevalue("stacks" if stack_set == "example" else "every_branch_stacks")[cluster]
    unknown = []
    for name, blocks in stack.get("provider", {}).items():
        allowed = _allowed(name, "provider")
        unknown += [f"provider {name}: {k}" for k in _keys(blocks) if k.rsplit(".", 1)[-1] not in allowed]
    for section, prefix in (("resource", ""), ("data", "data.")):
        for kind, bodies in stack.get(section, {}).items():
            provider = next((p for start, p in PREFIX.items() if kind.startswith(start)), None)
            if provider is None:  # Terraform's own terraform_data
                continue
            allowed = _allowed(provider, prefix + kind)
            for body in bodies.values():
                unknown += [f"{prefix}{kind}: {k}" for k in _keys(body) if k.rsplit(".", 1)[-1] not in allowed]
    assert sorted(set(unknown)) == []


@pytest.mark.node
def test_the_branches_the_example_lacks_are_emitted(every_branch_stacks: dict[str, Any]) -> None:
    """The arguments the every-branch stacks exist for are really in them, so the floor test reads them."""
    pools = every_branch_stacks["gke-gpu-us-east4"]["resource"]["google_container_node_pool"]
    assert [pools[n]["node_config"]["gpudirect_strategy"] for n in ("ultra", "a4")] == ["RDMA", "RDMA"]
    assert "aws_ec2_capacity_reservation" in every_branch_stacks["eks-us-east-1"]["resource"]
    [spot] = [
        b
        for b in every_branch_stacks["aks-eastus"]["resource"]["azurerm_kubernetes_cluster_node_pool"].values()
        if b.get("priority") == "Spot"
    ]
    assert spot["node_labels"]["kubernetes.azure.com/scalesetpriority"] == "spot"
