r"""Step 2 of the planner: the problem as arrays (HiGHS takes them as they are; PuLP's problem is derived from them),
one `add_<business_rule>()` per constraint family.

A two-stage stochastic program (Chaisiri, Lee and Niyato 2012) written as its deterministic equivalent,
with load-duration buckets inside each quarter (the cloud recommenders' simulate-each-commitment-level method,
e.g. learn.microsoft.com/azure/cost-management-billing/reservations/reserved-instance-purchase-recommendations,
as an integer program): commitments are decided first and paid for every hour of their term; pay-per-use
capacity is bought per scenario and bucket, only for the hours it is used. There are no yes/no order variables,
so the LP relaxation is tight (docs/benchmarks.md, solver facts: big-M order variables made 20x12x16x3
unsolvable; without them it solves in seconds).

Sets
    q in Q          quarters of the horizon, H_q open hours each: all of its hours, or in the quarter in progress
                    those after the end of the actuals (its closed part is metered, fixed, not planned; actuals.py)
    s in S          demand scenarios, probability pi_s (one scenario "expected" for quantile demand)
    b in B_qs       load-duration buckets of quarter q in scenario s, share of hours w_qsb (sum_b w_qsb = 1)
    j in J          offers: a machine at a site (a3-megagpu-8g at gcp-us-east4)
    k in K          demand keys: a team's demand for an accelerator class (optionally pinned to a site)
    c in C          cost centres; K_c the keys of c's teams
    J_k             offers that may serve k: residency (Team.sites), a pinned site, and equivalence
    o in O_j        commitment options at j: `commit` 12/36 months, `onprem` purchase; term T_o quarters
    M_j             pay-per-use pricing models priced at j: on-demand, spot, flex-start, capacity-block
    T_j             tiers at j: E (existing commitments), N (new commitments, if O_j is not empty), M_j
    T_kjqs          the tiers of T_j that may serve k: spot only if sigma_kqs > 0, no dominated
                    pay-per-use tier (see _dominated_pay_per_use: no plan needs it), and only the tiers of the
                    flavors (pools) k's team may run on under policy.placement (placement.py)
    P in P_j        flavors at j: the pools serving a set of tiers of j (a reservation pool: existing, new and
                    on-demand), each tier in one; i in I_P the teams and cohorts holding quota in P, r(i) the
                    root of i's cohort tree
    l in L          quarters after the horizon, Q+1 .. Q+L, that a commitment started in its last quarter Q still
                    covers (L = the longest term, in quarters, minus 1)

Parameters
    D_kqsb          demand of k in bucket b, accelerators
    rho_kj          accelerators of j's machine per accelerator of k's class (equivalence; 1 if the same)
    a_j, g_j        accelerators per node; nodes per unit (whole TPU slices; 1 for GPUs)
    e_jq, E_q       existing commitments: average active nodes at j; their cost in q, over its open hours (fixed,
                    paid even at a lost site)
    p_o, p_jm       USD per node-hour of option o (paid every hour of its term) and of pricing model m at j
    F_o             USD per node paid up front when option o starts (all or partial upfront; 0 if none)
    v_j             USD per node-hour used of the new commitments at j, beside p_o (a fixed fee plus a rate per
                    hour used: enterprise agreements, on-prem power; one rate per offer, 0 if none)
    d_q             the day a purchase made in q starts: q's first day, or in the quarter in progress its first
                    open day (actuals.purchase_day)
    h_oq'           hours charged for a commitment of option o started in q': all of its term's, from d_q' to
                    its end, inside the horizon or not (its whole liability; term_hours)
    a_oq'q          share of q's H_q hours that a term of option o started on d_q' covers (1 in every quarter a
                    term started on a quarter's first day covers, 0 outside it; actuals.active_share)
    p^OD_j          USD per node-hour that capacity at j avoids: its on-demand price, else the cheapest on-demand
                    price of its accelerator elsewhere, else its own dearest price (on_demand_equivalent_price)
    r_jl            expected demand of the keys j may serve in quarter Q+l over that in Q (the forecast's own
                    quarters past the horizon, then its last quarter held flat; PlanData.tail_ratio)
    sigma_kqs       share of k's served demand that may run on spot: min(preemptible_share, policy.max_spot_share)
    cap_jm          supply cap in nodes per offer and pricing model (Site.supply_caps)
    U_cq            budget of cost centre c in quarter q; theta the least utilisation of new commitments
    N_iP, B_iP, L_iP  today's quota of i in P, in accelerators: nominal, borrowing limit (infinite when none; 0
                    outside a cohort) and what it may lend (its lending limit, at most N_iP; 0 outside a cohort)
    C_cq            what `qm meter` charged c's teams in the closed part of q (0 for a quarter not begun)
    r^E_jq, r^N_j   charge rates of committed hours for budgets: the existing contracts' average price,
                    and the cheapest new commitment at j, its upfront fee spread over its term
                    (pricing.amortised_usd_per_node_hour), plus v_j
    lambda          penalty per unmet accelerator-hour (10 x the dearest accelerator-hour in the price book)

Variables
    x_joq in Z+     units of option o started at j on d_q (g_j x_joq nodes; 0 in a quarter with no open day
                    left); A^m_jq = sum_{o of model m} sum_{q' <= q} a_oq'q g_j x_joq' new nodes active on average,
                    A_jq = sum_m A^m_jq
    n_jq in Z+      instances of the capacity block booked at j for quarter q: from d_q for W_q weeks (the whole
                    weeks from d_q to the quarter's end: 12 or 13 in a whole quarter), at most min(64, cap_j,cb);
                    f_q = 168 W_q / H_q of its hours
    y_jmqsb in Z+   whole slices of pay-per-use model m at a TPU offer j (g_j > 1) in a bucket, shared by the
                    keys served there (g_j y_jmqsb nodes paid for); at most floor(cap_jm / g_j) (a bound)
    u_kjtqsb >= 0   nodes of tier t at j serving k (a_j / rho_kj accelerators of k's class each)
    z_kqsb >= 0     unmet demand, accelerators
    b_iPsb, l_iPsb  accelerators of P that i borrows from, and lends to, its cohort tree in a bucket of the first
                    quarter (0 <= b <= B_iP, 0 <= l <= L_iP)
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
the offer (r^N_j), what one could sign then instead. Charging only the quarters inside the horizon would make
a commitment's tail free and favour buying late; charged whole, a commitment bought late pays for a tail nobody
uses; one whose tail serves demand that goes on is not penalised; and none is bought for its tail alone, whose
credit never exceeds its cost. So the first quarter's decisions do not hang on where the horizon stops (tested on the
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
                                          - C_cq (+ budget_overrun_cq)
    min_utilisation_jq (theta set):       sum_s pi_s sum_b w_qsb sum_k u_kjNqsb >= theta A_jq
                                          (+ utilisation_shortfall_jq)
    quota_within_nominal_and_borrowing_iPsb (first quarter q = 1, placement `quota` or `cohort`):
                                          sum_{k of i} sum_{(j,t) of P} a_j u_kjt1sb - b_iPsb <= N_iP
    lent_within_unused_quota_iPsb:        l_iPsb + sum_{k of i} sum_{(j,t) of P} a_j u_kjt1sb - b_iPsb <= N_iP
                                          (a member lends only quota it does not use)
    borrowed_within_lent_rPsb:            sum_{i: r(i) = r} b_iPsb - sum_{i: r(i) = r} l_iPsb <= 0
                                          (Kueue admits what a cohort tree lends, within each member's limits)
    last_quarter_new_use_j:               U_j <= sum_{s,b} pi_s w_Qsb sum_k u_kjNQsb
    post_horizon_credit_within_demand_jl:    V_jl <= H_{Q+l} (p^OD_j - v_j) r_jl U_j
    post_horizon_credit_within_renewal_jl:   V_jl <= H_{Q+l} (r^N_j - v_j) sum_o sum_q' a_oq'(Q+l) g_j x_joq'
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
steps, 84 or 91 days, within the 182-day limit). A looser rule, node-hours used <= node-weeks booked, would let
the hours of a block be steered to the busiest hours for free. Not modelled: shorter blocks, blocks across
quarters, and campaigns declared with dates (which would let a block serve a known busy window).

Each key buys its own tiers, so there is no balance row between what a key is served at an offer and
what the offer supplies: at enterprise size (bench/planner_bench.py) that removed 159k rows and 159k
columns, and the preemptible share is a rule of the key's whole demand, not of each offer it runs at.
A budget charges a cost centre for the hours its keys are served, at the price of what served them
(committed hours at r^E / r^N); commitment hours nobody uses are not charged to a cost centre but to a
shared line, so the charge is linear and the same rule makes `cost_by_team` (see build_result.py).
"""

from __future__ import annotations

import functools
import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
import pulp

from quartermaster.plan_contract import EXISTING, NEW
from quartermaster.planner.actuals import term_hours
from quartermaster.planner.data import PlanData, tail_quarters
from quartermaster.planner.tables import Budget, Cap, Demand, Existing, Route, rows
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
from quartermaster.units import Quarter, quarter_bounds, quarter_hours

