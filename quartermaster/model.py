"""The typed inventory model: one class per concept of the inventory (docs/inventory-reference.md).

Every field's docstring starts with its YAML key, then gives meaning, unit and default; pydantic's
`use_attribute_docstrings` carries the text into the JSON Schema (`qm schema`) and the reference page.
Models are strict (unknown keys rejected) and frozen; derive variants with `model_copy(update=...)`.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Mapping
from decimal import Decimal
from functools import cache, cached_property
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from quartermaster.catalog import machine_rows
from quartermaster.names import (
    MAX_ACCELERATORS,
    MAX_USD_PER_NODE_HOUR,
    AcceleratorCount,
    AcceleratorKind,
    AcceleratorType,
    CloudName,
    ClusterKind,
    ClusterName,
    CohortName,
    CommitmentKind,
    CommitmentName,
    CostCenter,
    Email,
    K8sName,
    KueueApiVersion,
    LabelKey,
    LabelValue,
    MachineType,
    MultiKueueRole,
    NamespaceName,
    NodeCount,
    NotBool,
    Owner,
    PoolName,
    PricingModel,
    PriorityClassName,
    Provisioning,
    Quarter,
    RegionName,
    SiteName,
    TaintEffect,
    TeamName,
    ZoneName,
)
from quartermaster.units import FIRST_DAY, LAST_DAY, add_months, utc_hour

Usd = Annotated[Decimal, NotBool, Field(ge=0, le=Decimal(10) ** 12, decimal_places=6)]
UsdPerNodeHour = Annotated[Decimal, NotBool, Field(ge=0, le=MAX_USD_PER_NODE_HOUR, decimal_places=6)]
Share = Annotated[float, NotBool, Field(ge=0, le=1)]


CalendarDay = Annotated[dt.date, Field(ge=FIRST_DAY, le=LAST_DAY)]
UsageHour = Annotated[
    dt.datetime,
    AfterValidator(utc_hour),
    Field(ge=dt.datetime.combine(FIRST_DAY, dt.time()), le=dt.datetime.combine(LAST_DAY, dt.time())),
]


class Strict(BaseModel):
    """Base of every inventory object: unknown keys are errors, objects are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, use_enum_values=True)


# --- catalog ---------------------------------------------------------------------------------------


class Machine(Strict):
    """A provider machine type and the accelerators it carries (a catalog entry)."""

    name: MachineType
    """name: the provider's machine type, e.g. `a3-megagpu-8g`, `p5.48xlarge`, `dgx-h100`."""
    provider: CloudName
    """provider: where the machine type exists: `gcp`, `aws`, `azure` or `onprem`."""
    accelerator: AcceleratorType
    """accelerator: canonical accelerator name from the registry, e.g. `H100-80GB`, `TPU-v5p`."""
    kind: AcceleratorKind
    """kind: `gpu` or `tpu`; decides the Kubernetes resource (`nvidia.com/gpu` or `google.com/tpu`)."""
    accelerators_per_node: Annotated[int, Field(ge=1, le=64)]
    """accelerators_per_node: GPUs, or TPU chips, on one node (VM or server)."""
    accelerator_label: str
    """accelerator_label: the provider's accelerator label value, e.g. GKE `nvidia-h100-mega-80gb`."""
    accelerator_memory_gb: Annotated[int, Field(ge=0, le=4096)]
    """accelerator_memory_gb: memory of one accelerator, in GB."""
    vcpus: Annotated[int, Field(ge=0, le=4096)] = 0
    """vcpus: vCPUs of one node; 0 = unknown."""
    memory_gb: Annotated[int, Field(ge=0, le=65536)] = 0
    """memory_gb: host memory of one node in GB; 0 = unknown."""
    tpu_topologies: tuple[str, ...] = ()
    """tpu_topologies: valid slice topologies for a TPU machine, e.g. `[2x2x1, 2x2x2]`; empty for GPUs."""
    source: str
    """source: where the facts come from (URL or repository path) and when they were read."""

    @property
    def resource_name(self) -> str:
        """The Kubernetes extended resource the accelerator is requested as."""
        return "google.com/tpu" if self.kind == "tpu" else "nvidia.com/gpu"


# --- sites and clusters ----------------------------------------------------------------------------


@cache
def catalog_machines() -> tuple[Machine, ...]:
    """The machines the catalog ships (`quartermaster/catalog/machines.csv`)."""
    return tuple(Machine(**row) for row in machine_rows())


