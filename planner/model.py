r"""Step 2 of the planner: the PuLP problem, one `add_<business_rule>()` per constraint family.

A two-stage stochastic program (Chaisiri, Lee and Niyato 2012) written as its deterministic equivalent,
with load-duration buckets inside each quarter (the cloud recommenders' simulate-each-commitment-level method,
e.g. learn.microsoft.com/azure/cost-management-billing/reservations/reserved-instance-purchase-recommendations,
as an integer program): commitments are decided first and paid for every hour of their term; pay-per-use
capacity is bought per scenario and bucket, only for the hours it is used. There are no yes/no order variables,
so the LP relaxation is tight (docs/benchmarks.md, solver facts: big-M order variables made 20x12x16x3
unsolvable; without them it solves in seconds).

Sets
    q in Q          quarters of the horizon, H_q hours each
    s in S          demand scenarios, probability pi_s (one scenario "expected" for quantile demand)
    b in B_qs       load-duration buckets of quarter q in scenario s, share of hours w_qsb (sum_b w_qsb = 1)
    j in J          offers: a machine at a site (a3-megagpu-8g at gcp-us-east4)
    k in K          demand keys: a team's demand for an accelerator class (optionally pinned to a site)
    c in C          cost centres; K_c the keys of c's teams
    J_k             offers that may serve k: residency (Team.sites), a pinned site, and equivalence
    o in O_j        commitment options at j: `commit` 12/36 months, `onprem` purchase; term T_o quarters
    M_j             pay-per-use pricing models priced at j: on-demand, spot, flex-start, capacity-block
    T_j             tiers at j: E (existing commitments), N (new commitments, if O_j is not empty), M_j
    T_kjqs          the tiers of T_j that may serve k: spot only if sigma_kqs > 0, and no dominated
                    pay-per-use tier (see _dominated_pay_per_use: no plan needs it)
    l in L          quarters after the horizon, Q+1 .. Q+L, that a commitment started in its last quarter Q still
                    covers (L = the longest term, in quarters, minus 1)

Parameters
    D_kqsb          demand of k in bucket b, accelerators
    rho_kj          accelerators of j's machine per accelerator of k's class (equivalence; 1 if the same)
    a_j, g_j        accelerators per node; nodes per unit (whole TPU slices; 1 for GPUs)
    e_jq, E_q       existing commitments: average active nodes at j; their cost in q (fixed, paid even at a
                    lost site)
    p_o, p_jm       USD per node-hour of option o (paid every hour of its term) and of pricing model m at j
    F_o             USD per node paid up front when option o starts (all or partial upfront; 0 if none)
    v_j             USD per node-hour used of the new commitments at j, beside p_o (a fixed fee plus a rate per
                    hour used: enterprise agreements, on-prem power; one rate per offer, 0 if none)
    h_oq'           hours charged for a commitment of option o started in q': all of its term's, from the first
                    day of q' to its end, inside the horizon or not (its whole liability; term_hours)
    p^OD_j          USD per node-hour that capacity at j avoids: its on-demand price, else the cheapest on-demand
                    price of its accelerator elsewhere, else its own dearest price (on_demand_equivalent_price)
    r_jl            expected demand of the keys j may serve in quarter Q+l over that in Q (the forecast's own
                    quarters past the horizon, then its last quarter held flat; PlanData.tail_ratio)
    sigma_kqs       share of k's served demand that may run on spot: min(preemptible_share, policy.max_spot_share)
    cap_jm          supply cap in nodes per offer and pricing model (Site.supply_caps)
    U_cq            budget of cost centre c in quarter q; theta the least utilisation of new commitments
    r^E_jq, r^N_j   charge rates of committed hours for budgets: the existing contracts' average price,
                    and the cheapest new commitment at j, its upfront fee spread over its term
                    (pricing.amortised_usd_per_node_hour), plus v_j
    lambda          penalty per unmet accelerator-hour (10 x the dearest accelerator-hour in the price book)

Variables
    x_joq in Z+     units of option o started at j in q (g_j x_joq nodes; 0 in a quarter already begun, whose first
                    day is past); A^m_jq = sum_{o of model m}
                    sum_{q' <= q < q' + T_o} g_j x_joq' active new nodes, A_jq = sum_m A^m_jq
    n_jq in Z+      instances of the capacity block booked at j for quarter q: from its first day for W_q weeks
                    (its whole weeks, 12 or 13), at most min(64, cap_j,cb); f_q = 168 W_q / H_q of its hours
    y_jmqsb in Z+   whole slices of pay-per-use model m at a TPU offer j (g_j > 1) in a bucket, shared by the
                    keys served there (g_j y_jmqsb nodes paid for); at most floor(cap_jm / g_j) (a bound)
    u_kjtqsb >= 0   nodes of tier t at j serving k (a_j / rho_kj accelerators of k's class each)
    z_kqsb >= 0     unmet demand, accelerators
    U_j >= 0        expected new committed nodes at j serving demand in the horizon's last quarter Q
    V_jl >= 0       USD credited for the new committed capacity at j still active in quarter Q+l
    (explain mode)  budget_overrun_cq, supply_cap_excess_jmq, utilisation_shortfall_jq >= 0

Objective (expected cost over the horizon, USD)
    min  sum_q E_q + sum_{j,o,q} (p_o h_oq + F_o) g_j x_joq
         + sum_{j,q} 168 W_q p_j,cb n_jq (paid up front)
         + sum_{q,s,b} pi_s w_qsb H_q ( sum_{k,j, m in M_j \ cb, g_j = 1} p_jm u_kjmqsb + sum_{k,j} v_j u_kjNqsb
                                        + sum_{j, m in M_j \ cb, g_j > 1} p_jm g_j y_jmqsb + lambda sum_k z_kqsb )
         - kappa sum_{j,l} V_jl            (kappa = 1, the whole credit; 0 or 0.5 in the sensitivity re-solves)
         + slack penalties (explain mode only)

Horizon end: a commitment started in the horizon is charged its whole liability, however far its term runs
past the horizon, and the capacity it leaves after the horizon is credited at the on-demand cost it avoids,
as far as demand would use it: in each quarter Q+l, at most the on-demand cost of the new committed nodes
that serve demand in Q, on average over its hours and scenarios, scaled by how the forecast's demand there
compares with Q's; and no more than the nodes still active then would cost at the cheapest new commitment at
the offer (r^N_j), what one could sign then instead. A commitment bought late because its tail was free
(the old rule charged only the quarters inside the horizon) now pays for a tail nobody uses; one whose tail
serves demand that goes on is not penalised; and none is bought for its tail alone, whose credit never
exceeds its cost. So the first quarter's decisions do not hang on where the horizon stops (tested on the
example: 8 against 12 quarters).

Constraints
    demand_met_kqsb:                      sum_{j in J_k} sum_{t in T_kjqs} (a_j / rho_kj) u_kjtqsb + z_kqsb = D_kqsb
    existing_commitments_cover_jqsb:      sum_k u_kjEqsb <= e_jq
    new_commitments_cover_jqsb:           sum_k u_kjNqsb <= A_jq
    capacity_block_window_jqsb:           sum_k u_kj,cb,qsb <= f_q n_jq, and u_kj,cb,qsb <= f_q D_kqsb rho_kj / a_j
                                          (a bound: a block serves a key only in the hours of its window)
    whole_slices_cover_jmqsb (g_j > 1):   sum_k u_kjmqsb <= g_j y_jmqsb
    spot_within_preemptible_share_kqsb:   sum_j (a_j / rho_kj) u_kj,spot,qsb <= sigma_kqs (D_kqsb - z_kqsb)
                                          (0 < sigma_kqs < 1)
    supply_cap_jmqsb (pay-per-use m):     sum_k u_kjmqsb <= cap_jm (g_j = 1; whole slices: the bound on y)
    supply_cap_jmq (m = commit, onprem):  e^m_jq + A^m_jq <= cap_jm (+ supply_cap_excess_jmq)
    budget_cq:                            sum_{k in K_c} sum_{s,b} pi_s w_qsb H_q sum_j ( sum_{m in M_j \ cb} p_jm
                                          u_kjm + p_j,cb u_kj,cb + r^E_jq u_kjE + r^N_j u_kjN ) <= U_cq
                                          (+ budget_overrun_cq)
    min_utilisation_jq (theta set):       sum_s pi_s sum_b w_qsb sum_k u_kjNqsb >= theta A_jq
                                          (+ utilisation_shortfall_jq)
    last_quarter_new_use_j:               U_j <= sum_{s,b} pi_s w_Qsb sum_k u_kjNQsb
    post_horizon_credit_within_demand_jl:    V_jl <= H_{Q+l} (p^OD_j - v_j) r_jl U_j
    post_horizon_credit_within_renewal_jl:   V_jl <= H_{Q+l} (r^N_j - v_j) sum_o sum_{q' + T_o - 1 >= Q + l} g_j x_joq'
                                          (q' in the horizon: the new nodes still active in Q+l)
    residency, pinned sites, fungibility: u_kj exists only for j in J_k (a variable domain, not a row)
    whole nodes and slices:               integrality of x, n and y; relax-and-round (solve.py) rounds x and
                                          n to the nearest whole unit and y up (ceil), which keeps every
                                          bucket's load covered

Capacity blocks as sold (AWS EC2 Capacity Blocks: pricing.CAPACITY_BLOCK_MAX_INSTANCES) are contiguous, dated
and paid up front; their nodes serve only the demand of the hours inside their window. A quarter's demand here
is a load-duration curve with no calendar, so the plan cannot tell which weeks are busy: it takes the window's
hours to look like the quarter's. A block of n instances then serves, in every bucket, at most n nodes and each
key's demand in the share f of the hours its window covers, and costs n f H_q p: a shorter block of the same
instances would serve and cost the same share less, so without a calendar its length changes nothing but the
granularity, and the plan books one block per offer and quarter, as long as the quarter's whole weeks (7-day
steps, 84 or 91 days, within the 182-day limit). The old rule (node-hours used <= node-weeks booked) let the
hours of a block be steered to the busiest hours for free. Not modelled: shorter blocks, blocks across
quarters, and campaigns declared with dates (which would let a block serve a known busy window).

Each key buys its own tiers, so there is no balance row between what a key is served at an offer and
what the offer supplies: at enterprise size (bench/planner_bench.py) that removed 159k rows and 159k
columns, and the preemptible share is a rule of the key's whole demand, not of each offer it runs at.
A budget charges a cost centre for the hours its keys are served, at the price of what served them
(committed hours at r^E / r^N); commitment hours nobody uses are not charged to a cost centre but to a
shared line, so the charge is linear and the same rule makes `cost_by_team` (see results.py).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import pulp

from quartermaster.plan_result import EXISTING, NEW
from quartermaster.planner.data import PlanData, tail_quarters
from quartermaster.pricing import (
    CAPACITY_BLOCK_MAX_INSTANCES,
    HOURS_PER_WEEK,
    PAY_PER_USE_MODELS,
    PricingModel,
    amortised_usd_per_node_hour,
    format_usd,
    per_accelerator,
    pricing_model_of_commitment,
)
from quartermaster.units import add_months, quarter_bounds, quarter_hours

PAY_PER_USE = PAY_PER_USE_MODELS
# Penalties of the explain-infeasible slacks: far above any price, so a rule gives only when it must.
OVERRUN_PENALTY = 1_000.0  # per USD of budget overrun
CAP_EXCESS_PENALTY_HOURS = 1_000.0  # x lambda per node of cap excess per hour
SHORTFALL_PENALTY = 1_000.0  # x lambda per accelerator-hour of utilisation shortfall

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def name(*parts: object) -> str:
    """A constraint or variable name: the parts joined by `__`, only [A-Za-z0-9_]."""
    return "__".join(map(_safe, map(str, parts)))


@functools.lru_cache(maxsize=65536)
def _stem(*parts: object) -> str:
    """name() of parts that many names share (a family and an offer or key; a cell): cached."""
    return name(*parts)


def cell_name(stem: tuple[object, ...], q: str, s: str, b: int) -> str:
    """name(*stem, q, s, f"b{b}") from cached parts: a row or column per cell of a family and an offer or key."""
    return f"{_stem(*stem)}__{_cell_part(q, s, b)}"


@functools.lru_cache(maxsize=4096)
def _cell_part(q: str, s: str, b: int) -> str:
    return name(q, s, f"b{b}")


@functools.lru_cache(maxsize=65536)
def _safe(part: str) -> str:
    """One part of a name with every character outside [A-Za-z0-9_] replaced by `_` (few distinct parts: cached)."""
    return _UNSAFE.sub("_", part)


@dataclass
class PlanModel:
    """The built problem and its variables, keyed by their index tuples."""

    prob: pulp.LpProblem
    data: PlanData
    commit: dict[tuple[str, str, str], pulp.LpVariable] = field(default_factory=dict)
    capacity_block: dict[tuple[str, str], pulp.LpVariable] = field(default_factory=dict)
    slices: dict[tuple[str, str, str, str, int], pulp.LpVariable] = field(default_factory=dict)  # (j, m, q, s, b)
    use: dict[tuple[str, str, str, str, str, int], pulp.LpVariable] = field(default_factory=dict)  # (k, j, t, q, s, b)
    # (k, q, s, b) -> [(u_kjt, a_j / rho_kj, t)]: k's u in a cell, by route and tier, made with them (add_variables)
    served: dict[tuple[str, str, str, int], list[tuple[pulp.LpVariable, float, str]]] = field(default_factory=dict)
    unmet: dict[tuple[str, str, str, int], pulp.LpVariable] = field(default_factory=dict)
    slack: dict[tuple[str, ...], pulp.LpVariable] = field(default_factory=dict)
    # index facts shared by the add_* functions and results.py
    cells: list[tuple[str, str, int]] = field(default_factory=list)  # (q, s, b)
    weight: dict[tuple[str, str, int], float] = field(default_factory=dict)
    offers: dict[str, dict] = field(default_factory=dict)
    tiers: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (j, q) -> tiers
    routes: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # k -> [(j, rho)]
    cost_center: dict[str, str] = field(default_factory=dict)  # k -> c
    key_parts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    spot_share: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (k, q, s) -> sigma
    dominated: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # k -> (j, m) no plan needs
    existing_nodes: dict[tuple[str, str], float] = field(default_factory=dict)  # (j, q)
    existing_nodes_by_model: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (j, m, q)
    price: dict[tuple[str, str], float] = field(default_factory=dict)  # (j, m) pay-per-use
    options: dict[str, list[dict]] = field(default_factory=dict)  # j -> commitment options
    used_rate: dict[str, float] = field(default_factory=dict)  # j -> v_j
    charge_rate: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (j, tier, q) for budgets
    # u grouped by (j, t, q, s, b) over demand keys, made once for the constraint families that read it
    use_by_tier: dict[tuple[str, str, str, str, int], list[pulp.LpVariable]] = field(default_factory=dict)
    # horizon end: U (j) and V (j, Q+l); see the module docstring
    last_use: dict[str, pulp.LpVariable] = field(default_factory=dict)
    tail_credit: dict[tuple[str, str], pulp.LpVariable] = field(default_factory=dict)
    tail_quarters: list[str] = field(default_factory=list)
    avoided_price: dict[str, float] = field(default_factory=dict)  # j -> p^OD_j
    fixed_lp: object = None  # planner.solve: the report of the fixed-integer LP whose duals are loaded, if any

    def variables(self) -> list[pulp.LpVariable]:
        """Every variable of the problem, from the model's own dicts (PuLP's `variables()` re-walks every row)."""
        return [
            *self.commit.values(),
            *self.capacity_block.values(),
            *self.slices.values(),
            *self.use.values(),
            *self.unmet.values(),
            *self.slack.values(),
            *self.last_use.values(),
            *self.tail_credit.values(),
        ]

    def integers(self) -> list[pulp.LpVariable]:
        """The integer decisions: commitment starts x, capacity-block node-weeks n, pay-per-use TPU slices y."""
        return [*self.commit.values(), *self.capacity_block.values(), *self.slices.values()]

    def whole(self, var: pulp.LpVariable) -> int:
        """Relax-and-round's whole value of an integer decision: slices y rounded up (a slice short would leave
        load unserved), commitments and node-weeks to the nearest unit."""
        x = var.varValue or 0.0
        if var.name in self.slice_names:
            return max(0, math.ceil(x - 1e-6))
        return max(0, round(x))

    @functools.cached_property
    def slice_names(self) -> frozenset[str]:
        return frozenset(v.name for v in self.slices.values())

    def sliced(self, j: str, tier: str) -> bool:
        """Whether pay-per-use tier `tier` at j is bought in whole slices of g_j > 1 nodes (TPU)."""
        return self.offers[j]["nodes_per_unit"] > 1 and tier in PAY_PER_USE and tier != PricingModel.CAPACITY_BLOCK

    def charge_per_node_hour(self, j: str, tier: str, q: str) -> float:
        """What a cost centre is charged per node-hour of tier t at j in q (r^E, r^N, or the pay-per-use price)."""
        return self.price[(j, tier)] if tier in PAY_PER_USE else self.charge_rate[(j, tier, q)]

    def active_new(
        self, j: str, q: str, model: str | None = None, times: float = 1.0
    ) -> list[tuple[pulp.LpVariable, float]]:
        """The terms of `times` x A^m_jq: new committed nodes active at j in q (all models if `model` is None)."""
        qs = self.data.quarters
        terms = []
        for opt in self.options.get(j, []):
            if model is not None and opt["pricing_model"] != model:
                continue
            for start in qs[max(0, qs.index(q) - opt["term_quarters"] + 1) : qs.index(q) + 1]:
                terms.append((self.commit[(j, opt["option"], start)], times * self.offers[j]["nodes_per_unit"]))
        return terms


def build_model(data: PlanData) -> PlanModel:
    """Build the whole problem: variables, objective and every constraint family."""
    m = PlanModel(prob=pulp.LpProblem("reservation_plan", pulp.LpMinimize), data=data)
    _index(m)
    add_variables(m)
    add_objective(m)
    for add in dict.fromkeys(FAMILIES.values()):
        add(m)
    return m


def _index(m: PlanModel) -> None:
    d = m.data
    m.offers = {r["offer"]: r for r in d.offers.to_dict("records")}
    cc_of_team = dict(zip(d.teams["team"], d.teams["cost_center"], strict=True))
    for r in d.demand[["demand_key", "team", "accelerator", "site"]].drop_duplicates().itertuples():
        m.cost_center[r.demand_key] = cc_of_team.get(r.team, r.team)
        m.key_parts[r.demand_key] = (r.team, r.accelerator) + ((r.site,) if r.site else ())
    for r in d.routes.itertuples():
        if r.offer in m.offers:
            m.routes.setdefault(r.demand_key, []).append((r.offer, float(r.ratio)))
    shares = d.demand[["demand_key", "quarter", "scenario", "preemptible_share"]].drop_duplicates(
        ["demand_key", "quarter", "scenario"]
    )
    for r in shares.itertuples():
        m.spot_share[(r.demand_key, r.quarter, r.scenario)] = min(float(r.preemptible_share), d.max_spot_share)
    cells = d.demand[["quarter", "scenario", "bucket", "weight"]].drop_duplicates(["quarter", "scenario", "bucket"])
    for r in cells.itertuples():
        m.cells.append((r.quarter, r.scenario, int(r.bucket)))
        m.weight[(r.quarter, r.scenario, int(r.bucket))] = float(r.weight)
    m.cells.sort(key=lambda c: (d.quarters.index(c[0]), c[1], c[2]))
    existing_usd: dict[tuple[str, str], float] = defaultdict(float)
    for r in d.existing.itertuples():
        if r.offer in m.offers:
            m.existing_nodes[(r.offer, r.quarter)] = m.existing_nodes.get((r.offer, r.quarter), 0.0) + r.nodes
            existing_usd[(r.offer, r.quarter)] += float(r.usd)
            model = pricing_model_of_commitment(r.kind)
            key = (r.offer, model, r.quarter)
            m.existing_nodes_by_model[key] = m.existing_nodes_by_model.get(key, 0.0) + r.nodes
    for r in d.recourse_prices.itertuples():
        m.price[(r.offer, r.pricing_model)] = float(r.usd_per_node_hour)
    for r in d.commit_options.to_dict("records"):
        m.options.setdefault(r["offer"], []).append(r)
        m.used_rate[r["offer"]] = float(r["usd_per_node_hour_used"])  # one per offer (data._commit_options)
    m.dominated = _dominated_pay_per_use(m)
    for j in m.offers:
        for q in d.quarters:
            tiers = []
            if m.existing_nodes.get((j, q), 0) > 0:
                tiers.append(EXISTING)
                m.charge_rate[(j, EXISTING, q)] = existing_usd[(j, q)] / (m.existing_nodes[(j, q)] * d.hours[q])
            if m.options.get(j):
                tiers.append(NEW)
                m.charge_rate[(j, NEW, q)] = m.used_rate[j] + min(
                    amortised_usd_per_node_hour(
                        float(o["usd_per_node_hour"]), float(o["upfront_usd_per_node"]), o["term_months"]
                    )
                    for o in m.options[j]
                )
            tiers += [t for t in PAY_PER_USE if (j, t) in m.price]
            m.tiers[(j, q)] = tiers
    m.tail_quarters = tail_quarters(d.quarters, d.commit_options)
    m.avoided_price = on_demand_equivalent_price(m)[0]


# Pay-per-use models whose columns enter only their key's demand row (spot: also its spot-share row, with
# the same coefficient), its budget at its price, and their supply cap: nothing but price and cap tells
# the members of a group apart, across every offer the key may use.
SUBSTITUTES = (("flex-start", "on-demand"), ("spot",))


def _dominated_pay_per_use(m: PlanModel) -> dict[str, set[tuple[str, str]]]:
    """k -> the (offer, pay-per-use model) pairs no plan needs for k.

    Prune before solving (docs/benchmarks.md, solver facts). Within a group of SUBSTITUTES, let the cheapest
    uncapped pair be the one with the lowest price per accelerator of k's class (p_jm rho_kj / a_j; ties
    to the first offer by name): any use of a dearer pair is beaten by moving it there, and the move is
    cheaper in the budget too. Kept: that pair and capped pairs cheaper than it (useful up to their cap).
    At enterprise size this leaves out 230,400 of 562,350 columns (the objective and LP bound unchanged
    to the dollar), which HiGHS's presolve would otherwise remove after PuLP had spent 10 s building them.
    """
    capped = {(r.offer, r.pricing_model) for r in m.data.caps.itertuples()}
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for k, routes in m.routes.items():
        for group in SUBSTITUTES:
            pairs = sorted(
                (per_accelerator(m.price[(j, t)] * rho, m.offers[j]["accelerators_per_node"]), j, t)
                for j, rho in routes
                for t in group
                if (j, t) in m.price
            )
            best = next((p for p in pairs if (p[1], p[2]) not in capped), None)
            if best is not None:
                out[k].update(
                    (j, t)
                    for price, j, t in pairs
                    if (price, j, t) != best and ((j, t) not in capped or price >= best[0])
                )
    return out


def add_variables(m: PlanModel) -> None:
    """x (integer starts), n (integer node-weeks), u (used per key, offer and tier), z (unmet), y (TPU slices)."""
    d = m.data
    for j, opts in m.options.items():
        for opt in opts:
            for q in d.quarters:  # none starts in a quarter already begun (PlanData.begun)
                m.commit[(j, opt["option"], q)] = m.prob.add_variable(
                    name("commit", m.offers[j]["site"], m.offers[j]["machine"], opt["option"], q),
                    0,
                    0 if q in d.begun else None,
                    cat="Integer",
                )
    caps = {(r.offer, r.pricing_model): int(r.max_nodes) for r in d.caps.itertuples()}
    for j in m.offers:
        if (j, PricingModel.CAPACITY_BLOCK) in m.price:
            most = block_instances(caps.get((j, PricingModel.CAPACITY_BLOCK)))
            for q in d.quarters:
                m.capacity_block[(j, q)] = m.prob.add_variable(
                    name("capacity_block_instances", m.offers[j]["site"], m.offers[j]["machine"], q),
                    0,
                    0 if q in d.begun else most,
                    cat="Integer",
                )
    suffix = {cell: name(*_cell(cell)) for cell in m.cells}
    # (k, q, spot allowed) -> [(j, t, the name's first parts, rho_kj, a_j)]: the tiers that may serve k, found once
    # per key and quarter rather than per cell
    candidates: dict[tuple[str, str, bool], list[tuple[str, str, str, float, int]]] = {}
    for r in d.demand[["demand_key", "quarter", "scenario", "bucket", "level"]].itertuples():
        k, cell = r.demand_key, (r.quarter, r.scenario, int(r.bucket))
        m.unmet[(k, *cell)] = m.prob.add_variable(cell_name(("unmet", *m.key_parts[k]), *cell), 0)
        spot_allowed = m.spot_share[(k, r.quarter, r.scenario)] > 0
        tiers = candidates.get((k, r.quarter, spot_allowed))
        if tiers is None:
            tiers = candidates[(k, r.quarter, spot_allowed)] = [
                (
                    j,
                    t,
                    name("use", *m.key_parts[k], m.offers[j]["site"], m.offers[j]["machine"], t),
                    rho,
                    m.offers[j]["accelerators_per_node"],
                )
                for j, rho in m.routes.get(k, [])
                for t in m.tiers[(j, r.quarter)]
                if (t != "spot" or spot_allowed) and (j, t) not in m.dominated.get(k, ())
            ]
        served = m.served[(k, *cell)] = []
        for j, t, stem, rho, a in tiers:
            var = m.use[(k, j, t, *cell)] = m.prob.add_variable(
                f"{stem}__{suffix[cell]}",
                0,
                None if t != PricingModel.CAPACITY_BLOCK else block_share(m, r.quarter) * r.level * rho / a,
            )
            served.append((var, a / rho, t))
    for j, t, q, s, b in use_by_tier(m):
        if m.sliced(j, t):
            g, cap = m.offers[j]["nodes_per_unit"], caps.get((j, t))
            m.slices[(j, t, q, s, b)] = m.prob.add_variable(
                name("slices", m.offers[j]["site"], m.offers[j]["machine"], t, q, s, f"b{b}"),
                0,
                None if cap is None else cap // g,
                cat="Integer",
            )


def _cell(cell: tuple[str, str, int]) -> tuple[str, str, str]:
    q, s, b = cell
    return q, s, f"b{b}"


@functools.cache
def term_end(start: str, months: int) -> dt.date:
    """The day after the last of a term of `months` started on the first day of quarter `start`."""
    return add_months(quarter_bounds(start)[0], months)


@functools.cache
def term_hours(start: str, months: int) -> int:
    """Hours of a term started on the first day of quarter `start`, to its end: what its liability counts."""
    return (term_end(start, months) - quarter_bounds(start)[0]).days * 24


def add_objective(m: PlanModel) -> None:
    """Expected cost: existing commitments, new commitments' whole liability, capacity blocks, pay-per-use, unmet
    demand, less the credit for new capacity after the horizon (its terms join in add_post_horizon_credit)."""
    d = m.data
    terms: list[tuple[pulp.LpVariable, float]] = []
    for (j, option, q), var in m.commit.items():
        opt = next(o for o in m.options[j] if o["option"] == option)
        terms.append(
            (
                var,
                m.offers[j]["nodes_per_unit"]
                * (
                    float(opt["usd_per_node_hour"]) * term_hours(q, opt["term_months"])
                    + float(opt["upfront_usd_per_node"])
                ),
            )
        )
    for (j, q), var in m.capacity_block.items():
        terms.append((var, HOURS_PER_WEEK * weeks_in(q) * m.price[(j, PricingModel.CAPACITY_BLOCK)]))
    for (_k, j, t, q, s, b), var in m.use.items():
        if t in PAY_PER_USE and t != PricingModel.CAPACITY_BLOCK and not m.sliced(j, t):
            terms.append((var, d.scenarios[s] * m.weight[(q, s, b)] * d.hours[q] * m.price[(j, t)]))
        elif t == NEW and m.used_rate[j]:
            terms.append((var, d.scenarios[s] * m.weight[(q, s, b)] * d.hours[q] * m.used_rate[j]))
    for (j, t, q, s, b), var in m.slices.items():
        terms.append(
            (var, d.scenarios[s] * m.weight[(q, s, b)] * d.hours[q] * m.price[(j, t)] * m.offers[j]["nodes_per_unit"])
        )
    for (_k, q, s, b), var in m.unmet.items():
        terms.append((var, d.scenarios[s] * m.weight[(q, s, b)] * d.hours[q] * d.unmet_penalty))
    fixed = float(sum(d.existing["usd"])) if not d.existing.empty else 0.0
    m.prob.setObjective(pulp.LpAffineExpression(terms, constant=fixed))


def _add(m: PlanModel, expr: pulp.LpAffineExpression, sense: int, rhs: float, cname: str) -> None:
    m.prob.addConstraint(pulp.LpConstraint(expr, sense, cname, rhs))


def _slack(m: PlanModel, key: tuple[str, ...], cost: float) -> pulp.LpVariable:
    """A named, penalised slack variable (explain-infeasible mode); its cost joins the objective."""
    var = m.prob.add_variable(name(*key), 0)
    m.slack[key] = var
    m.prob.objective.addterm(var, cost)
    return var


def _served_terms(
    m: PlanModel, k: str, cell: tuple[str, str, int], tier: str | None = None
) -> list[tuple[pulp.LpVariable, float]]:
    """(u_kjt, a_j / rho_kj) for the tiers (all if None) that serve k in `cell`: accelerators of k's class."""
    return [(var, per_node) for var, per_node, t in m.served.get((k, *cell), ()) if tier is None or t == tier]