PAY_PER_USE = PAY_PER_USE_MODELS
# Every tier, in the order the rows of a family over (offer, tier, cell) come out: by name.
TIERS = tuple(sorted((EXISTING, NEW, *PAY_PER_USE)))
# Penalties of the explain-infeasible slacks: far above any price, so a rule gives only when it must.
OVERRUN_PENALTY = 1_000.0  # per USD of budget overrun
CAP_EXCESS_PENALTY_HOURS = 1_000.0  # x lambda per node of cap excess per hour
SHORTFALL_PENALTY = 1_000.0  # x lambda per accelerator-hour of utilisation shortfall

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Sense = Literal["<=", ">=", "="]
Terms = tuple[Ints, Ints, "Floats | float"]
"""Terms of a block of rows: (row of the block, column, coefficient) of each; the coefficient may be one number."""
Cell = tuple[Quarter, str, int]
"""(q, s, b): a quarter, a scenario and a load-duration bucket of it."""
UseKey = tuple[str, str, str, Quarter, str, int]
"""(k, j, t, q, s, b): a use column's demand key, offer, tier and cell."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def name(*parts: object) -> str:
    """A constraint or variable name: the parts joined by `__`, only [A-Za-z0-9_]."""
    return "__".join(map(_safe, map(str, parts)))


@functools.lru_cache(maxsize=65536)
def _stem(*parts: object) -> str:
    """name() of parts that many names share (a family and an offer or key; a cell): cached."""
    return name(*parts)


def cell_name(stem: tuple[object, ...], q: Quarter, s: str, b: int) -> str:
    """name(*stem, q, s, f"b{b}") from cached parts: a row or column per cell of a family and an offer or key."""
    return f"{_stem(*stem)}__{_cell_part(q, s, b)}"


@functools.lru_cache(maxsize=4096)
def _cell_part(q: Quarter, s: str, b: int) -> str:
    return name(q, s, f"b{b}")


@functools.lru_cache(maxsize=65536)
def _safe(part: str) -> str:
    """One part of a name with every character outside [A-Za-z0-9_] replaced by `_` (few distinct parts: cached)."""
    return _UNSAFE.sub("_", part)


def _joined(parts: Sequence[np.ndarray], dtype: type) -> np.ndarray:
    """The arrays `parts` end to end; an empty array of `dtype` when there are none."""
    return np.concatenate(parts) if len(parts) else np.zeros(0, dtype=dtype)


def ranges(lengths: Ints) -> Ints:
    """0 .. n-1 for each n of `lengths`, concatenated."""
    ends = np.cumsum(lengths)
    return np.arange(ends[-1] if len(ends) else 0) - np.repeat(ends - lengths, lengths)


@dataclass
class LinearProgram:
    """The built problem as arrays, as HiGHS takes it (planner/solve.py, `highs_lp`): a column per variable and a row
    per constraint, each named. The rows are stored row-wise: row i's terms are columns `index` with coefficients
    `value` over start[i]:start[i+1] (no zero among them). PuLP's problem is derived from it (`to_pulp`)."""

    col_names: list[str]
    col_lower: Floats
    col_upper: Floats
    cost: Floats
    integer: Bools
    constant: float  # the objective's constant (existing commitments' cost)
    row_names: list[str]
    row_family: Ints  # index of the row's family in FAMILY_NAMES
    row_lower: Floats
    row_upper: Floats
    start: Ints
    index: Ints
    value: Floats

    @property
    def num_cols(self) -> int:
        return len(self.col_names)

    @property
    def num_rows(self) -> int:
        return len(self.row_names)

    def rows_of(self, *families: str) -> Bools:
        """Which rows belong to one of `families`."""
        return np.isin(self.row_family, [FAMILY_NAMES.index(f) for f in families])

    def activity(self, x: Floats) -> Floats:
        """Each row's value at column values x."""
        row = np.repeat(np.arange(self.num_rows), np.diff(self.start))
        return np.asarray(np.bincount(row, weights=self.value * x[self.index], minlength=self.num_rows), dtype=float)

    def transposed_times(self, y: Floats) -> Floats:
        """sum_i a_ij y_i for each column j (y a value per row: duals give the rows' part of reduced costs)."""
        weights = self.value * np.repeat(y, np.diff(self.start))
        return np.asarray(np.bincount(self.index, weights=weights, minlength=self.num_cols), dtype=float)

    def to_pulp(self) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
        """The same problem as a PuLP problem (for CBC, `--write-lp` and the golden LP files) and its variables, in
        column order."""
        prob = pulp.LpProblem("reservation_plan", pulp.LpMinimize)
        cat = {True: pulp.const.LpInteger, False: pulp.const.LpContinuous}
        columns = [
            prob.add_variable(n, None if lo == -math.inf else lo, None if up == math.inf else up, cat=cat[i])
            for n, lo, up, i in zip(
                self.col_names, self.col_lower.tolist(), self.col_upper.tolist(), self.integer.tolist(), strict=True
            )
        ]
        priced = np.flatnonzero(self.cost)
        prob.setObjective(
            pulp.LpAffineExpression(
                [(columns[j], c) for j, c in zip(priced.tolist(), self.cost[priced].tolist(), strict=True)],
                constant=self.constant,
            )
        )
        index, value, start = self.index.tolist(), self.value.tolist(), self.start.tolist()
        bounds = zip(self.row_names, self.row_lower.tolist(), self.row_upper.tolist(), strict=True)
        for i, (row_name, lo, up) in enumerate(bounds):
            terms = [
                (columns[j], v)
                for j, v in zip(index[start[i] : start[i + 1]], value[start[i] : start[i + 1]], strict=True)
            ]
            if lo == up:
                sense, rhs = pulp.LpConstraintEQ, lo
            elif lo == -math.inf:
                sense, rhs = pulp.LpConstraintLE, up
            else:
                sense, rhs = pulp.LpConstraintGE, lo
            prob.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(terms), sense, row_name, rhs))
        return prob, columns


@dataclass
class UseColumns:
    """The u columns, one entry per column in column order (demand rows', each by the tiers that may serve it), and
    the same columns grouped by (offer, tier, cell): the groups sorted by offer, tier and cell as names sort, each
    group's columns in column order. Offers, tiers and cells are positions in PlanModel.offer_names, TIERS and
    PlanModel.cells."""

    column: Ints
    demand_row: Ints  # the row of the demand table (PlanModel.demand) the column serves
    offer: Ints
    tier: Ints
    cell: Ints
    per_node: Floats  # a_j / rho_kj: accelerators of the key's class one node serves
    by_group: Ints  # the entries ordered by group (column order within each)
    group_start: Ints
    group_offer: Ints
    group_tier: Ints
    group_cell: Ints

    def group_terms(self, groups: Ints) -> tuple[Ints, Ints]:
        """(i, column) for the u columns of groups[i], each group's in column order."""
        lengths = np.diff(self.group_start)[groups]
        entries = self.by_group[np.repeat(self.group_start[groups], lengths) + ranges(lengths)]
        return np.repeat(np.arange(len(groups)), lengths), self.column[entries]


@dataclass
class DemandRows:
    """The demand table's rows (D_kqsb), in its order: key, cell, level, spot share and the unmet column z of each."""

    key: list[str]
    cell: Ints
    level: Floats
    spot_share: Floats
    unmet: Ints