class SupplyCap(Strict):
    """The most capacity of one machine and pricing model that can be had at a site."""

    machine: MachineType
    """machine: the machine type the cap applies to."""
    pricing_model: PricingModel
    """pricing_model: `on-demand`, `spot`, `flex-start`, `capacity-block`, `commit` or `onprem`."""
    max_nodes: NodeCount
    """max_nodes: the most nodes obtainable at any time, in nodes."""


class Site(Strict):
    """A provider region or an on-prem data centre."""

    name: SiteName
    """name: stable site name, e.g. `gcp-us-central1`."""
    provider: CloudName
    """provider: `gcp`, `aws`, `azure` or `onprem`."""
    region: RegionName
    """region: the provider's region (`us-central1`, `us-east-1`, `eastus`) or a data-centre code (`sjc`)."""
    zones: tuple[ZoneName, ...] = ()
    """zones: zones of the region that pools may use; empty = any zone (not recommended)."""
    supply_caps: tuple[SupplyCap, ...] = ()
    """supply_caps: limits on obtainable capacity per machine and pricing model; empty = no limit known."""


class ObservabilitySettings(Strict):
    """Alert rules and a Grafana dashboard for the cluster's own monitoring, emitted with its Kubernetes objects."""

    enabled: bool = False
    """enabled: emit a PrometheusRule (prometheus-operator) and a Grafana dashboard ConfigMap (sidecar label
    `grafana_dashboard: "1"`) with the cluster's Kueue objects, for the cluster's own Prometheus; default false."""
    namespace: K8sName = "monitoring"
    """namespace: existing namespace of the PrometheusRule and the ConfigMap, one that prometheus-operator's rule
    selector and the Grafana sidecar watch; default `monitoring`."""
    rule_labels: dict[LabelKey, LabelValue] = {}
    """rule_labels: labels on the PrometheusRule for prometheus-operator's `ruleSelector` (kube-prometheus-stack
    loads only rules labelled `release: <its Helm release>`), e.g. `{release: kube-prometheus-stack}`; default
    none."""


class Cluster(Strict):
    """A Kubernetes cluster at a site, its Kueue settings and its accelerator node pools. Each provider's cluster
    model (`quartermaster.providers`) adds its own settings and fixes `kind`, which tells the models apart."""

    name: ClusterName
    """name: stable cluster name; also the Pulumi stack and the rendered file name."""
    kind: ClusterKind
    """kind: the cluster's provider: `gke`, `eks`, `aks` or `onprem` (on-prem pools live in the inventory only)."""
    site: SiteName
    """site: the site the cluster runs in."""
    project: str | None = None
    """project: GCP project id, AWS account id or Azure subscription id; null for on-prem."""
    kueue_api_version: KueueApiVersion = "v1beta2"
    """kueue_api_version: Kueue API version to emit, `v1beta2` (default) or `v1beta1` for older Kueue."""
    multikueue_role: MultiKueueRole = "none"
    """multikueue_role: `manager`, `worker` or `none` (default)."""
    multikueue_workers: tuple[ClusterName, ...] = ()
    """multikueue_workers: for a manager, the worker clusters it dispatches to, in order."""
    topology_aware: bool = False
    """topology_aware: emit a Kueue Topology and attach it to this cluster's flavors (TAS)."""
    kubeconfig_secret: str | None = None
    """kubeconfig_secret: for a MultiKueue worker, the Secret in the manager's kueue-system holding its kubeconfig."""
    observability: ObservabilitySettings = ObservabilitySettings()
    """observability: alert rules and dashboard emitted with the cluster's objects (`enabled`, `namespace`); default
    off."""
    pools: tuple[Pool, ...] = ()
    """pools: the cluster's accelerator node pools; each pool is one Kueue ResourceFlavor."""


class Autoscaling(Strict):
    """Autoscaling bounds of a pool, in nodes over all its zones."""

    min_nodes: NodeCount = 0
    """min_nodes: fewest nodes; default 0."""
    max_nodes: NodeCount
    """max_nodes: most nodes; the pool's capacity for quotas and planning."""

    @model_validator(mode="after")
    def _min_below_max(self) -> Autoscaling:
        if self.min_nodes > self.max_nodes:
            raise ValueError(
                f"min_nodes ({self.min_nodes}) is above max_nodes ({self.max_nodes}); swap them or raise max_nodes"
            )
        return self