def add_demand_met(m: PlanModel) -> None:
    """demand_met: every bucket of every key's demand is served somewhere it may run, or reported unmet."""
    for r in m.data.demand[["demand_key", "quarter", "scenario", "bucket", "level"]].itertuples():
        k, cell = r.demand_key, (r.quarter, r.scenario, int(r.bucket))
        terms = [*_served_terms(m, k, cell), (m.unmet[k, *cell], 1.0)]
        _add(
            m,
            pulp.LpAffineExpression(terms),
            pulp.LpConstraintEQ,
            float(r.level),
            cell_name(("demand_met", *m.key_parts[k]), *cell),
        )


def use_by_tier(m: PlanModel) -> dict[tuple[str, str, str, str, int], list[pulp.LpVariable]]:
    """(j, t, q, s, b) -> [u_kjt] over demand keys, in key order (so the rows come out sorted)."""
    if not m.use_by_tier:
        out: dict[tuple, list] = defaultdict(list)
        for (_k, j, t, q, s, b), var in m.use.items():
            out[(j, t, q, s, b)].append(var)
        m.use_by_tier = dict(sorted(out.items()))
    return m.use_by_tier


def add_existing_commitments_cover(m: PlanModel) -> None:
    """existing_commitments_cover: existing commitments serve at most their (average active) nodes."""
    for (j, t, q, s, b), vars_ in use_by_tier(m).items():
        if t == EXISTING:
            o = m.offers[j]
            _add(
                m,
                pulp.LpAffineExpression([(v, 1.0) for v in vars_]),
                pulp.LpConstraintLE,
                m.existing_nodes[(j, q)],
                cell_name(("existing_commitments_cover", o["site"], o["machine"]), q, s, b),
            )