@dataclass
class PlanModel:
    """The built problem (`lp`, arrays) and its columns keyed by their index tuples, with the index facts the
    constraint families and build_result.py share, and the solution once solved (`x`, row duals `pi`)."""

    data: PlanData
    commit: dict[tuple[str, str, Quarter], int] = field(default_factory=dict)  # (j, o, q)
    capacity_block: dict[tuple[str, Quarter], int] = field(default_factory=dict)
    slices: dict[tuple[str, str, Quarter, str, int], int] = field(default_factory=dict)  # (j, m, q, s, b)
    unmet: dict[tuple[str, Quarter, str, int], int] = field(default_factory=dict)
    slack: dict[tuple[str, ...], int] = field(default_factory=dict)
    # index facts shared by the add_* functions and build_result.py
    cells: list[Cell] = field(default_factory=list)
    weight: dict[Cell, float] = field(default_factory=dict)
    offers: dict[str, dict[str, Any]] = field(default_factory=dict)
    offer_names: list[str] = field(default_factory=list)  # sorted
    offer_code: dict[str, int] = field(default_factory=dict)  # j -> its position in offer_names
    tiers: dict[tuple[str, Quarter], list[str]] = field(default_factory=dict)  # (j, q) -> tiers
    routes: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # k -> [(j, rho)]
    cost_center: dict[str, str] = field(default_factory=dict)  # k -> c
    key_parts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    spot_share: dict[tuple[str, Quarter, str], float] = field(default_factory=dict)  # (k, q, s) -> sigma
    dominated: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # k -> (j, m) no plan needs
    existing_nodes: dict[tuple[str, Quarter], float] = field(default_factory=dict)  # (j, q)
    existing_nodes_by_model: dict[tuple[str, str, Quarter], float] = field(default_factory=dict)  # (j, m, q)
    price: dict[tuple[str, str], float] = field(default_factory=dict)  # (j, m) pay-per-use
    options: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # j -> commitment options
    used_rate: dict[str, float] = field(default_factory=dict)  # j -> v_j
    charge_rate: dict[tuple[str, str, Quarter], float] = field(default_factory=dict)  # (j, tier, q) for budgets
    # horizon end: U (j) and V (j, Q+l); see the module docstring
    last_use: dict[str, int] = field(default_factory=dict)
    tail_credit: dict[tuple[str, Quarter], int] = field(default_factory=dict)  # (j, Q+l)
    tail_quarters: list[Quarter] = field(default_factory=list)
    avoided_price: dict[str, float] = field(default_factory=dict)  # j -> p^OD_j
    slice_group: Ints = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # the u group of each slice y
    session: object = None  # planner.solve: the HiGHS session that solved the model (HighsSession), if any
    # the solution: column values and row duals (zero until solved)
    x: Floats = field(default_factory=lambda: np.zeros(0))
    pi: Floats = field(default_factory=lambda: np.zeros(0))
    # the problem as it is built, then as arrays (finish)
    _columns: list[tuple[list[str], Floats, Floats, bool]] = field(default_factory=list)
    _costs: list[tuple[Ints, Floats]] = field(default_factory=list)
    _rows: list[tuple[Ints, list[str], Floats, Floats, Ints, Ints, Floats]] = field(default_factory=list)
    _num_cols: int = 0
    _num_rows: int = 0
    _lp: LinearProgram | None = None
    _u: UseColumns | None = None
    _demand: DemandRows | None = None
    _active: tuple[Ints, Ints, Floats, list[str]] | None = None  # active_terms: start by (j, q); column, g, model
    # used(): the solution it was read from (PlanModel.x) and its u columns above 0
    _used: tuple[Floats, list[tuple[UseKey, float]]] | None = None

    # --- building -------------------------------------------------------------------------------------------------

    def new_columns(
        self, names: list[str], lower: Floats | float, upper: Floats | float, integer: bool = False
    ) -> Ints:
        """Columns with these names and bounds; their positions."""
        n = len(names)
        self._columns.append(
            (
                names,
                np.broadcast_to(np.asarray(lower, dtype=float), n),
                np.broadcast_to(np.asarray(upper, float), n),
                integer,
            )
        )
        self._num_cols += n
        return np.arange(self._num_cols - n, self._num_cols)

    def new_column(self, column_name: str, upper: float = math.inf) -> int:
        """One continuous column >= 0."""
        return int(self.new_columns([column_name], 0.0, upper)[0])

    def add_cost(self, columns: Ints, coefficients: Floats | float) -> None:
        """Objective coefficients of columns (each column once over the whole build)."""
        self._costs.append((columns, np.broadcast_to(np.asarray(coefficients, dtype=float), len(columns))))

    def add_rows(
        self, family: str | list[str], names: list[str], sense: Sense, rhs: Floats | float, terms: Sequence[Terms]
    ) -> None:
        """A block of rows of `family` (or of each row's family), their terms in the order given (then in each Terms'
        own order)."""
        n = len(names)
        if isinstance(family, str):
            codes = np.full(n, FAMILY_NAMES.index(family), dtype=np.int64)
        else:
            codes = np.array([FAMILY_NAMES.index(f) for f in family], dtype=np.int64)
        rhs_ = np.broadcast_to(np.asarray(rhs, dtype=float), n)
        lower = rhs_ if sense != "<=" else np.full(n, -math.inf)
        upper = rhs_ if sense != ">=" else np.full(n, math.inf)
        row = np.concatenate([t[0] for t in terms]).astype(np.int64)
        col = np.concatenate([t[1] for t in terms]).astype(np.int64)
        value = np.concatenate([np.broadcast_to(np.asarray(t[2], dtype=float), len(t[0])) for t in terms])
        order = np.argsort(row, kind="stable")
        self._rows.append(
            (
                codes,
                names,
                lower,
                upper,
                row[order] + self._num_rows,
                col[order],
                value[order],
            )
        )
        self._num_rows += n

    def add_row(
        self, family: str, row_name: str, sense: Sense, rhs: float, columns: list[int], coefficients: list[float]
    ) -> None:
        """One row of `family`."""
        cols = np.array(columns, dtype=np.int64)
        self.add_rows(
            family,
            [row_name],
            sense,
            rhs,
            [(np.zeros(len(cols), dtype=np.int64), cols, np.array(coefficients, dtype=float))],
        )

    def finish(self, constant: float) -> None:
        """The problem as built, as arrays (`lp`)."""
        integer = np.concatenate([np.full(len(names), i) for names, _, _, i in self._columns])
        cost = np.zeros(self._num_cols)
        for columns, coefficients in self._costs:
            cost[columns] += coefficients
        # every array from the rows concatenated the same way, empty (of its type) when there are no rows
        row_parts: list[tuple[Any, ...]] = list(zip(*self._rows, strict=True)) if self._rows else [()] * 7
        rows = _joined(row_parts[4], np.int64)
        value = _joined(row_parts[6], float)
        kept = value != 0
        self._lp = LinearProgram(
            col_names=[n for names, _, _, _ in self._columns for n in names],
            col_lower=np.concatenate([c[1] for c in self._columns]),
            col_upper=np.concatenate([c[2] for c in self._columns]),
            cost=cost,
            integer=integer.astype(bool),
            constant=constant,
            row_names=[n for names in row_parts[1] for n in names],
            row_family=_joined(row_parts[0], np.int64),
            row_lower=_joined(row_parts[2], float),
            row_upper=_joined(row_parts[3], float),
            start=np.concatenate(([0], np.cumsum(np.bincount(rows[kept], minlength=self._num_rows)))),
            index=_joined(row_parts[5], np.int64)[kept],
            value=value[kept],
        )
        self._columns, self._costs, self._rows = [], [], []
        self.x, self.pi = np.zeros(self._lp.num_cols), np.zeros(self._lp.num_rows)

    # --- the built problem ----------------------------------------------------------------------------------------

    @property
    def lp(self) -> LinearProgram:
        if self._lp is None:
            raise ValueError("the model is not built yet (build_model)")
        return self._lp

    @property
    def u(self) -> UseColumns:
        if self._u is None:
            raise ValueError("the model has no u columns yet (add_variables)")
        return self._u

    @property
    def demand(self) -> DemandRows:
        if self._demand is None:
            raise ValueError("the model has no demand rows yet (add_variables)")
        return self._demand

    @functools.cached_property
    def _pulp(self) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
        return self.lp.to_pulp()

    @property
    def prob(self) -> pulp.LpProblem:
        """The problem as PuLP's (derived from `lp` when first asked: CBC, --write-lp)."""
        return self._pulp[0]

    def pulp_columns(self, columns: Ints) -> list[pulp.LpVariable]:
        """PuLP's variables of these columns."""
        return [self._pulp[1][j] for j in columns.tolist()]

    def load_pulp_solution(self) -> None:
        """The values and row duals PuLP holds after a solve through it (CBC), as the model's solution."""
        self.x = np.array([v.varValue or 0.0 for v in self._pulp[1]])
        self.pi = np.array([c.pi or 0.0 for c in self.prob.constraints()])

    def _use_keys(self, entries: Ints) -> list[UseKey]:
        """(k, j, t, q, s, b) of these entries of the u columns."""
        u = self.u
        cell = u.cell[entries]
        return list(
            zip(
                np.array(self.demand.key, dtype=object)[u.demand_row[entries]].tolist(),
                np.array(self.offer_names, dtype=object)[u.offer[entries]].tolist(),
                np.array(TIERS, dtype=object)[u.tier[entries]].tolist(),
                *(np.array([c[i] for c in self.cells], dtype=object)[cell].tolist() for i in range(3)),
                strict=True,
            )
        )

    def use_in(self, quarter: Quarter) -> list[tuple[UseKey, float]]:
        """(k, j, t, q, s, b) and the value of each u column of `quarter` in the solution, in column order."""
        in_quarter = np.array([q == quarter for q, _, _ in self.cells])
        entries = np.flatnonzero(in_quarter[self.u.cell])
        return list(zip(self._use_keys(entries), self.x[self.u.column[entries]].tolist(), strict=True))

    def used(self) -> list[tuple[UseKey, float]]:
        """(k, j, t, q, s, b) and the value of each u column above 0 in the solution, in column order (kept until
        the solution changes)."""
        if self._used is None or self._used[0] is not self.x:
            entries = np.flatnonzero(self.x[self.u.column] > 0)
            values = self.x[self.u.column[entries]].tolist()
            self._used = (self.x, list(zip(self._use_keys(entries), values, strict=True)))
        return self._used[1]

    @functools.cached_property
    def by_tier(self) -> dict[tuple[str, str, Quarter, str, int], list[int]]:
        """(j, t, q, s, b) -> [u_kjt] over demand keys, in column order (sorted by key)."""
        u = self.u
        columns, starts = u.column[u.by_group].tolist(), u.group_start.tolist()
        keys = zip(
            np.array(self.offer_names, dtype=object)[u.group_offer].tolist(),
            np.array(TIERS, dtype=object)[u.group_tier].tolist(),
            *(np.array([c[i] for c in self.cells], dtype=object)[u.group_cell].tolist() for i in range(3)),
            strict=True,
        )
        return {key: columns[a:b] for key, a, b in zip(keys, starts[:-1], starts[1:], strict=True)}

    def value(self, column: int) -> float:
        """A column's value in the solution."""
        return float(self.x[column])

    def integers(self) -> Ints:
        """The integer decisions' columns: commitment starts x, capacity-block instances n, pay-per-use TPU slices y."""
        return np.flatnonzero(self.lp.integer)

    def whole(self, columns: Ints) -> Floats:
        """Relax-and-round's whole values of integer decisions: slices y rounded up (a slice short would leave
        load unserved), commitments and capacity-block instances to the nearest unit."""
        x = self.x[columns]
        up = np.isin(columns, list(self.slices.values()))
        return np.maximum(0.0, np.where(up, np.ceil(x - 1e-6), np.round(x)))

    def sliced(self, j: str, tier: str) -> bool:
        """Whether pay-per-use tier `tier` at j is bought in whole slices of g_j > 1 nodes (TPU)."""
        return self.offers[j]["nodes_per_unit"] > 1 and tier in PAY_PER_USE and tier != PricingModel.CAPACITY_BLOCK

    def charge_per_node_hour(self, j: str, tier: str, q: Quarter) -> float:
        """What a cost centre is charged per node-hour of tier t at j in q (r^E, r^N, or the pay-per-use price)."""
        return self.price[(j, tier)] if tier in PAY_PER_USE else self.charge_rate[(j, tier, q)]

    def expected_hours(self, cell: Cell) -> float:
        """pi_s w_qsb H_q: the expected hours of a cell."""
        q, s, _ = cell
        return self.data.scenarios[s] * self.weight[cell] * self.data.hours[q]

    @functools.cached_property
    def cell_hours(self) -> dict[Cell, float]:
        """expected_hours of every cell."""
        return {c: self.expected_hours(c) for c in self.cells}

    def active_terms(self, offer: Ints, quarter: Ints, model: str | None = None, times: float = 1.0) -> Terms:
        """(i, column, coefficient) of `times` x A^m_jq for j = offer_names[offer[i]], q = quarters[quarter[i]]: the
        new committed nodes active at j in q (all models if `model` is None), each option's starts in order."""
        if self._active is None:
            raise ValueError("the model has no commitment columns yet (add_variables)")
        start, column, nodes, models = self._active
        at = offer * len(self.data.quarters) + quarter
        lengths = np.diff(start)[at]
        entries = np.repeat(start[at], lengths) + ranges(lengths)
        row = np.repeat(np.arange(len(at)), lengths)
        if model is not None:
            keep = np.array([models[e] == model for e in entries.tolist()], dtype=bool)
            entries, row = entries[keep], row[keep]
        return row, column[entries], times * nodes[entries]

    def active_new(
        self, j: str, q: Quarter, model: str | None = None, times: float = 1.0
    ) -> tuple[list[int], list[float]]:
        """The columns and coefficients of `times` x A^m_jq (active_terms) for one offer and quarter."""
        _, columns, coefficients = self.active_terms(
            np.array([self.offer_code[j]]), np.array([self.data.quarters.index(q)]), model, times
        )
        return columns.tolist(), np.asarray(coefficients).tolist()

    def budget_curves(self) -> BudgetCurves:
        """What each budget row's cost centre would be charged at prices on the budget rows, from the built arrays
        (BudgetCurves): the facts the HiGHS session's price estimates read."""
        lp, u, demand = self.lp, self.u, self.demand
        rows = np.flatnonzero(lp.rows_of("budget"))
        lengths = np.diff(lp.start)[rows]
        entries = np.repeat(lp.start[rows], lengths) + ranges(lengths)
        budget_of = np.full(lp.num_cols, -1, dtype=np.int64)
        charge_of = np.zeros(lp.num_cols)
        budget_of[lp.index[entries]] = np.repeat(np.arange(len(rows)), lengths)
        charge_of[lp.index[entries]] = lp.value[entries]
        charged = np.flatnonzero(budget_of[u.column] >= 0)
        spot = u.tier[charged] == TIERS.index(PricingModel.SPOT)
        # two items per charged demand row: its spot share, which any tier may serve, and the rest, which spot may not
        d = u.demand_row[charged]
        item = np.concatenate((2 * d, 2 * d[~spot] + 1))
        candidate = np.concatenate((charged, charged[~spot]))
        order = np.argsort(item, kind="stable")
        item, candidate = item[order], candidate[order]
        names, item_start = np.unique(item, return_index=True)
        column = u.column[candidate]
        share = demand.spot_share[names // 2]
        return BudgetCurves(
            rows=rows,
            limit=lp.row_upper[rows],
            item_start=item_start,
            item_row=budget_of[column[item_start]],
            item_volume=demand.level[names // 2] * np.where(names % 2 == 0, share, 1 - share),
            item_penalty=lp.cost[demand.unmet[names // 2]],
            price=np.maximum(lp.cost[column], charge_of[column]) / u.per_node[candidate],
            charge=charge_of[column] / u.per_node[candidate],
        )


@dataclass(frozen=True)
class BudgetCurves:
    """How each budget row's cost centre would be charged at prices lambda >= 0 on the budget rows (USD of objective
    per USD of budget) if no capacity ran short: each demand row buys, per accelerator, the tier with the least
    price + lambda x charge, spot only for its spot share, or leaves it unmet where its penalty is less. Prices are
    USD per accelerator in the cell (commitments and existing contracts at their charge rate, what they cost when
    used); an item is a demand row's spot share or the rest, and its candidates are the tiers that may serve it.

    The charge falls as lambda rises; at lambda = 0 and full service it is bounded below by `least_charge`, so a
    budget below that must bind. HighsSession prices the budget rows from these curves (planner/solve.py)."""

    rows: Ints  # the budget rows (positions in LinearProgram's rows)
    limit: Floats  # their budgets, USD
    item_start: Ints  # each item's first candidate (the candidates are grouped by item)
    item_row: Ints  # each item's budget row (position in `rows`)
    item_volume: Floats  # accelerators
    item_penalty: Floats  # USD per accelerator left unmet
    price: Floats  # each candidate's USD per accelerator
    charge: Floats  # each candidate's USD of budget per accelerator

    def least_charge(self) -> Floats:
        """The least each budget row's demand can be charged when all of it that any tier can serve is served."""
        least = np.minimum.reduceat(self.charge, self.item_start) if len(self.item_start) else np.zeros(0)
        return np.asarray(np.bincount(self.item_row, weights=self.item_volume * least, minlength=len(self.rows)), float)

    def charge_at(self, prices: Floats) -> Floats:
        """Each budget row's charge when every item buys its cheapest candidate at `prices` (one per row)."""
        if not len(self.item_start):
            return np.zeros(len(self.rows))
        lengths = np.diff(np.append(self.item_start, len(self.price)))
        score = self.price + np.repeat(prices[self.item_row], lengths) * self.charge
        best = np.minimum.reduceat(score, self.item_start)
        tied = score <= np.repeat(best, lengths) * (1 + 1e-12)
        chosen = np.minimum.reduceat(np.where(tied, self.charge, np.inf), self.item_start)
        spend = np.where(best < self.item_penalty, self.item_volume * chosen, 0.0)
        return np.asarray(np.bincount(self.item_row, weights=spend, minlength=len(self.rows)), dtype=float)

    def prices_for(self, spend: Floats, steps: int = 40) -> Floats:
        """The least prices at which each row's charge is at most `spend` (bisection; the highest price any candidate
        is still bought at where no price is enough, e.g. a negative spend)."""
        lengths = np.diff(np.append(self.item_start, len(self.price)))
        worth = (np.repeat(self.item_penalty, lengths) - self.price) / np.where(self.charge > 0, self.charge, np.inf)
        top = np.zeros(len(self.rows))
        np.maximum.at(top, np.repeat(self.item_row, lengths), np.maximum(worth, 0.0))
        low, high = np.zeros(len(self.rows)), top * (1 + 1e-9) + 1e-9
        done = self.charge_at(low) <= spend
        high[done] = 0.0
        for _ in range(steps):
            mid = (low + high) / 2
            within = self.charge_at(mid) <= spend
            high, low = np.where(within, mid, high), np.where(within, low, mid)
        return high


def build_model(data: PlanData) -> PlanModel:
    """Build the whole problem: variables, objective and every constraint family, as arrays (PlanModel.lp)."""
    m = PlanModel(data=data)
    _index(m)
    add_variables(m)
    add_objective(m)
    for add in dict.fromkeys(FAMILIES.values()):
        add(m)
    m.finish(float(sum(data.existing["usd"])) if not data.existing.empty else 0.0)
    return m


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table's rows as dicts by column name."""
    return [{str(c): v for c, v in r.items()} for r in frame.to_dict("records")]


def _index(m: PlanModel) -> None:
    d = m.data
    m.offers = {o["offer"]: o for o in _records(d.offers)}
    m.offer_names = sorted(m.offers)
    m.offer_code = {j: i for i, j in enumerate(m.offer_names)}
    cc_of_team = dict(zip(d.teams["team"], d.teams["cost_center"], strict=True))
    for r in rows(d.demand, Demand):
        if r.demand_key not in m.key_parts:
            m.cost_center[r.demand_key] = cc_of_team.get(r.team, r.team)
            m.key_parts[r.demand_key] = (r.team, r.accelerator) + ((r.site,) if r.site else ())
        m.spot_share.setdefault(
            (r.demand_key, r.quarter, r.scenario), min(float(r.preemptible_share), d.max_spot_share)
        )
        cell = (r.quarter, r.scenario, int(r.bucket))
        if cell not in m.weight:
            m.cells.append(cell)
            m.weight[cell] = float(r.weight)
    for route in rows(d.routes, Route):
        if route.offer in m.offers:
            m.routes.setdefault(route.demand_key, []).append((route.offer, float(route.ratio)))
    m.cells.sort(key=lambda c: (d.quarters.index(c[0]), c[1], c[2]))
    existing_usd: dict[tuple[str, str], float] = defaultdict(float)
    for e in rows(d.existing, Existing):
        if e.offer in m.offers:
            m.existing_nodes[(e.offer, e.quarter)] = m.existing_nodes.get((e.offer, e.quarter), 0.0) + e.nodes
            existing_usd[(e.offer, e.quarter)] += float(e.usd)
            key = (e.offer, pricing_model_of_commitment(e.kind), e.quarter)
            m.existing_nodes_by_model[key] = m.existing_nodes_by_model.get(key, 0.0) + e.nodes
    prices = d.recourse_prices
    for j, t, usd in zip(prices["offer"], prices["pricing_model"], prices["usd_per_node_hour"], strict=True):
        m.price[(j, t)] = float(usd)
    for option in _records(d.commit_options):
        m.options.setdefault(option["offer"], []).append(option)
        m.used_rate[option["offer"]] = float(option["usd_per_node_hour_used"])  # one per offer (data._commit_options)
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
    uncapped pair k's placement allows be the one with the lowest price per accelerator of k's class (p_jm rho_kj /
    a_j; ties to the first offer by name): any use of a dearer pair is beaten by moving it there, and the move is
    cheaper in the budget too. Kept: that pair and capped pairs cheaper than it (useful up to their cap).
    At enterprise size this leaves out 230,400 of 562,350 columns (the objective and LP bound unchanged
    to the dollar), which HiGHS's presolve would otherwise remove after they had been built.
    """
    capped = {(c.offer, c.pricing_model) for c in rows(m.data.caps, Cap)}
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for k, routes in m.routes.items():
        placed = m.data.placed.get(m.key_parts[k][0])
        for group in SUBSTITUTES:
            pairs = sorted(
                (per_accelerator(m.price[(j, t)] * rho, m.offers[j]["accelerators_per_node"]), j, t)
                for j, rho in routes
                for t in group
                if (j, t) in m.price and (placed is None or (j, t) in placed)
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
    """x (integer starts), n (integer instances), y (TPU slices), u (used per key, offer and tier), z (unmet), in
    that column order."""
    d = m.data
    commits = [(j, opt, q) for j, opts in m.options.items() for opt in opts for q in d.quarters]
    columns = m.new_columns(
        [name("commit", m.offers[j]["site"], m.offers[j]["machine"], opt["option"], q) for j, opt, q in commits],
        0.0,
        # none starts in a quarter with no open day left (actuals.purchase_day)
        np.array([math.inf if d.purchase_day(q) < quarter_bounds(q)[1] else 0.0 for _, _, q in commits]),
        integer=True,
    )
    m.commit = {(j, opt["option"], q): c for (j, opt, q), c in zip(commits, columns.tolist(), strict=True)}
    _index_active(m, commits, columns)
    caps = {(c.offer, c.pricing_model): int(c.max_nodes) for c in rows(d.caps, Cap)}
    blocks = [(j, q) for j in m.offers if (j, PricingModel.CAPACITY_BLOCK) in m.price for q in d.quarters]
    columns = m.new_columns(
        [name("capacity_block_instances", m.offers[j]["site"], m.offers[j]["machine"], q) for j, q in blocks],
        0.0,
        np.array(
            [
                block_instances(caps.get((j, PricingModel.CAPACITY_BLOCK))) if d.block_weeks(q) else 0.0
                for j, q in blocks
            ]
        ),
        integer=True,
    )
    m.capacity_block = dict(zip(blocks, columns.tolist(), strict=True))
    u, use_names, use_upper = _use_columns(m)
    sliced_tier = np.array([[m.sliced(j, t) for t in TIERS] for j in m.offer_names], dtype=bool)
    sliced = np.flatnonzero(sliced_tier[u.group_offer, u.group_tier]).tolist()
    keys = [(m.offer_names[u.group_offer[g]], TIERS[u.group_tier[g]], *m.cells[u.group_cell[g]]) for g in sliced]
    columns = m.new_columns(
        [name("slices", m.offers[j]["site"], m.offers[j]["machine"], t, q, s, f"b{b}") for j, t, q, s, b in keys],
        0.0,
        np.array(
            [
                math.inf if (cap := caps.get((j, t))) is None else float(cap // m.offers[j]["nodes_per_unit"])
                for j, t, _, _, _ in keys
            ]
        ),
        integer=True,
    )
    m.slices = dict(zip(keys, columns.tolist(), strict=True))
    m.slice_group = np.array(sliced, dtype=np.int64)
    u.column = m.new_columns(use_names, 0.0, use_upper)
    m._u = u
    demand = m.demand
    demand.unmet = m.new_columns(
        [
            cell_name(("unmet", *m.key_parts[k]), *m.cells[c])
            for k, c in zip(demand.key, demand.cell.tolist(), strict=True)
        ],
        0.0,
        math.inf,
    )
    m.unmet = {
        (k, *m.cells[c]): z for k, c, z in zip(demand.key, demand.cell.tolist(), demand.unmet.tolist(), strict=True)
    }


def _index_active(m: PlanModel, commits: list[tuple[str, dict[str, Any], Quarter]], columns: Ints) -> None:
    """The terms of A^m_jq (PlanModel.active_terms): for each offer and quarter, the starts of each option whose term
    covers the quarter, g_j nodes each times the share a_oq'q of the quarter's open hours the term covers (1 for a
    term started on a quarter's first day, in each quarter it covers)."""
    d = m.data
    qs = d.quarters
    at, column, nodes, models = [], [], [], []
    for (j, opt, start), c in zip(commits, columns.tolist(), strict=True):
        first = qs.index(start)
        for q in range(first, min(len(qs), first + opt["term_quarters"] + 1)):
            share = d.active_share(start, opt["term_months"], qs[q])
            if share <= 0:
                continue
            at.append(m.offer_code[j] * len(qs) + q)
            column.append(c)
            nodes.append(float(m.offers[j]["nodes_per_unit"]) * share)
            models.append(str(opt["pricing_model"]))
    order = np.argsort(np.array(at, dtype=np.int64), kind="stable")
    starts = np.concatenate(
        ([0], np.cumsum(np.bincount(np.array(at, dtype=np.int64), minlength=len(m.offers) * len(qs))))
    )
    m._active = (
        starts,
        np.array(column, dtype=np.int64)[order],
        np.array(nodes)[order],
        [models[i] for i in order.tolist()],
    )


def _use_columns(m: PlanModel) -> tuple[UseColumns, list[str], Floats]:
    """The u columns (without their positions yet), their names and upper bounds, and the demand rows.

    For each demand row (k, q, s, b): the tiers of the offers on k's routes that may serve it (spot only where its
    spot share is above 0, no dominated pay-per-use pair, only the tiers of the flavors its team's placement allows:
    PlanData.placed), found once per key, quarter and whether spot may serve."""
    d = m.data
    key, cell, level, sigma = [], [], [], []
    cell_of = {c: i for i, c in enumerate(m.cells)}
    combos: dict[tuple[str, str, bool], int] = {}
    combo_of_row = []
    # candidates, flat: offer, tier, rho, a, the name's stem; combo_start[i]: where combo i's start
    c_offer, c_tier, c_rho, c_a, c_stem = [], [], [], [], []
    combo_start = [0]
    for r in rows(d.demand, Demand):
        k = r.demand_key
        share = m.spot_share[(k, r.quarter, r.scenario)]
        key.append(k)
        cell.append(cell_of[(r.quarter, r.scenario, int(r.bucket))])
        level.append(float(r.level))
        sigma.append(share)
        combo = (k, r.quarter, share > 0)
        if combo not in combos:
            combos[combo] = len(combos)
            placed = d.placed.get(r.team)
            for j, rho in m.routes.get(k, []):
                for t in m.tiers[(j, r.quarter)]:
                    if (
                        (t != "spot" or share > 0)
                        and (j, t) not in m.dominated.get(k, ())
                        and (placed is None or (j, t) in placed)
                    ):
                        c_offer.append(m.offer_code[j])
                        c_tier.append(TIERS.index(t))
                        c_rho.append(rho)
                        c_a.append(m.offers[j]["accelerators_per_node"])
                        c_stem.append(_stem("use", *m.key_parts[k], m.offers[j]["site"], m.offers[j]["machine"], t))
            combo_start.append(len(c_offer))
        combo_of_row.append(combos[combo])
    m._demand = DemandRows(
        key=key,
        cell=np.array(cell, dtype=np.int64),
        level=np.array(level),
        spot_share=np.array(sigma),
        unmet=np.zeros(0, dtype=np.int64),
    )
    starts = np.array(combo_start, dtype=np.int64)
    of_row = np.array(combo_of_row, dtype=np.int64)
    lengths = np.diff(starts)[of_row]
    candidate = np.repeat(starts[of_row], lengths) + ranges(lengths)
    demand_row = np.repeat(np.arange(len(of_row)), lengths)
    offer = np.array(c_offer, dtype=np.int64)[candidate]
    tier = np.array(c_tier, dtype=np.int64)[candidate]
    rho, a = np.array(c_rho)[candidate], np.array(c_a, dtype=float)[candidate]
    use_cell = m._demand.cell[demand_row]
    # groups (j, t, q, s, b), sorted as their names' parts sort
    rank = np.empty(len(m.cells), dtype=np.int64)
    rank[sorted(range(len(m.cells)), key=m.cells.__getitem__)] = np.arange(len(m.cells))
    keys = (offer * len(TIERS) + tier) * len(m.cells) + rank[use_cell]
    group_keys, group = np.unique(keys, return_inverse=True)
    by_rank = np.argsort(rank)
    cell_part = [_cell_part(*c) for c in m.cells]
    stem = np.array(c_stem, dtype=object)[candidate]
    names = [f"{s}__{cell_part[c]}" for s, c in zip(stem.tolist(), use_cell.tolist(), strict=True)]
    upper = np.full(len(names), math.inf)
    block = tier == TIERS.index(PricingModel.CAPACITY_BLOCK)
    share_of_cell = np.array([block_share(m, q) for q, _, _ in m.cells])
    upper[block] = share_of_cell[use_cell[block]] * m._demand.level[demand_row[block]] * rho[block] / a[block]
    u = UseColumns(
        column=np.zeros(0, dtype=np.int64),
        demand_row=demand_row,
        offer=offer,
        tier=tier,
        cell=use_cell,
        per_node=a / rho,
        by_group=np.argsort(group, kind="stable"),
        group_start=np.concatenate(([0], np.cumsum(np.bincount(group, minlength=len(group_keys))))),
        group_offer=group_keys // (len(TIERS) * len(m.cells)),
        group_tier=(group_keys // len(m.cells)) % len(TIERS),
        group_cell=by_rank[group_keys % len(m.cells)],
    )
    return u, names, upper


def _cell_hours(m: PlanModel) -> Floats:
    """pi_s w_qsb H_q of each cell (PlanModel.cells)."""
    return np.array([m.cell_hours[c] for c in m.cells])


def add_objective(m: PlanModel) -> None:
    """Expected cost: existing commitments (the constant), new commitments' whole liability, capacity blocks,
    pay-per-use, unmet demand, less the credit for new capacity after the horizon (its terms join in
    add_post_horizon_credit)."""
    d, u = m.data, m.u
    liability = []
    for (j, option, q), _ in m.commit.items():
        opt = next(o for o in m.options[j] if o["option"] == option)
        liability.append(
            m.offers[j]["nodes_per_unit"]
            * (
                float(opt["usd_per_node_hour"]) * term_hours(d.purchase_day(q), opt["term_months"])
                + float(opt["upfront_usd_per_node"])
            )
        )
    m.add_cost(np.array(list(m.commit.values()), dtype=np.int64), np.array(liability))
    m.add_cost(
        np.array(list(m.capacity_block.values()), dtype=np.int64),
        np.array(
            [HOURS_PER_WEEK * d.block_weeks(q) * m.price[(j, PricingModel.CAPACITY_BLOCK)] for j, q in m.capacity_block]
        ),
    )
    hours = _cell_hours(m)
    # u: the price of a pay-per-use tier bought by the node (not in slices), or the rate per hour used of new
    # commitments
    rate_of = np.zeros((len(m.offer_names), len(TIERS)))
    for at, offer in enumerate(m.offer_names):
        for t, tier in enumerate(TIERS):
            if tier in PAY_PER_USE and tier != PricingModel.CAPACITY_BLOCK and not m.sliced(offer, tier):
                rate_of[at, t] = m.price.get((offer, tier), 0.0)
            elif tier == NEW:
                rate_of[at, t] = m.used_rate.get(offer, 0.0)
    rate = rate_of[u.offer, u.tier]
    priced = rate != 0
    m.add_cost(u.column[priced], hours[u.cell[priced]] * rate[priced])
    slice_cost = [
        m.expected_hours((q, s, b)) * m.price[(j, t)] * m.offers[j]["nodes_per_unit"] for j, t, q, s, b in m.slices
    ]
    m.add_cost(np.array(list(m.slices.values()), dtype=np.int64), np.array(slice_cost))
    m.add_cost(m.demand.unmet, hours[m.demand.cell] * d.unmet_penalty)


def _slack(m: PlanModel, key: tuple[str, ...], cost: float) -> int:
    """A named, penalised slack column (explain-infeasible mode); its cost joins the objective."""
    column = m.slack[key] = m.new_column(name(*key))
    m.add_cost(np.array([column]), cost)
    return column


def _groups(m: PlanModel, tier: str) -> Ints:
    """The groups of u columns (j, t, q, s, b) of one tier, sorted."""
    return np.flatnonzero(m.u.group_tier == TIERS.index(tier))


def _group_names(m: PlanModel, family: str, groups: Ints) -> list[str]:
    """`<family>__<site>__<machine>__<q>__<s>__b<b>` for each group."""
    u = m.u
    stems = [_stem(family, m.offers[j]["site"], m.offers[j]["machine"]) for j in m.offer_names]
    cells = [_cell_part(*c) for c in m.cells]
    offers, cell = u.group_offer[groups].tolist(), u.group_cell[groups].tolist()
    return [f"{stems[j]}__{cells[c]}" for j, c in zip(offers, cell, strict=True)]


def add_demand_met(m: PlanModel) -> None:
    """demand_met: every bucket of every key's demand is served somewhere it may run, or reported unmet."""
    u, demand = m.u, m.demand
    names = [
        cell_name(("demand_met", *m.key_parts[k]), *m.cells[c])
        for k, c in zip(demand.key, demand.cell.tolist(), strict=True)
    ]
    every = np.arange(len(names))
    m.add_rows(
        "demand_met", names, "=", demand.level, [(u.demand_row, u.column, u.per_node), (every, demand.unmet, 1.0)]
    )


def add_existing_commitments_cover(m: PlanModel) -> None:
    """existing_commitments_cover: existing commitments serve at most their (average active) nodes."""
    groups = _groups(m, EXISTING)
    u = m.u
    nodes = [
        m.existing_nodes[(m.offer_names[j], m.cells[c][0])]
        for j, c in zip(u.group_offer[groups].tolist(), u.group_cell[groups].tolist(), strict=True)
    ]
    row, column = u.group_terms(groups)
    m.add_rows(
        "existing_commitments_cover",
        _group_names(m, "existing_commitments_cover", groups),
        "<=",
        np.array(nodes),
        [(row, column, 1.0)],
    )


def _quarter_index(m: PlanModel, cells: Ints) -> Ints:
    index = {q: i for i, q in enumerate(m.data.quarters)}
    return np.array([index[q] for q, _, _ in m.cells], dtype=np.int64)[cells]


def add_new_commitments_cover(m: PlanModel) -> None:
    """new_commitments_cover: new commitments serve at most the nodes whose term covers the quarter.

    A^m_jq is written out in every scenario and bucket's row: an auxiliary column A_jq with one defining
    row per quarter has fewer nonzeros but made the LP relaxation slower at enterprise size (31 s against
    21 s, bench/planner_bench.py).
    """
    groups = _groups(m, NEW)
    u = m.u
    row, column = u.group_terms(groups)
    active = m.active_terms(u.group_offer[groups], _quarter_index(m, u.group_cell[groups]), times=-1.0)
    m.add_rows(
        "new_commitments_cover",
        _group_names(m, "new_commitments_cover", groups),
        "<=",
        0.0,
        [(row, column, 1.0), active],
    )


def add_capacity_block_window(m: PlanModel) -> None:
    """capacity_block_window: a capacity block's instances serve each bucket only in the share of its hours that
    their window covers (the quarter has no calendar: the window's hours look like the quarter's); each key's part
    is bounded the same way, on its column (add_variables)."""
    groups = _groups(m, PricingModel.CAPACITY_BLOCK)
    u = m.u
    row, column = u.group_terms(groups)
    blocks, shares = [], []
    for j, c in zip(u.group_offer[groups].tolist(), u.group_cell[groups].tolist(), strict=True):
        q = m.cells[c][0]
        blocks.append(m.capacity_block[(m.offer_names[j], q)])
        shares.append(-block_share(m, q))
    m.add_rows(
        "capacity_block_window",
        _group_names(m, "capacity_block_window", groups),
        "<=",
        0.0,
        [(row, column, 1.0), (np.arange(len(groups)), np.array(blocks, dtype=np.int64), np.array(shares))],
    )


def block_share(m: PlanModel, q: Quarter) -> float:
    """f_q: the share of quarter q's (open) hours that its capacity block's window covers."""
    return HOURS_PER_WEEK * m.data.block_weeks(q) / m.data.hours[q]


def block_instances(cap: int | None) -> int:
    """The most instances of one capacity block at an offer: 64, or its supply cap if lower."""
    return CAPACITY_BLOCK_MAX_INSTANCES if cap is None else min(cap, CAPACITY_BLOCK_MAX_INSTANCES)


def add_whole_slices_cover(m: PlanModel) -> None:
    """whole_slices_cover: pay-per-use TPU nodes come in whole slices; the keys served there share them."""
    row, column = m.u.group_terms(m.slice_group)
    names, nodes = [], []
    for j, t, q, s, b in m.slices:
        o = m.offers[j]
        names.append(name("whole_slices_cover", o["site"], o["machine"], t, q, s, f"b{b}"))
        nodes.append(-float(o["nodes_per_unit"]))
    slices = np.array(list(m.slices.values()), dtype=np.int64)
    m.add_rows(
        "whole_slices_cover", names, "<=", 0.0, [(row, column, 1.0), (np.arange(len(names)), slices, np.array(nodes))]
    )


def add_spot_within_preemptible_share(m: PlanModel) -> None:
    """spot_within_preemptible_share: spot serves only the share of a key's served demand that tolerates preemption.

    Served = D - z, so the row reads spot + sigma z <= sigma D. Keys with sigma = 0 have no spot variables
    (a domain, not a row); with sigma = 1 the rule cannot bind and no row is written.
    """
    u, demand = m.u, m.demand
    spot = u.tier == TIERS.index(PricingModel.SPOT)
    has_spot = np.zeros(len(demand.key), dtype=bool)
    has_spot[u.demand_row[spot]] = True
    ruled = np.flatnonzero(has_spot & (demand.spot_share < 1))
    row_of = np.full(len(demand.key), -1, dtype=np.int64)
    row_of[ruled] = np.arange(len(ruled))
    spot &= row_of[u.demand_row] >= 0
    sigma = demand.spot_share[ruled]
    names = [
        cell_name(("spot_within_preemptible_share", *m.key_parts[demand.key[r]]), *m.cells[demand.cell[r]])
        for r in ruled.tolist()
    ]
    m.add_rows(
        "spot_within_preemptible_share",
        names,
        "<=",
        sigma * demand.level[ruled],
        [
            (row_of[u.demand_row[spot]], u.column[spot], u.per_node[spot]),
            (np.arange(len(ruled)), demand.unmet[ruled], sigma),
        ],
    )


def add_supply_caps(m: PlanModel) -> None:
    """supply_cap: the most nodes obtainable per offer and pricing model (Site.supply_caps)."""
    d, u = m.data, m.u
    explain = d.options.explain_infeasible
    for cap in rows(d.caps, Cap):
        j, model = cap.offer, cap.pricing_model
        o = m.offers[j]
        if model in PAY_PER_USE:
            if m.sliced(j, model):  # a bound on the whole slices y
                continue
            groups = np.flatnonzero((u.group_offer == m.offer_code[j]) & (u.group_tier == TIERS.index(model)))
            groups = groups[np.argsort(u.group_cell[groups], kind="stable")]  # in the order of the cells
            if len(groups):
                row, column = u.group_terms(groups)
                names = [
                    name("supply_cap", o["site"], o["machine"], model, *_cell(m.cells[c]))
                    for c in u.group_cell[groups].tolist()
                ]
                m.add_rows("supply_cap", names, "<=", float(cap.max_nodes), [(row, column, 1.0)])
            continue
        for q in d.quarters:
            fixed = m.existing_nodes_by_model.get((j, model, q), 0.0)
            columns, coefficients = m.active_new(j, q, model)
            if not columns and fixed == 0:
                continue
            if explain:
                columns.append(
                    _slack(
                        m,
                        ("supply_cap_excess", o["site"], o["machine"], model, q),
                        CAP_EXCESS_PENALTY_HOURS * d.unmet_penalty * d.hours[q],
                    )
                )
                coefficients.append(-1.0)
            m.add_row(
                "supply_cap",
                name("supply_cap", o["site"], o["machine"], model, q),
                "<=",
                float(cap.max_nodes) - fixed,
                columns,
                coefficients,
            )


def _cell(cell: Cell) -> tuple[Quarter, str, str]:
    q, s, b = cell
    return q, s, f"b{b}"


def add_budgets(m: PlanModel) -> None:
    """budget: a cost centre's expected charge in a quarter stays within its budget."""
    d, u, demand = m.data, m.u, m.demand
    budgets = list(rows(d.budgets, Budget))
    row_of = {(b.cost_center, b.quarter): i for i, b in enumerate(budgets)}
    quarter = _quarter_index(m, np.arange(len(m.cells)))
    row_of_demand = np.array(
        [
            row_of.get((m.cost_center[k], d.quarters[quarter[c]]), -1)
            for k, c in zip(demand.key, demand.cell.tolist(), strict=True)
        ],
        dtype=np.int64,
    )
    in_row = row_of_demand[u.demand_row]
    charged = np.flatnonzero(in_row >= 0)
    nq = len(d.quarters)
    combos, at = np.unique(
        (u.offer[charged] * len(TIERS) + u.tier[charged]) * nq + _quarter_index(m, u.cell[charged]), return_inverse=True
    )
    rate = np.array(
        [
            m.charge_per_node_hour(
                m.offer_names[c // (len(TIERS) * nq)], TIERS[(c // nq) % len(TIERS)], d.quarters[c % nq]
            )
            for c in combos.tolist()
        ]
    )[at]
    terms: list[Terms] = [(in_row[charged], u.column[charged], _cell_hours(m)[u.cell[charged]] * rate)]
    if d.options.explain_infeasible:
        slacks = [_slack(m, ("budget_overrun", b.cost_center, b.quarter), OVERRUN_PENALTY) for b in budgets]
        terms.append((np.arange(len(budgets)), np.array(slacks, dtype=np.int64), -1.0))
    closed = d.closed.groupby(["cost_center", "quarter"])["usd"].sum()  # what the closed part has spent
    m.add_rows(
        "budget",
        [name("budget", b.cost_center, b.quarter) for b in budgets],
        "<=",
        np.array([float(b.usd) - float(closed.get((b.cost_center, b.quarter), 0)) for b in budgets]),
        terms,
    )


def add_min_utilisation(m: PlanModel) -> None:
    """min_utilisation: new commitments are expected to be busy at least theta of their hours."""
    d, u = m.data, m.u
    theta = d.options.min_utilisation
    if not theta:
        return
    new = np.flatnonzero(u.tier == TIERS.index(NEW))
    quarter = _quarter_index(m, u.cell[new])
    rank = np.argsort(np.argsort(np.array(d.quarters), kind="stable"))  # the quarters as their names sort
    pairs, row = np.unique(u.offer[new] * len(d.quarters) + rank[quarter], return_inverse=True)
    by_rank = np.argsort(rank)
    offers = [m.offer_names[p // len(d.quarters)] for p in pairs.tolist()]
    quarters = [d.quarters[by_rank[p % len(d.quarters)]] for p in pairs.tolist()]
    weight = np.array([d.scenarios[s] * m.weight[(q, s, b)] for q, s, b in m.cells])
    terms: list[Terms] = [
        (row, u.column[new], weight[u.cell[new]]),
        m.active_terms(pairs // len(d.quarters), by_rank[pairs % len(d.quarters)], times=-theta),
    ]
    if d.options.explain_infeasible:
        slacks = [
            _slack(
                m,
                ("utilisation_shortfall", m.offers[j]["site"], m.offers[j]["machine"], q),
                SHORTFALL_PENALTY * d.unmet_penalty * d.hours[q],
            )
            for j, q in zip(offers, quarters, strict=True)
        ]
        terms.append((np.arange(len(slacks)), np.array(slacks, dtype=np.int64), 1.0))
    names = [
        name("min_utilisation", m.offers[j]["site"], m.offers[j]["machine"], q)
        for j, q in zip(offers, quarters, strict=True)
    ]
    m.add_rows("min_utilisation", names, ">=", 0.0, terms)


def add_post_horizon_credit(m: PlanModel) -> None:
    """last_quarter_new_use, post_horizon_credit_within_demand and _within_renewal: new capacity left after the
    horizon is credited at the on-demand cost it avoids, as far as demand uses it, and at most its renewal.

    One credit per offer and later quarter, bounded by two rows, rather than one per scenario and bucket, which at
    medium size (bench/planner_bench.py) adds 33,000 columns and 66,000 rows and takes four times the time.
    """
    d, u = m.data, m.u
    last = d.quarters[-1]
    ratio = (
        {}
        if d.tail_ratio is None
        else dict(
            zip(
                zip(d.tail_ratio["offer"], d.tail_ratio["quarter"], strict=True),
                map(float, d.tail_ratio["ratio"]),
                strict=True,
            )
        )
    )
    for j in m.options:
        m.last_use[j] = m.new_column(name("last_quarter_new_use", m.offers[j]["site"], m.offers[j]["machine"]))
    # the u of new commitments in the last quarter, by offer, then cell (in the order of the cells), then key
    weight = np.array([d.scenarios[s] * m.weight[(q, s, b)] for q, s, b in m.cells])
    in_last = np.array([q == last for q, _, _ in m.cells])
    used = np.flatnonzero((u.tier == TIERS.index(NEW)) & in_last[u.cell])
    used = used[np.lexsort((u.cell[used], u.offer[used]))]
    bounds = np.searchsorted(u.offer[used], np.arange(len(m.offer_names) + 1))
    # the rows, in order: each offer's last_quarter_new_use, then its two credit rows per later quarter
    families: list[str] = []
    names: list[str] = []
    row: list[int] = []
    column: list[int] = []
    coefficient: list[float] = []

    def add(family: str, row_name: str, columns: list[int], coefficients: list[float]) -> None:
        row.extend([len(names)] * len(columns))
        families.append(family)
        names.append(row_name)
        column.extend(columns)
        coefficient.extend(coefficients)

    for j, opts in m.options.items():
        o = m.offers[j]
        where = (o["site"], o["machine"])
        use = m.last_use[j]
        mine = used[bounds[m.offer_code[j]] : bounds[m.offer_code[j] + 1]]
        add(
            "last_quarter_new_use",
            name("last_quarter_new_use", *where),
            [use, *u.column[mine].tolist()],
            [1.0, *(-weight[u.cell[mine]]).tolist()],
        )
        for q in m.tail_quarters:
            starts = [  # the new nodes active in q: all of a start's nodes whose term covers q, a share of them
                # whose term ends inside it (a start in the quarter in progress, from its first open day)
                (m.commit[(j, opt["option"], start)], float(o["nodes_per_unit"]) * share)
                for opt in opts
                for start in d.quarters
                if (share := d.active_share(start, opt["term_months"], q)) > 0
            ]
            if not starts:
                continue
            credit = m.tail_credit[(j, q)] = m.new_column(name("post_horizon_credit", *where, q))
            m.add_cost(np.array([credit]), -d.credit_share)
            hours = quarter_hours(q)
            worth = hours * max(0.0, m.avoided_price[j] - m.used_rate[j]) * ratio.get((j, q), 1.0)
            add(
                "post_horizon_credit_within_demand",
                name("post_horizon_credit_within_demand", *where, q),
                [credit, use],
                [1.0, -worth],
            )
            renewal = -hours * (m.charge_rate[(j, NEW, last)] - m.used_rate[j])
            add(
                "post_horizon_credit_within_renewal",
                name("post_horizon_credit_within_renewal", *where, q),
                [credit, *(x for x, _ in starts)],
                [1.0, *(renewal * g for _, g in starts)],
            )
    terms = (np.array(row, dtype=np.int64), np.array(column, dtype=np.int64), np.array(coefficient))
    m.add_rows(families, names, "<=", 0.0, [terms])


def add_quota_within_kueue_limits(m: PlanModel) -> None:
    """quota_within_nominal_and_borrowing, lent_within_unused_quota and borrowed_within_lent: in the plan's first
    quarter a team runs on a flavor at most what Kueue admits under today's quotas (PlanData.quota_holders): its
    nominal quota, and beyond it what it borrows, within its borrowing limit, from what the rest of its cohort tree
    lends out of its unused nominal quota, within each lending limit. Later quarters run on the quotas the plan
    proposes (proposed_quotas). Under placement `anywhere` there are no rows (PlanData.quota_holders is empty).

    A flavor here is the pools of an offer that serve the same tiers (placement.flavors), joined where a pool serves
    several tiers (a reservation pool serves existing, new and on-demand hours): one quota covers them all.
    """
    d, u, demand = m.data, m.u, m.demand
    first = d.quarters[0]
    cells = [i for i, (q, _, _) in enumerate(m.cells) if q == first]
    if not d.quota_holders or not cells:
        return
    group = _pool_groups(d.flavors)
    limited = {t for t, placed in d.placed.items() if placed is not None}
    # each member's quota per group: nominal, borrowing limit (None = none), lendable; and its cohort tree's root
    quota: dict[tuple[str, tuple[str, ...]], list[float]] = {}
    root_of: dict[str, str] = {}
    for h in d.quota_holders:
        root_of[h.member] = h.root
        if h.pool not in group:
            continue
        got = quota.setdefault((h.member, group[h.pool]), [0.0, 0.0, 0.0])
        got[0] += h.nominal
        got[1] += math.inf if h.borrowing_limit is None else h.borrowing_limit
        got[2] += h.lending_limit
    in_first = np.zeros(len(m.cells), dtype=bool)
    in_first[cells] = True
    team_of_row = np.array([m.key_parts[k][0] for k in demand.key], dtype=object)
    chosen = np.flatnonzero(in_first[u.cell])
    # the u columns of the first quarter by (team, group, cell)
    use: dict[tuple[str, tuple[str, ...], int], tuple[list[int], list[float]]] = {}
    for i in chosen.tolist():
        team = str(team_of_row[u.demand_row[i]])
        j, t = m.offer_names[u.offer[i]], TIERS[u.tier[i]]
        pools = d.flavors.get((j, t))
        if team not in limited or not pools:
            continue
        columns, coefficients = use.setdefault((team, group[pools[0]], int(u.cell[i])), ([], []))
        columns.append(int(u.column[i]))
        coefficients.append(float(m.offers[j]["accelerators_per_node"]))
    trees: dict[tuple[str, tuple[str, ...], int], tuple[list[int], list[int]]] = {}  # borrowed, lent columns
    names: list[str] = []
    families: list[str] = []
    row: list[int] = []
    column: list[int] = []
    coefficient: list[float] = []
    rhs: list[float] = []

    def add(family: str, row_name: str, terms: list[tuple[int, float]], bound: float) -> None:
        row.extend([len(names)] * len(terms))
        column.extend(c for c, _ in terms)
        coefficient.extend(x for _, x in terms)
        names.append(row_name)
        families.append(family)
        rhs.append(bound)

    members = sorted({(member, g) for member, g in quota} | {(team, g) for team, g, _ in use})
    for member, g in members:
        nominal, borrowing, lending = quota.get((member, g), (0.0, math.inf, 0.0))
        root = root_of.get(member, "")
        for c in cells:
            where = (member, g[0], *_cell(m.cells[c]))
            used = list(zip(*use.get((member, g, c), ([], [])), strict=True))
            if root and borrowing > 0:
                borrowed = m.new_column(name("borrowed", *where), borrowing)
                trees.setdefault((root, g, c), ([], []))[0].append(borrowed)
                used.append((borrowed, -1.0))
            if used:
                add(
                    "quota_within_nominal_and_borrowing",
                    name("quota_within_nominal_and_borrowing", *where),
                    used,
                    nominal,
                )
            if root and lending > 0:
                lent = m.new_column(name("lent", *where), lending)
                trees.setdefault((root, g, c), ([], []))[1].append(lent)
                if used:
                    add(
                        "lent_within_unused_quota",
                        name("lent_within_unused_quota", *where),
                        [(lent, 1.0), *used],
                        nominal,
                    )
    for (root, g, c), (borrowers, lenders) in sorted(trees.items()):
        if borrowers:
            net = [(b, 1.0) for b in borrowers] + [(x, -1.0) for x in lenders]
            add("borrowed_within_lent", name("borrowed_within_lent", root, g[0], *_cell(m.cells[c])), net, 0.0)
    if names:
        terms = (np.array(row, dtype=np.int64), np.array(column, dtype=np.int64), np.array(coefficient))
        m.add_rows(families, names, "<=", np.array(rhs), [terms])


def _pool_groups(flavors: dict[tuple[str, str], tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """pool -> its group: the pools joined by the tiers they serve together (placement.flavors), sorted."""
    parent: dict[str, str] = {}

    def find(p: str) -> str:
        while parent.setdefault(p, p) != p:
            p = parent[p]
        return p

    for pools in flavors.values():
        for p in pools[1:]:
            parent[find(p)] = find(pools[0])
        find(pools[0])
    groups: dict[str, list[str]] = defaultdict(list)
    for p in sorted(parent):
        groups[find(p)].append(p)
    return {p: tuple(ps) for ps in groups.values() for p in ps}


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
    "quota_within_nominal_and_borrowing": add_quota_within_kueue_limits,
    "lent_within_unused_quota": add_quota_within_kueue_limits,
    "borrowed_within_lent": add_quota_within_kueue_limits,
    "last_quarter_new_use": add_post_horizon_credit,
    "post_horizon_credit_within_demand": add_post_horizon_credit,
    "post_horizon_credit_within_renewal": add_post_horizon_credit,
}
"""The constraint families, in build order: each row's name starts with its family, and the function that adds it.
build_model runs each function once; the golden LP files, --explain-infeasible and the maths page
(planner/maths.py, docs/explanation/planner-maths.md) read this table."""
FAMILY_NAMES = tuple(FAMILIES)
"""The families by position (LinearProgram.row_family)."""


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