class TpuSlices(Strict):
    """A TPU pool's slice shape: every slice is one node pool of `nodes per slice` hosts."""

    topology: Annotated[str, Field(pattern=r"^[0-9]+x[0-9]+(x[0-9]+)?$")]
    """topology: slice topology in chips, e.g. `2x2x4` (v5p) or `4x4` (v6e)."""
    slices: Annotated[int, Field(ge=1, le=1024)] = 1
    """slices: number of identical slices; default 1."""

    @property
    def chips_per_slice(self) -> int:
        """Product of the topology's dimensions."""
        product = 1
        for dim in self.topology.split("x"):
            product *= int(dim)
        return product


class Taint(Strict):
    """A node taint."""

    key: LabelKey
    """key: taint key, e.g. `nvidia.com/gpu`."""
    value: LabelValue = ""
    """value: taint value; default empty."""
    effect: TaintEffect = "NoSchedule"
    """effect: `NoSchedule` (default), `PreferNoSchedule` or `NoExecute`."""


class Pool(Strict):
    """A node pool in a cluster; one Kueue ResourceFlavor."""

    name: PoolName
    """name: pool name, at most 40 characters (GKE's limit); also the ResourceFlavor name."""
    machine: MachineType
    """machine: machine type from the catalog, e.g. `a3-megagpu-8g`."""
    zones: tuple[ZoneName, ...]
    """zones: zones the pool's nodes run in; TPU slices, capacity blocks and EFA pools take exactly one."""
    nodes: NodeCount | None = None
    """nodes: fixed size in nodes; for TPU pools, if given, must equal slices x nodes per slice."""
    autoscaling: Autoscaling | None = None
    """autoscaling: min/max nodes instead of a fixed size; null = fixed size."""
    tpu: TpuSlices | None = None
    """tpu: slice topology and count for TPU machines; required for TPU pools, absent for GPU pools."""
    provisioning: Provisioning = Field(default=Provisioning.ON_DEMAND, validate_default=True)
    """provisioning: `on-demand` (default), `spot`, `reservation`, `flex-start` or `capacity-block`."""
    commitment: CommitmentName | None = None
    """commitment: the commitment (reservation, capacity block, on-prem purchase) the pool consumes."""
    max_run_duration_hours: Annotated[int, Field(ge=1, le=24 * 7)] | None = None
    """max_run_duration_hours: flex-start only: longest a node lives, in hours (at most 7 days)."""
    gpudirect: bool = False
    """gpudirect: attach the machine's GPUDirect networking (TCPX/TCPXO/RDMA on GKE, EFA on EKS)."""
    labels: dict[LabelKey, LabelValue] = {}
    """labels: extra node labels; on-prem pools must set the labels that select their nodes."""
    taints: tuple[Taint, ...] = ()
    """taints: extra taints; the accelerator taint (`nvidia.com/gpu`, `google.com/tpu`) is always added."""

    @model_validator(mode="after")
    def _one_size(self) -> Pool:
        if self.tpu is None and self.nodes is None and self.autoscaling is None:
            raise ValueError("a pool needs a size: set `nodes` (fixed) or `autoscaling: {max_nodes: N}`")
        if self.nodes is not None and self.autoscaling is not None:
            raise ValueError("`nodes` and `autoscaling` exclude each other; keep one of them")
        return self


# --- buying capacity -------------------------------------------------------------------------------


class Commitment(Strict):
    """Capacity bought ahead: a committed-use discount, reserved instances, savings plan,
    capacity block or on-prem purchase."""

    name: CommitmentName
    """name: stable commitment name."""
    kind: CommitmentKind
    """kind: `cud`, `reserved-instance`, `savings-plan`, `capacity-block` or `on-prem-purchase`."""
    machine: MachineType
    """machine: the machine type committed to."""
    site: SiteName
    """site: where the capacity is."""
    count: Annotated[int, Field(ge=1, le=100_000)]
    """count: committed nodes."""
    term_months: Annotated[int, Field(ge=0, le=120)]
    """term_months: length of the commitment in months (capacity blocks: 0 = shorter than a month)."""
    term_days: Annotated[int, Field(ge=0, le=182)] = 0
    """term_days: capacity blocks only: length in days (1-14, or multiples of 7 up to 182)."""
    start: CalendarDay
    """start: first day of the commitment (ISO date, 2000-01-01 to 2100-12-31)."""
    usd_per_node_hour: UsdPerNodeHour
    """usd_per_node_hour: effective price per node-hour over the term (on-prem: the capital paid over the term plus
    the operating part, `onprem_costs`)."""
    zone: ZoneName | None = None
    """zone: zone of a zonal reservation or capacity block; null = regional."""
    reservation_name: str | None = None
    """reservation_name: cloud reservation the commitment holds capacity in (GCP reservation); null = discount only."""
    capacity_reservation_id: str | None = None
    """capacity_reservation_id: AWS capacity reservation id (`cr-...`) of a capacity block or ODCR."""
    reservation: Literal["existing", "create"] = "existing"
    """reservation: `existing` (default): the cloud or an account team created the reservation (future or
    calendar-mode reservations, capacity deals); the stacks read it by `reservation_name` / `capacity_reservation_id`
    and fail at plan time when it is not there. `create`: the stacks create it (protected from destroy)."""

    @model_validator(mode="after")
    def _term_fits_kind_and_calendar(self) -> Commitment:
        if self.kind != "capacity-block" and self.term_days:
            raise ValueError(f"term_days is for capacity blocks only (got a `{self.kind}`); use term_months")
        if self.term_months == 0 and self.term_days == 0:
            raise ValueError("the term is empty (term_months and term_days are both 0); give its length")
        if self.end > LAST_DAY + dt.timedelta(days=1):
            raise ValueError(
                f"the term ends {self.end}, after the calendar's last day {LAST_DAY}; check start and term"
            )
        return self

    @property
    def end(self) -> dt.date:
        """The first day after the term."""
        if self.term_months == 0:
            return self.start + dt.timedelta(days=self.term_days)
        return add_months(self.start, self.term_months)