def add_new_commitments_cover(m: PlanModel) -> None:
    """new_commitments_cover: new commitments serve at most the nodes whose term covers the quarter.

    A^m_jq is written out in every scenario and bucket's row: an auxiliary column A_jq with one defining
    row per quarter has fewer nonzeros but made the LP relaxation slower at enterprise size (31 s against
    21 s, bench/planner_bench.py).
    """
    active = {}
    for (j, t, q, s, b), vars_ in use_by_tier(m).items():
        if t == NEW:
            if (j, q) not in active:
                active[(j, q)] = m.active_new(j, q, times=-1.0)
            o = m.offers[j]
            expr = pulp.LpAffineExpression([(v, 1.0) for v in vars_] + active[(j, q)])
            rule = cell_name(("new_commitments_cover", o["site"], o["machine"]), q, s, b)
            _add(m, expr, pulp.LpConstraintLE, 0.0, rule)


def add_capacity_block_window(m: PlanModel) -> None:
    """capacity_block_window: a capacity block's instances serve each bucket only in the share of its hours that
    their window covers (the quarter has no calendar: the window's hours look like the quarter's); each key's part
    is bounded the same way, on its column (add_variables)."""
    for (j, t, q, s, b), vars_ in use_by_tier(m).items():
        if t == PricingModel.CAPACITY_BLOCK:
            o = m.offers[j]
            expr = pulp.LpAffineExpression([(v, 1.0) for v in vars_] + [(m.capacity_block[(j, q)], -block_share(m, q))])
            _add(
                m,
                expr,
                pulp.LpConstraintLE,
                0.0,
                cell_name(("capacity_block_window", o["site"], o["machine"]), q, s, b),
            )


