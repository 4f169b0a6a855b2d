"""Constrained name and unit types shared by the inventory model.

Names are Kubernetes-safe because most of them become object names: pools become ResourceFlavors and
node pools, teams become ClusterQueues, namespaces and RBAC subjects (see docs/reference/kueue-rules.md 1.1).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, StringConstraints

from quartermaster.units import QUARTER_PATTERN as QUARTER_PATTERN
from quartermaster.units import Quarter as Quarter

DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS_LABEL_RE = re.compile(DNS_LABEL_PATTERN)
DNS_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"

# A DNS-1123 label: lower-case alphanumerics and '-', at most 63 characters. LocalQueue and
# WorkloadPriorityClass names must fit a label value, so 63 is also the practical Kueue limit.
K8sName = Annotated[str, StringConstraints(pattern=DNS_LABEL_PATTERN, max_length=63)]
SiteName = K8sName
ClusterName = K8sName
TeamName = K8sName
CohortName = K8sName
PriorityClassName = K8sName
CommitmentName = K8sName
NamespaceName = K8sName
# GKE limits node pool names to 40 characters; a pool name is also its ResourceFlavor's name.
PoolName = Annotated[str, StringConstraints(pattern=DNS_LABEL_PATTERN, max_length=40)]
# Provider machine types keep their own spelling (Standard_ND96isr_H100_v5, p5.48xlarge).
MachineType = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=64)]
# Canonical accelerator name from the catalog registry, e.g. H100-80GB, TPU-v5p.
AcceleratorType = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=32)]
RegionName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=32)]
ZoneName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=40)]
# Who approves: a GitHub user (@ + alphanumerics and single inner hyphens, at most 39: GitHub's username rule), a
# team (@org/team-slug) or an e-mail address, as CODEOWNERS accepts them (docs.github.com "About code owners",
# read 2026-11-23). Nothing else can reach CODEOWNERS or the PR comment ("@e\n* @attacker").
EMAIL_PATTERN = r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,63}"
OWNER_PATTERN = rf"^(@[A-Za-z0-9](?:-?[A-Za-z0-9]){{0,38}}(?:/[A-Za-z0-9][A-Za-z0-9_-]{{0,99}})?|{EMAIL_PATTERN})$"
Owner = Annotated[str, StringConstraints(pattern=OWNER_PATTERN, max_length=254)]
Email = Annotated[str, StringConstraints(pattern=f"^{EMAIL_PATTERN}$", max_length=254)]
COST_CENTER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"
CostCenter = Annotated[str, StringConstraints(pattern=COST_CENTER_PATTERN, max_length=32)]
# A Kubernetes label key: optional DNS prefix and '/', then a name of at most 63 characters.
LabelKey = Annotated[
    str,
    StringConstraints(
        pattern=r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$", max_length=316
    ),
]
LabelValue = Annotated[str, StringConstraints(pattern=r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$", max_length=63)]

# Upper bounds that catch absurd numbers (a typo of a few extra zeros) without limiting real fleets.
MAX_NODES = 100_000
MAX_ACCELERATORS = 1_000_000
MAX_USD_PER_NODE_HOUR = 10_000


def refuse_bool(value: object) -> object:
    """A count or amount must be a number: YAML reads `yes`, `on` and `true` as booleans, which pydantic would
    take as 1 (`nominal: yes` became a quota of 1)."""
    if isinstance(value, bool):
        raise ValueError("a number is needed, not yes/no or true/false; write the number")
    return value


NotBool = BeforeValidator(refuse_bool)
NodeCount = Annotated[int, NotBool, Field(ge=0, le=MAX_NODES)]
AcceleratorCount = Annotated[int, NotBool, Field(ge=0, le=MAX_ACCELERATORS)]

# A site's or machine's `provider` and a cluster's `kind`: the registered providers' (the types that validate an
# inventory narrow them to those: `quartermaster.providers.inventory_types`).
CloudName = str
ClusterKind = str
CommitmentKind = Literal["cud", "reserved-instance", "savings-plan", "capacity-block", "on-prem-purchase"]
KueueApiVersion = Literal["v1beta2", "v1beta1"]
MultiKueueRole = Literal["manager", "worker", "none"]
AcceleratorKind = Literal["gpu", "tpu"]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]

# Set on every node of a pool whose provider label cannot name the pool (GKE TPU slices are one node pool each,
# named `<pool>-<i>`): the node-pool modules put it on the nodes and the pool's ResourceFlavor selects it.
POOL_LABEL = "quartermaster.dev/pool"


class PricingModel(StrEnum):
    """How a node-hour is bought: a price-book row's `pricing_model`."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    FLEX_START = "flex-start"
    CAPACITY_BLOCK = "capacity-block"
    COMMIT = "commit"
    """A committed-use discount, reserved instance or savings plan with a term."""
    ONPREM = "onprem"
    """Owned hardware: capex amortised over its life plus opex, per node-hour."""


class Provisioning(StrEnum):
    """How a pool gets its nodes: a pool's `provisioning`."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVATION = "reservation"
    FLEX_START = "flex-start"
    CAPACITY_BLOCK = "capacity-block"