class PriceRow(Strict):
    """One price-book row: the price of a node-hour of a machine at a site under a pricing model."""

    machine: MachineType
    """machine: machine type."""
    site: SiteName
    """site: site the price applies to."""
    pricing_model: PricingModel
    """pricing_model: `on-demand`, `spot`, `flex-start`, `capacity-block`, `commit` or `onprem`."""
    term_months: Annotated[int, Field(ge=0, le=120)] = 0
    """term_months: commitment term for `commit` prices (12 or 36); 0 otherwise."""
    usd_per_node_hour: UsdPerNodeHour
    """usd_per_node_hour: price of one node for one hour, in USD."""
    source: str
    """source: URL or document the price comes from."""
    as_of: dt.date | None = None
    """as_of: date the price was read; null = undated source."""
    upfront_usd_per_node: Usd = Decimal(0)
    """upfront_usd_per_node: `commit` and `onprem` rows only: paid once per node when the term starts, beside
    usd_per_node_hour paid every hour of it: all upfront (usd_per_node_hour 0), partial upfront, or none (0, the
    default)."""
    usd_per_node_hour_used: UsdPerNodeHour = Decimal(0)
    """usd_per_node_hour_used: `commit` and `onprem` rows only: paid per node-hour the capacity is used, beside
    usd_per_node_hour paid every hour of the term (a fixed fee plus a discounted rate per hour used: enterprise
    agreements, on-prem space plus power); default 0. The planner needs one value per site and machine."""

    @model_validator(mode="after")
    def _contract_shape_of_commitments(self) -> PriceRow:
        committed = self.pricing_model in (PricingModel.COMMIT, PricingModel.ONPREM)
        if not committed and (self.upfront_usd_per_node or self.usd_per_node_hour_used):
            raise ValueError(
                "upfront_usd_per_node and usd_per_node_hour_used apply to `commit` and `onprem` rows "
                f"only (got a `{self.pricing_model}` row); leave them empty"
            )
        return self


OnpremPart = Literal["capital", "operating"]
ONPREM_ITEMS: dict[str, OnpremPart] = {
    "hardware": "capital",
    "installation": "capital",
    "power": "operating",
    "space": "operating",
    "support": "operating",
}
"""The items an on-prem machine's cost is made of, and the part each belongs to."""