@functools.cache
def weeks_in(q: str) -> int:
    """W_q: the whole weeks in quarter q, the length of the capacity block the plan books for it."""
    return quarter_hours(q) // HOURS_PER_WEEK


def block_share(m: PlanModel, q: str) -> float:
    """f_q: the share of quarter q's hours that its capacity block's window covers."""
    return HOURS_PER_WEEK * weeks_in(q) / m.data.hours[q]


def block_instances(cap: int | None) -> int:
    """The most instances of one capacity block at an offer: 64, or its supply cap if lower."""
    return CAPACITY_BLOCK_MAX_INSTANCES if cap is None else min(cap, CAPACITY_BLOCK_MAX_INSTANCES)


def add_whole_slices_cover(m: PlanModel) -> None:
    """whole_slices_cover: pay-per-use TPU nodes come in whole slices; the keys served there share them."""
    by_tier = use_by_tier(m)
    for (j, t, q, s, b), y in m.slices.items():
        o = m.offers[j]
        expr = pulp.LpAffineExpression([(v, 1.0) for v in by_tier[(j, t, q, s, b)]] + [(y, -o["nodes_per_unit"])])
        _add(m, expr, pulp.LpConstraintLE, 0.0, name("whole_slices_cover", o["site"], o["machine"], t, q, s, f"b{b}"))


def add_spot_within_preemptible_share(m: PlanModel) -> None:
    """spot_within_preemptible_share: spot serves only the share of a key's served demand that tolerates preemption.

    Served = D - z, so the row reads spot + sigma z <= sigma D. Keys with sigma = 0 have no spot variables
    (a domain, not a row); with sigma = 1 the rule cannot bind and no row is written.
    """
    for r in m.data.demand[["demand_key", "quarter", "scenario", "bucket", "level"]].itertuples():
        k, cell = r.demand_key, (r.quarter, r.scenario, int(r.bucket))
        sigma = m.spot_share[(k, r.quarter, r.scenario)]
        spot = _served_terms(m, k, cell, "spot")
        if spot and sigma < 1:
            _add(
                m,
                pulp.LpAffineExpression([*spot, (m.unmet[k, *cell], sigma)]),
                pulp.LpConstraintLE,
                sigma * float(r.level),
                cell_name(("spot_within_preemptible_share", *m.key_parts[k]), *cell),
            )


def add_supply_caps(m: PlanModel) -> None:
    """supply_cap: the most nodes obtainable per offer and pricing model (Site.supply_caps)."""
    d = m.data
    by_tier = use_by_tier(m)
    explain = d.options.explain_infeasible
    for cap in d.caps.itertuples():
        j, model = cap.offer, cap.pricing_model
        o = m.offers[j]
        if model in PAY_PER_USE:
            if m.sliced(j, model):  # a bound on the whole slices y
                continue
            for q, s, b in m.cells:
                vars_ = by_tier.get((j, model, q, s, b))
                if vars_:
                    _add(
                        m,
                        pulp.LpAffineExpression([(v, 1.0) for v in vars_]),
                        pulp.LpConstraintLE,
                        float(cap.max_nodes),
                        name("supply_cap", o["site"], o["machine"], model, q, s, f"b{b}"),
                    )
            continue
        for q in d.quarters:
            fixed = m.existing_nodes_by_model.get((j, model, q), 0.0)
            expr = pulp.LpAffineExpression(m.active_new(j, q, model))
            if not expr and fixed == 0:
                continue
            if explain:
                expr = expr - _slack(
                    m,
                    ("supply_cap_excess", o["site"], o["machine"], model, q),
                    CAP_EXCESS_PENALTY_HOURS * d.unmet_penalty * d.hours[q],
                )
            _add(
                m,
                expr,
                pulp.LpConstraintLE,
                float(cap.max_nodes) - fixed,
                name("supply_cap", o["site"], o["machine"], model, q),
            )