class OnpremCost(Strict):
    """One part of what an on-prem machine costs at a site (`onprem_costs.csv`): a capital item paid once per node
    (hardware, installation), capitalised and depreciated over the purchase's life, or an operating item paid per
    node-hour of its life (power, space, support), booked as operating cost by month. The items of a machine and
    site add up to its `onprem` price-book row (rule `onprem-cost-parts`)."""

    machine: MachineType
    """machine: machine type."""
    site: SiteName
    """site: the on-prem site."""
    item: Literal["hardware", "installation", "power", "space", "support"]
    """item: `hardware` or `installation` (capital), `power`, `space` or `support` (operating)."""
    usd_per_node: Usd | None = None
    """usd_per_node: capital items only: USD per node, paid once (upfront or financed over the purchase's life)."""
    usd_per_node_hour: UsdPerNodeHour | None = None
    """usd_per_node_hour: operating items only: USD per node-hour, every hour of the purchase's life."""
    source: str
    """source: URL or document the figure comes from (an internal figure says so)."""
    as_of: dt.date | None = None
    """as_of: date the figure was read or agreed; null = undated source."""

    @property
    def part(self) -> OnpremPart:
        """`capital` or `operating` (`ONPREM_ITEMS`)."""
        return ONPREM_ITEMS[self.item]

    @model_validator(mode="after")
    def _amount_fits_part(self) -> OnpremCost:
        capital = self.part == "capital"
        if capital and (self.usd_per_node is None or self.usd_per_node_hour is not None):
            raise ValueError(
                f"`{self.item}` is a capital item: give usd_per_node (paid once per node), leave "
                "usd_per_node_hour empty"
            )
        if not capital and (self.usd_per_node_hour is None or self.usd_per_node is not None):
            raise ValueError(f"`{self.item}` is an operating item: give usd_per_node_hour, leave usd_per_node empty")
        return self


# --- tenants ---------------------------------------------------------------------------------------


class Quota(Strict):
    """A team's (or cohort's) quota in one flavor, in accelerators."""

    flavor: PoolName
    """flavor: the pool (ResourceFlavor) the quota is in."""
    nominal: AcceleratorCount
    """nominal: guaranteed accelerators (Kueue nominalQuota)."""
    borrowing_limit: AcceleratorCount | None = None
    """borrowing_limit: most accelerators borrowed from the cohort beyond nominal; null = no limit."""
    lending_limit: AcceleratorCount | None = None
    """lending_limit: most of nominal lent to the cohort; null = all of it may be lent."""
    cpu: Annotated[int, Field(ge=0, le=10_000_000)] | None = None
    """cpu: nominal CPU cores in the same flavor; null = CPU not covered."""
    memory_gib: Annotated[int, Field(ge=0, le=100_000_000)] | None = None
    """memory_gib: nominal memory in GiB in the same flavor; null = memory not covered."""


MAX_TEAM_NAMESPACES = 100
"""Namespaces a team may list: each gets a LocalQueue, a Role and a RoleBinding per cluster (50,000
cost `qm diff` 1.83 GB and a minute)."""
MAX_TEAM_QUOTAS = 1_000
"""Quotas a team may list: one per flavor."""


class Team(Strict):
    """A tenant: who they are, who pays, where they run and how much they may use."""

    name: TeamName
    """name: team name; also the ClusterQueue name."""
    cost_center: CostCenter
    """cost_center: finance cost centre charged for the team's capacity. For a team in a file under `teams/`, it
    and `cohort`, `priority_class` and `fair_sharing_weight` are set in the team's `team_terms` entry (a file the
    finance approvers own), never in the team file."""
    owners: Annotated[tuple[Owner, ...], Field(min_length=1)]
    """owners: people or groups who approve the team's quota changes (`@user`, `@org/team` or an e-mail)."""
    group: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None
    """group: identity-provider group bound to the team's RBAC roles; default = the team name."""
    groups: dict[ClusterKind, Annotated[str, StringConstraints(min_length=1, max_length=256)]] = Field(
        default_factory=dict
    )
    """groups: the RBAC group per cluster kind, as that platform names it (GKE: a Google Group e-mail; AKS: an
    Entra ID group object id; EKS: the Kubernetes group of an access entry); overrides `group` there."""
    namespaces: Annotated[tuple[NamespaceName, ...], Field(min_length=1, max_length=MAX_TEAM_NAMESPACES)]
    """namespaces: Kubernetes namespaces the team submits workloads from (at most 100)."""
    cohort: CohortName | None = None
    """cohort: cohort the team's ClusterQueues join; null = no borrowing or lending."""
    priority_class: PriorityClassName | None = None
    """priority_class: default WorkloadPriorityClass of the team's workloads."""
    fair_sharing_weight: Annotated[float, Field(ge=0, le=1000)] | None = None
    """fair_sharing_weight: Kueue fair-sharing weight; null = Kueue's default 1."""
    sites: tuple[SiteName, ...] = ()
    """sites: sites the team's work may run at (data residency); empty = any site."""
    quotas: Annotated[tuple[Quota, ...], Field(max_length=MAX_TEAM_QUOTAS)] = ()
    """quotas: quota per flavor (at most 1,000)."""

    def rbac_group(self, cluster_kind: ClusterKind) -> str:
        """The group bound to the team's RBAC roles on a cluster of this kind."""
        return self.groups.get(cluster_kind) or self.group or self.name


class TeamTerms(Strict):
    """What finance decides for a team: who pays for it and how it shares. A file under `teams/` is approved by the
    team's owners alone (CODEOWNERS), so its teams take these fields from here, in a file the finance approvers
    own (`org.yaml`); a team added, removed or renamed needs its entry here too."""

    team: TeamName
    """team: the team these terms apply to (defined in a file under `teams/`, or in a finance-owned file that
    leaves these fields out)."""
    cost_center: CostCenter
    """cost_center: finance cost centre charged for the team's capacity."""
    cohort: CohortName | None = None
    """cohort: cohort the team's ClusterQueues join; null = no borrowing or lending."""
    priority_class: PriorityClassName | None = None
    """priority_class: default WorkloadPriorityClass of the team's workloads (what it may preempt)."""
    fair_sharing_weight: Annotated[float, Field(ge=0, le=1000)] | None = None
    """fair_sharing_weight: Kueue fair-sharing weight; null = Kueue's default 1."""


class Cohort(Strict):
    """A node of the cohort tree (org -> division -> team)."""

    name: CohortName
    """name: cohort name."""
    parent: CohortName | None = None
    """parent: parent cohort; null = root."""
    fair_sharing_weight: Annotated[float, Field(ge=0, le=1000)] | None = None
    """fair_sharing_weight: Kueue fair-sharing weight; null = Kueue's default 1."""
    quotas: tuple[Quota, ...] = ()
    """quotas: shared quota held by the cohort itself, on top of its members'."""


class PriorityClass(Strict):
    """A Kueue WorkloadPriorityClass."""

    name: PriorityClassName
    """name: priority class name (at most 63 characters: it is a label value)."""
    value: Annotated[int, Field(ge=-2_000_000_000, le=1_000_000_000)]
    """value: priority; higher is more important."""
    description: Annotated[str, Field(max_length=2048)] = ""
    """description: what the class is for."""


# --- planning inputs -------------------------------------------------------------------------------


class Budget(Strict):
    """A spending cap for a cost centre in a quarter."""

    cost_center: CostCenter
    """cost_center: the cost centre."""
    quarter: Quarter
    """quarter: e.g. `2027Q1`."""
    usd: Usd
    """usd: most that may be spent in the quarter, in USD."""


class Scenario(Strict):
    """A named demand scenario with its probability (two-stage planning)."""

    name: K8sName
    """name: scenario name used in the demand file's `scenario` column."""
    probability: Annotated[float, Field(gt=0, le=1)]
    """probability: probability of the scenario; the probabilities of all scenarios sum to 1."""


class Policy(Strict):
    """Organisation-wide rules that checks, the planner and the PR review apply."""

    allow_oversubscription: bool = False
    """allow_oversubscription: allow the sum of nominal quotas to exceed a flavor's capacity; default false."""
    finance_approvers: tuple[Owner, ...] = ()
    """finance_approvers: who approves changes above the finance threshold (`@user`, `@org/team` or an e-mail)."""
    finance_approval_usd_per_month: Usd | None = None
    """finance_approval_usd_per_month: a change costing more than this per month needs finance; null = never."""
    max_spot_share: Share = 1.0
    """max_spot_share: most of a team's accelerators that may be spot; default 1 (no limit)."""
    max_waiting_share: Share = 0.05
    """max_waiting_share: most of the replayed hours (the usage history's last 30 days) a quota change may leave a
    team's demand waiting, as a share of those hours; a change above it, for a team that waits more than before,
    blocks the quota PR (`qm diff` check `waiting`). Default 0.05 (36 of 720 hours); 1 = no limit."""
    equivalence: dict[AcceleratorType, Annotated[float, Field(gt=0, le=100)]] = {}
    """equivalence: accelerator -> how many reference accelerators one is worth (H200: 1.5 H100s)."""
    budgets: tuple[Budget, ...] = ()
    """budgets: spending caps per cost centre and quarter."""
    cost_center_names: dict[CostCenter, Annotated[str, StringConstraints(min_length=1, max_length=120)]] = {}
    """cost_center_names: cost centre code -> the name finance knows it by (`CC-1001: Foundation models`), shown
    beside the code in reports; optional, a code without a name is shown alone. Each code must be the cost centre
    of a team or a budget."""
    scenarios: tuple[Scenario, ...] = ()
    """scenarios: demand scenarios and their probabilities; empty = quantile demand (p50/p90)."""
    quota_contact_email: Email | None = None
    """quota_contact_email: who Google Cloud contacts about the GPU/TPU quota requests the stacks file (Cloud Quotas
    `contact_email`, required for increases); needed when a GKE cluster's pools need quota."""
    placement: Literal["quota", "cohort", "anywhere"] = "quota"
    """placement: where the planner may serve a team's demand; default `quota`: only the pools (site and machine)
    where the team holds quota today; `cohort`: also where its cohort tree holds quota it may lend; `anywhere`: any
    site and machine the price book offers (moves are listed with the quota they need). A team that holds no quota
    anywhere may run anywhere. Residency (`teams[].sites`) and pinned demand apply in every case."""
    financing_rate: Annotated[Decimal, NotBool, Field(ge=0, le=1, decimal_places=6)] = Decimal(0)
    """financing_rate: annual interest rate (compounded monthly) a financed on-prem purchase is discounted at: it is
    capitalised at the present value of its capital payments, the rest of them is interest; default 0 (capitalised
    at its payments)."""
    system_namespaces: tuple[Annotated[str, Field(min_length=1, max_length=63)], ...] = ()
    """system_namespaces: more namespaces no team may use (glob patterns such as `monitoring-*`), on top of the
    built-in ones (`quartermaster/catalog/reserved_namespaces.csv`: Kubernetes', Kueue's, the observability
    namespace and the platform add-ons', each with its source)."""