def add_budgets(m: PlanModel) -> None:
    """budget: a cost centre's expected charge in a quarter stays within its budget."""
    d = m.data
    budgeted = set(zip(d.budgets["cost_center"], d.budgets["quarter"], strict=True))
    charge: dict[tuple[str, str], list] = defaultdict(list)
    for (k, j, t, q, s, b), var in m.use.items():
        if (m.cost_center[k], q) not in budgeted:
            continue
        rate = m.charge_per_node_hour(j, t, q)
        charge[(m.cost_center[k], q)].append((var, d.scenarios[s] * m.weight[(q, s, b)] * d.hours[q] * rate))
    for r in d.budgets.itertuples():
        expr = pulp.LpAffineExpression(charge.get((r.cost_center, r.quarter), []))
        if d.options.explain_infeasible:
            expr = expr - _slack(m, ("budget_overrun", r.cost_center, r.quarter), OVERRUN_PENALTY)
        _add(m, expr, pulp.LpConstraintLE, float(r.usd), name("budget", r.cost_center, r.quarter))


def add_min_utilisation(m: PlanModel) -> None:
    """min_utilisation: new commitments are expected to be busy at least theta of their hours."""
    d = m.data
    theta = d.options.min_utilisation
    if not theta:
        return
    used: dict[tuple[str, str], list] = defaultdict(list)
    for (_k, j, t, q, s, b), var in m.use.items():
        if t == NEW:
            used[(j, q)].append((var, d.scenarios[s] * m.weight[(q, s, b)]))
    for (j, q), terms in sorted(used.items()):
        o = m.offers[j]
        expr = pulp.LpAffineExpression(terms + m.active_new(j, q, times=-theta))
        if d.options.explain_infeasible:
            expr = expr + _slack(
                m,
                ("utilisation_shortfall", o["site"], o["machine"], q),
                SHORTFALL_PENALTY * d.unmet_penalty * d.hours[q],
            )
        _add(m, expr, pulp.LpConstraintGE, 0.0, name("min_utilisation", o["site"], o["machine"], q))