class DemandRow(Strict):
    """Forecast demand of one team for one accelerator class in one quarter."""

    period: Quarter
    """period: quarter, e.g. `2027Q1`."""
    team: TeamName
    """team: the team."""
    accelerator: AcceleratorType
    """accelerator: accelerator class (canonical name), e.g. `H100-80GB`."""
    site: SiteName | None = None
    """site: site the demand must run at; null = anywhere the team may run."""
    scenario: K8sName | None = None
    """scenario: scenario the row belongs to; null = quantile row."""
    p10: Annotated[float, Field(ge=0, le=MAX_ACCELERATORS)] | None = None
    """p10: 10th-percentile demand in accelerators; null = extrapolated from p50 and p90 (lognormal)."""
    p50: Annotated[float, Field(ge=0, le=MAX_ACCELERATORS)]
    """p50: median demand, in accelerators (average concurrent)."""
    p90: Annotated[float, Field(ge=0, le=MAX_ACCELERATORS)] | None = None
    """p90: 90th-percentile demand in accelerators; null = same as p50."""
    p99: Annotated[float, Field(ge=0, le=MAX_ACCELERATORS)] | None = None
    """p99: 99th-percentile demand in accelerators; null = extrapolated from p50 and p90 (lognormal)."""
    preemptible_share: Share = 0.0
    """preemptible_share: share of the demand that tolerates preemption (may run on spot); default 0."""

    @model_validator(mode="after")
    def _quantiles_in_order(self) -> DemandRow:
        given = [
            (k, v)
            for k, v in (("p10", self.p10), ("p50", self.p50), ("p90", self.p90), ("p99", self.p99))
            if v is not None
        ]
        for (lo, a), (hi, b) in itertools.pairwise(given):
            if b < a:
                raise ValueError(f"{hi} ({b}) is below {lo} ({a}); {hi} must be at least {lo}")
        return self

    @property
    def quantiles(self) -> dict[float, float]:
        """The given quantiles, share of hours -> accelerators (p50 always)."""
        given = {0.1: self.p10, 0.5: self.p50, 0.9: self.p90, 0.99: self.p99}
        return {p: v for p, v in given.items() if v is not None}


class UsageRow(Strict):
    """Metered accelerator use of one team in one flavor for one hour."""

    hour: UsageHour
    """hour: start of the hour (ISO 8601, UTC: a time with another offset is converted to UTC; 2000 to 2100)."""
    cluster: ClusterName
    """cluster: the cluster."""
    team: TeamName
    """team: the team."""
    flavor: PoolName
    """flavor: the pool (ResourceFlavor) that served the work."""
    accelerators_used: Annotated[float, Field(ge=0, le=MAX_ACCELERATORS)]
    """accelerators_used: mean accelerators busy over the hour."""
    accelerators_requested: Annotated[float, Field(ge=0, le=MAX_ACCELERATORS)]
    """accelerators_requested: mean accelerators requested (allocated) over the hour."""


# --- the whole inventory ---------------------------------------------------------------------------