def add_post_horizon_credit(m: PlanModel) -> None:
    """last_quarter_new_use, post_horizon_credit_within_demand and _within_renewal: new capacity left after the
    horizon is credited at the on-demand cost it avoids, as far as demand uses it, and at most its renewal.

    One credit per offer and later quarter, bounded by two rows, rather than one per scenario and bucket: at
    medium size (bench/planner_bench.py) that was 33,000 columns and 66,000 rows more, and four times the time.
    """
    d = m.data
    last = d.quarters[-1]
    ratio = {} if d.tail_ratio is None else {(r.offer, r.quarter): float(r.ratio) for r in d.tail_ratio.itertuples()}
    by_tier = use_by_tier(m)
    for j, opts in m.options.items():
        o = m.offers[j]
        where = (o["site"], o["machine"])
        use = m.last_use[j] = m.prob.add_variable(name("last_quarter_new_use", *where), 0)
        terms = [
            (v, -d.scenarios[s] * m.weight[(q, s, b)])
            for q, s, b in m.cells
            if q == last
            for v in by_tier.get((j, NEW, q, s, b), [])
        ]
        _add(
            m,
            pulp.LpAffineExpression([(use, 1.0), *terms]),
            pulp.LpConstraintLE,
            0.0,
            name("last_quarter_new_use", *where),
        )
        for ahead, q in enumerate(m.tail_quarters, start=1):
            starts = [
                (m.commit[(j, opt["option"], start)], float(o["nodes_per_unit"]))
                for opt in opts
                for i, start in enumerate(d.quarters)
                if i + opt["term_quarters"] - 1 >= len(d.quarters) - 1 + ahead
            ]
            if not starts:
                continue
            credit = m.tail_credit[(j, q)] = m.prob.add_variable(name("post_horizon_credit", *where, q), 0)
            m.prob.objective.addterm(credit, -d.credit_share)
            hours = quarter_hours(q)
            worth = hours * max(0.0, m.avoided_price[j] - m.used_rate[j]) * ratio.get((j, q), 1.0)
            _add(
                m,
                pulp.LpAffineExpression([(credit, 1.0), (use, -worth)]),
                pulp.LpConstraintLE,
                0.0,
                name("post_horizon_credit_within_demand", *where, q),
            )
            renewal = -hours * (m.charge_rate[(j, NEW, last)] - m.used_rate[j])
            _add(
                m,
                pulp.LpAffineExpression([(credit, 1.0), *((x, renewal * g) for x, g in starts)]),
                pulp.LpConstraintLE,
                0.0,
                name("post_horizon_credit_within_renewal", *where, q),
            )


FAMILIES: dict[str, Callable[[PlanModel], None]] = {
    "demand_met": add_demand_met,
    "existing_commitments_cover": add_existing_commitments_cover,
    "new_commitments_cover": add_new_commitments_cover,
    "capacity_block_window": add_capacity_block_window,
    "whole_slices_cover": add_whole_slices_cover,
    "spot_within_preemptible_share": add_spot_within_preemptible_share,
    "supply_cap": add_supply_caps,
    "budget": add_budgets,
    "min_utilisation": add_min_utilisation,
    "last_quarter_new_use": add_post_horizon_credit,
    "post_horizon_credit_within_demand": add_post_horizon_credit,
    "post_horizon_credit_within_renewal": add_post_horizon_credit,
}
"""The constraint families, in build order: each row's name starts with its family, and the function that adds it.
build_model runs each function once; the golden LP files, --explain-infeasible and the maths page
(planner/maths.py, docs/explanation/planner-maths.md) read this table."""


def on_demand_equivalent_price(m: PlanModel) -> tuple[dict[str, float], list[str]]:
    """USD per node-hour of the same accelerators bought on demand at each offer, and for each offer without an
    on-demand price of its own, which price stands in: the cheapest on-demand price of the accelerator
    elsewhere, or (none anywhere, e.g. on-prem B200) the offer's own dearest price, which claims no savings."""
    cheapest: dict[str, float] = {}
    for (j, t), p in m.price.items():
        if t == PricingModel.ON_DEMAND:
            acc = m.offers[j]["accelerator"]
            rate = per_accelerator(p, m.offers[j]["accelerators_per_node"])
            cheapest[acc] = min(cheapest.get(acc, rate), rate)
    out, stand_ins = {}, []
    for j, o in m.offers.items():
        acc = o["accelerator"]
        if (j, PricingModel.ON_DEMAND) in m.price:
            out[j] = m.price[(j, PricingModel.ON_DEMAND)]
        elif acc in cheapest:
            out[j] = cheapest[acc] * o["accelerators_per_node"]
            stand_ins.append(
                f"{j} ({acc}): no on-demand price; the cheapest on-demand {acc} elsewhere, "
                f"{format_usd(cheapest[acc], 4)} per accelerator-hour, stands in"
            )
        else:
            own = [p for (jj, _), p in m.price.items() if jj == j] + [
                r for (jj, _, _), r in m.charge_rate.items() if jj == j
            ]
            out[j] = max(own, default=0.0)
            stand_ins.append(
                f"{j} ({acc}): no on-demand {acc} anywhere in the price book; its own price, "
                f"{format_usd(out[j], 4)} per node-hour, stands in, so it claims no savings"
            )
    return out, stand_ins