class Inventory(Strict):
    """Everything Quartermaster knows about the fleet; loaded from a directory by `quartermaster.loader`."""

    sites: tuple[Site, ...] = ()
    """sites: provider regions and data centres."""
    clusters: tuple[Cluster, ...] = ()
    """clusters: Kubernetes clusters and their pools."""
    machines: tuple[Machine, ...] = ()
    """machines: catalog additions; the shipped catalog is always included."""
    commitments: tuple[Commitment, ...] = ()
    """commitments: capacity bought ahead."""
    teams: tuple[Team, ...] = ()
    """teams: tenants and their quotas."""
    team_terms: tuple[TeamTerms, ...] = ()
    """team_terms: each team's cost centre, cohort, priority class and fair-sharing weight, when its file is
    under `teams/` (the loader copies them into the team)."""
    cohorts: tuple[Cohort, ...] = ()
    """cohorts: the cohort tree."""
    priority_classes: tuple[PriorityClass, ...] = ()
    """priority_classes: workload priority classes."""
    policy: Policy = Policy()
    """policy: organisation-wide rules."""
    prices: tuple[PriceRow, ...] = ()
    """prices: the price book (`prices.csv`)."""
    onprem_costs: tuple[OnpremCost, ...] = ()
    """onprem_costs: the capital and operating parts of on-prem machines' prices (`onprem_costs.csv`); empty = an
    on-prem rate is capitalised whole."""
    demand: tuple[DemandRow, ...] = ()
    """demand: the demand forecast (`demand.csv`)."""
    usage: tuple[UsageRow, ...] = ()
    """usage: metered usage history (`usage.csv`)."""

    # Lookups by name. The loader guarantees unique names; cached_property works on frozen models
    # because pydantic keeps instance dicts.
    @cached_property
    def site_by_name(self) -> dict[str, Site]:
        return {s.name: s for s in self.sites}

    @cached_property
    def cluster_by_name(self) -> dict[str, Cluster]:
        return {c.name: c for c in self.clusters}

    @cached_property
    def pools(self) -> tuple[Pool, ...]:
        """Every pool of every cluster, in file order."""
        return tuple(p for c in self.clusters for p in c.pools)

    @cached_property
    def pool_by_name(self) -> dict[str, Pool]:
        return {p.name: p for p in self.pools}

    @cached_property
    def cluster_of_pool(self) -> dict[str, Cluster]:
        return {p.name: c for c in self.clusters for p in c.pools}

    @cached_property
    def machine_by_name(self) -> dict[str, Machine]:
        """Catalog machines, overridden by the inventory's own `machines` entries."""
        merged = {m.name: m for m in catalog_machines()}
        merged.update({m.name: m for m in self.machines})
        return merged

    @cached_property
    def commitment_by_name(self) -> dict[str, Commitment]:
        return {c.name: c for c in self.commitments}

    @cached_property
    def team_by_name(self) -> dict[str, Team]:
        return {t.name: t for t in self.teams}

    @cached_property
    def cohort_by_name(self) -> dict[str, Cohort]:
        return {c.name: c for c in self.cohorts}

    @cached_property
    def priority_class_by_name(self) -> dict[str, PriorityClass]:
        return {p.name: p for p in self.priority_classes}

    @cached_property
    def fair_sharing(self) -> bool:
        """Fair sharing is meant when any team or cohort sets a weight: Kueue's manager then runs it, and every
        ClusterQueue in a cohort leaves borrowing preemption to it (`modules.kueue.builders.preemption`)."""
        return any(t.fair_sharing_weight is not None for t in self.teams) or any(
            c.fair_sharing_weight is not None for c in self.cohorts
        )

    @cached_property
    def price_by_key(self) -> dict[tuple[str, str, str, int], PriceRow]:
        """Price-book rows by (machine, site, pricing_model, term_months); the first row of a key wins."""
        rows: dict[tuple[str, str, str, int], PriceRow] = {}
        for row in self.prices:
            rows.setdefault((row.machine, row.site, row.pricing_model, row.term_months), row)
        return rows

    def usd_per_node_hour(self, machine: str, site: str, pricing_model: str, term_months: int = 0) -> Decimal | None:
        """The price book's USD per node-hour, or None when the book has no such row (None = unknown, not free)."""
        row = self.price_by_key.get((machine, site, pricing_model, term_months))
        return None if row is None else row.usd_per_node_hour

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Inventory:
        """A copy with `update` applied; the cached lookups above are dropped so they follow the update
        (pydantic copies the instance dict, cached values included)."""
        copy = super().model_copy(update=update, deep=deep)
        for name, attribute in vars(Inventory).items():
            if isinstance(attribute, cached_property):
                copy.__dict__.pop(name, None)
        return copy


Cluster.model_rebuild()
