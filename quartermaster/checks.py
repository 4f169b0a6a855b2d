"""Cross-object checks: small named rules in one registry, each returning every problem it finds.

A check is `check_<rule>(inventory) -> list[Issue]`, registered with its name and severity by the
`@rule` decorator. Issues carry a logical reference (`ref`); the loader turns it into file:line.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from quartermaster.capacity import flavor_capacity, pool_max_nodes
from quartermaster.catalog import UnknownAccelerator, canonical_accelerator, reserved_namespaces
from quartermaster.issues import Issue, Ref, Severity, did_you_mean
from quartermaster.model import Inventory, Team
from quartermaster.names import ClusterKind
from quartermaster.pricing import (
    PricingModel,
    Provisioning,
    cents,
    format_usd,
    missing_prices,
    onprem_capital_per_node,
    onprem_split,
)
from quartermaster.providers import provider_of, provider_of_cloud, providers

CheckFn = Callable[[Inventory], list[Issue]]


@dataclass(frozen=True)
class Rule:
    """A registered check."""

    name: str
    severity: Severity
    summary: str
    fn: CheckFn


RULES: list[Rule] = []


def rule(name: str, summary: str, severity: Severity = "error") -> Callable[[CheckFn], CheckFn]:
    """Register a check under `name`; its issues get that rule name and, by default, that severity."""

    def register(fn: CheckFn) -> CheckFn:
        RULES.append(Rule(name, severity, summary, fn))
        return fn

    return register


def run_checks(inventory: Inventory) -> list[Issue]:
    """Every issue of every registered rule (never stops at the first)."""
    found: list[Issue] = []
    for r in RULES:
        for issue in r.fn(inventory):
            severity = "warning" if r.severity == "warning" else issue.severity
            found.append(replace(issue, rule=r.name, severity=severity))
    return found


def _issue(
    message: str,
    fix: str,
    ref: Ref,
    got: object = None,
    about: Iterable[tuple[str, str]] = (),
    severity: Severity = "error",
) -> Issue:
    """An issue of the running rule (run_checks fills in the rule name)."""
    issue = Issue(rule="", message=message, fix=fix, ref=ref, about=tuple(about), severity=severity)
    return issue if got is None else replace(issue, got=got)


ANY_TEAM = ("teams", "*")
"""`about` of an issue that any team may answer: dropped when a team failed to load (its error says enough)."""


def _unknown(kind: str, name: str, known: Iterable[str], ref: Ref, section: str) -> Issue:
    hint = did_you_mean(name, known)
    fix = hint or f"Define {kind} `{name}` or use an existing one."
    return _issue(f"no such {kind} `{name}`", fix, ref, about=[(section, name)])


# --- names -----------------------------------------------------------------------------------------


# Provisioning modes that consume a commitment.
COMMITTED_PROVISIONING = (Provisioning.RESERVATION, Provisioning.CAPACITY_BLOCK)


class _Named(Protocol):
    @property
    def name(self) -> str: ...


@rule("unique-names", "every object has a name that no other object of its kind has")
def check_unique_names(inv: Inventory) -> list[Issue]:
    out = []
    sections: list[tuple[str, Sequence[_Named]]] = [
        ("sites", inv.sites),
        ("clusters", inv.clusters),
        ("pools", inv.pools),
        ("commitments", inv.commitments),
        ("teams", inv.teams),
        ("cohorts", inv.cohorts),
        ("priority_classes", inv.priority_classes),
        ("machines", inv.machines),
    ]
    for section, objects in sections:
        counts = Counter(o.name for o in objects)
        for name, n in sorted(counts.items()):
            if n > 1:
                out.append(
                    _issue(f"{n} {section} are named `{name}`", "Give each one its own name.", (section, name, "name"))
                )
    owner: dict[str, str] = {}
    for team in inv.teams:
        for i, ns in enumerate(team.namespaces):
            if ns in owner and owner[ns] != team.name:
                out.append(
                    _issue(
                        f"namespace `{ns}` already belongs to team `{owner[ns]}`",
                        "A namespace belongs to one team; remove it from one of them.",
                        ("teams", team.name, "namespaces", i),
                    )
                )
            owner.setdefault(ns, team.name)
    return out


def _twice(keys: Iterable[tuple[Ref, str | tuple[object, ...]]], what: str) -> list[Issue]:
    """One issue per repeated key among (where, key) pairs, at the repeat, naming where the first is (`first`)."""
    first: dict[object, Ref] = {}
    out = []
    for ref, key in keys:
        if key in first:
            shown = key if isinstance(key, str) else ", ".join(str(k) for k in key if k is not None)
            issue = _issue(f"{what} `{shown}` is listed twice", "Keep one of them (merge their values).", ref)
            out.append(replace(issue, first=first[key]))
        else:
            first[key] = ref
    return out


@rule("unique-keys", "no list or CSV of the inventory holds the same key twice")
def check_unique_keys(inv: Inventory) -> list[Issue]:
    """A key twice in a list or CSV is ambiguous (the first price row won, a budget twice broke the solve,
    a demand row twice changed the plan silently): refused, with both places."""
    p = inv.policy
    out = _twice(
        ((("prices", i), (r.machine, r.site, r.pricing_model, r.term_months)) for i, r in enumerate(inv.prices)),
        "price (machine, site, pricing model, term)",
    )
    out += _twice(
        ((("demand", i), (r.period, r.team, r.accelerator, r.site, r.scenario)) for i, r in enumerate(inv.demand)),
        "demand row (period, team, accelerator, site, scenario)",
    )
    out += _twice(
        ((("policy", "budgets", i), (b.cost_center, b.quarter)) for i, b in enumerate(p.budgets)),
        "budget (cost centre, quarter)",
    )
    out += _twice(((("policy", "scenarios", i), s.name) for i, s in enumerate(p.scenarios)), "scenario")
    out += _twice(((("policy", "finance_approvers", i), o) for i, o in enumerate(p.finance_approvers)), "approver")
    out += _twice(((("policy", "system_namespaces", i), n) for i, n in enumerate(p.system_namespaces)), "namespace")
    for site in inv.sites:
        out += _twice(((("sites", site.name, "zones", i), z) for i, z in enumerate(site.zones)), "zone")
        out += _twice(
            (
                (("sites", site.name, "supply_caps", i), (c.machine, c.pricing_model))
                for i, c in enumerate(site.supply_caps)
            ),
            "supply cap (machine, pricing model)",
        )
    for c in inv.clusters:
        out += _twice(
            ((("clusters", c.name, "multikueue_workers", i), w) for i, w in enumerate(c.multikueue_workers)), "worker"
        )
    for pool in inv.pools:
        out += _twice(((("pools", pool.name, "zones", i), z) for i, z in enumerate(pool.zones)), "zone")
        out += _twice(
            ((("pools", pool.name, "taints", i), (t.key, t.effect)) for i, t in enumerate(pool.taints)),
            "taint (key, effect)",
        )
    for t in inv.teams:
        out += _twice(((("teams", t.name, "sites", i), site) for i, site in enumerate(t.sites)), "site")
    for m in inv.machines:
        out += _twice(
            ((("machines", m.name, "tpu_topologies", i), x) for i, x in enumerate(m.tpu_topologies)), "topology"
        )
    return out


SYSTEM_GROUP_PREFIX = "system:"


def reserved_namespace_owners(inv: Inventory) -> list[tuple[str, str]]:
    """(pattern, whose) of every namespace a team may never use: the catalog's list (`reserved_namespaces.csv`:
    Kubernetes, Kueue, Quartermaster's observability default and the platform add-ons, with sources), each
    cluster's own `observability.namespace`, and `policy.system_namespaces`."""
    return [
        *((r.pattern, r.owner) for r in reserved_namespaces()),
        *((c.observability.namespace, f"the observability namespace of cluster {c.name}") for c in inv.clusters),
        *((p, "policy.system_namespaces") for p in inv.policy.system_namespaces),
    ]


@rule("tenancy", "teams use only their own namespaces and non-system groups")
def check_tenancy(inv: Inventory) -> list[Issue]:
    out = []
    owners = reserved_namespace_owners(inv)
    for team in inv.teams:
        seen: set[str] = set()
        for i, ns in enumerate(team.namespaces):
            ref: Ref = ("teams", team.name, "namespaces", i)
            owner = next((who for pattern, who in owners if fnmatch.fnmatchcase(ns, pattern)), None)
            if owner is not None:
                out.append(
                    _issue(
                        f"namespace `{ns}` is reserved ({owner}); a team's workloads and RBAC must never live there",
                        f"Use a namespace of the team's own, e.g. `{team.name}`.",
                        ref,
                        got=ns,
                    )
                )
            if ns in seen:
                out.append(_issue(f"namespace `{ns}` is listed twice", "List each namespace once.", ref, got=ns))
            seen.add(ns)
        named = [
            (("teams", team.name, "group"), team.group),
            *((("teams", team.name, "groups", kind), group) for kind, group in team.groups.items()),
        ]
        for where, group in named:
            if group is not None and group.startswith(SYSTEM_GROUP_PREFIX):
                out.append(
                    _issue(
                        f"group `{group}` is a Kubernetes system group (every authenticated user, node "
                        "or service account); binding the team's role to it gives the role to all of them",
                        "Name the identity-provider group of the team's members, or remove it to use the team name.",
                        where,
                        got=group,
                    )
                )
    return out


@rule("rbac-subjects", "a team's RBAC group is named as each platform it runs on names groups")
def check_rbac_subjects(inv: Inventory) -> list[Issue]:
    out = []
    for team in inv.teams:
        for kind in sorted(_cluster_kinds_of(inv, team)):
            rbac = provider_of(kind).rbac_group_pattern
            group = team.rbac_group(kind)
            if rbac is not None and not re.fullmatch(rbac[0], group):
                title = provider_of(kind).title
                out.append(
                    _issue(
                        f"on {title} the team's RoleBindings name the group `{group}`, which "
                        f"{title} never matches: it needs {rbac[1]}, so the role would grant nobody",
                        f"Set `groups: {{{kind}: ...}}` on the team.",
                        ("teams", team.name, "name"),
                        got=group,
                        severity="warning",
                    )
                )
    return out


def _cluster_kinds_of(inv: Inventory, team: Team) -> set[ClusterKind]:
    """Kinds of the clusters where the team gets RBAC: those whose pools it has quota in, and their managers."""
    pools = {q.flavor for q in team.quotas}
    hosts = {c.name for c in inv.clusters if any(p.name in pools for p in c.pools)}
    return {c.kind for c in inv.clusters if c.name in hosts or set(c.multikueue_workers) & hosts}


@rule("derived-names", "names derived from inventory names fit Kubernetes and cloud limits")
def check_derived_names(inv: Inventory) -> list[Issue]:
    out = []
    for pool in inv.pools:
        out += provider_of(inv.cluster_of_pool[pool.name].kind).pool_name_issues(pool)
        if pool.tpu is not None and pool.tpu.slices > 1:
            longest = f"{pool.name}-{pool.tpu.slices - 1}"
            if len(longest) > 40:
                out.append(
                    _issue(
                        f"slice node pool name `{longest}` is longer than GKE's 40 characters",
                        f"Shorten the pool name to at most {40 - len(str(pool.tpu.slices - 1)) - 1} characters.",
                        ("pools", pool.name, "name"),
                        got=len(longest),
                    )
                )
    return out


# --- references ------------------------------------------------------------------------------------


@rule("references", "every reference by name resolves")
def check_references(inv: Inventory) -> list[Issue]:
    return [
        *_cluster_references(inv),
        *_commitment_references(inv),
        *_team_references(inv),
        *_cohort_references(inv),
        *_cost_centre_references(inv),
        *_row_references(inv),
    ]


def _cluster_references(inv: Inventory) -> list[Issue]:
    """A cluster's site and MultiKueue workers, its pools' machines and commitments."""
    out = []
    for c in inv.clusters:
        if c.site not in inv.site_by_name:
            out.append(_unknown("site", c.site, inv.site_by_name, ("clusters", c.name, "site"), "sites"))
        for w in c.multikueue_workers:
            if w not in inv.cluster_by_name:
                out.append(
                    _unknown("cluster", w, inv.cluster_by_name, ("clusters", c.name, "multikueue_workers"), "clusters")
                )
        for p in c.pools:
            if p.machine not in inv.machine_by_name:
                out.append(
                    _unknown("machine", p.machine, inv.machine_by_name, ("pools", p.name, "machine"), "machines")
                )
            if p.commitment is not None and p.commitment not in inv.commitment_by_name:
                out.append(
                    _unknown(
                        "commitment",
                        p.commitment,
                        inv.commitment_by_name,
                        ("pools", p.name, "commitment"),
                        "commitments",
                    )
                )
    return out


def _commitment_references(inv: Inventory) -> list[Issue]:
    """A commitment's machine and site."""
    out = []
    for cm in inv.commitments:
        if cm.machine not in inv.machine_by_name:
            out.append(
                _unknown("machine", cm.machine, inv.machine_by_name, ("commitments", cm.name, "machine"), "machines")
            )
        if cm.site not in inv.site_by_name:
            out.append(_unknown("site", cm.site, inv.site_by_name, ("commitments", cm.name, "site"), "sites"))
    return out


def _team_references(inv: Inventory) -> list[Issue]:
    """A team's cohort, priority class, sites and quota flavors (one quota per flavor)."""
    out = []
    for t in inv.teams:
        if t.cohort is not None and t.cohort not in inv.cohort_by_name:
            out.append(_unknown("cohort", t.cohort, inv.cohort_by_name, ("teams", t.name, "cohort"), "cohorts"))
        if t.priority_class is not None and t.priority_class not in inv.priority_class_by_name:
            out.append(
                _unknown(
                    "priority class",
                    t.priority_class,
                    inv.priority_class_by_name,
                    ("teams", t.name, "priority_class"),
                    "priority_classes",
                )
            )
        for i, site in enumerate(t.sites):
            if site not in inv.site_by_name:
                out.append(_unknown("site", site, inv.site_by_name, ("teams", t.name, "sites", i), "sites"))
        seen: set[str] = set()
        for i, q in enumerate(t.quotas):
            if q.flavor not in inv.pool_by_name:
                out.append(
                    _unknown("flavor", q.flavor, inv.pool_by_name, ("teams", t.name, "quotas", i, "flavor"), "pools")
                )
            if q.flavor in seen:
                out.append(
                    _issue(
                        f"flavor `{q.flavor}` has two quotas",
                        "Merge them into one quota entry.",
                        ("teams", t.name, "quotas", i, "flavor"),
                    )
                )
            seen.add(q.flavor)
    return out


def _cohort_references(inv: Inventory) -> list[Issue]:
    """A cohort's parent and quota flavors."""
    out = []
    for co in inv.cohorts:
        if co.parent is not None and co.parent not in inv.cohort_by_name:
            out.append(_unknown("cohort", co.parent, inv.cohort_by_name, ("cohorts", co.name, "parent"), "cohorts"))
        for i, q in enumerate(co.quotas):
            if q.flavor not in inv.pool_by_name:
                out.append(
                    _unknown("flavor", q.flavor, inv.pool_by_name, ("cohorts", co.name, "quotas", i, "flavor"), "pools")
                )
    return out


def _cost_centre_references(inv: Inventory) -> list[Issue]:
    """A budget's cost centre is some team's; a named cost centre is some team's or budget's."""
    out = []
    charged = {t.cost_center for t in inv.teams}
    for i, b in enumerate(inv.policy.budgets):
        if b.cost_center not in charged:
            out.append(
                _issue(
                    f"budget for cost centre `{b.cost_center}`, which no team is charged to",
                    did_you_mean(b.cost_center, charged) or "Name the cost centre of a team, or remove the budget.",
                    ("policy", "budgets", i, "cost_center"),
                    got=b.cost_center,
                    about=[ANY_TEAM],  # a team that failed to load may be the one charged to it
                )
            )
    centres = charged | {b.cost_center for b in inv.policy.budgets}
    for code in inv.policy.cost_center_names:
        if code not in centres:
            out.append(
                _issue(
                    f"cost centre `{code}` is not the cost centre of any team or budget",
                    did_you_mean(code, centres) or "Name a cost centre a team or budget uses, or remove it.",
                    ("policy", "cost_center_names", code),
                    about=[ANY_TEAM],  # a team that failed to load may be the one using it
                )
            )
    return out


def _row_references(inv: Inventory) -> list[Issue]:
    """The names in the price book, the demand forecast and the usage rows."""
    scenarios = {s.name for s in inv.policy.scenarios}
    rows: list[tuple[str, str, str, list[str | None], Iterable[str], str]] = [
        ("prices", "site", "site", [p.site for p in inv.prices], inv.site_by_name, "sites"),
        ("prices", "machine", "machine", [p.machine for p in inv.prices], inv.machine_by_name, "machines"),
        ("demand", "team", "team", [d.team for d in inv.demand], inv.team_by_name, "teams"),
        ("demand", "site", "site", [d.site for d in inv.demand], inv.site_by_name, "sites"),
        ("demand", "scenario", "scenario", [d.scenario for d in inv.demand], scenarios, "scenarios"),
        ("usage", "cluster", "cluster", [u.cluster for u in inv.usage], inv.cluster_by_name, "clusters"),
        ("usage", "team", "team", [u.team for u in inv.usage], inv.team_by_name, "teams"),
        ("usage", "flavor", "flavor", [u.flavor for u in inv.usage], inv.pool_by_name, "pools"),
    ]
    out = []
    for section, column, kind, values, known, plural in rows:
        out += _unknown_in_rows(section, column, kind, values, set(known), plural)
    return out


def _unknown_in_rows(
    section: str, column: str, kind: str, values: list[str | None], known: set[str], plural: str
) -> list[Issue]:
    """One issue per unknown name in a CSV section, at its first row, counting the other rows: a missing team
    is one mistake, not one per usage hour (a broken team file gave 3,000 follow-on errors)."""
    first: dict[str, int] = {}
    count: Counter[str] = Counter()
    for i, value in enumerate(values):
        if value is not None and value not in known:
            first.setdefault(value, i)
            count[value] += 1
    out = []
    for value, i in first.items():
        issue = _unknown(kind, value, known, (section, i, column), plural)
        more = count[value] - 1
        out.append(replace(issue, message=f"{issue.message} (and {more} more {section} rows)") if more else issue)
    return out


@rule("accelerator-names", "accelerator names are canonical names of the accelerator registry")
def check_accelerator_names(inv: Inventory) -> list[Issue]:
    out = []
    named: list[tuple[str, Ref]] = [(m.accelerator, ("machines", m.name, "accelerator")) for m in inv.machines]
    named += [(d.accelerator, ("demand", i, "accelerator")) for i, d in enumerate(inv.demand)]
    named += [(a, ("policy", "equivalence", a)) for a in inv.policy.equivalence]
    for name, ref in named:
        try:
            canonical = canonical_accelerator(name)
        except UnknownAccelerator as exc:
            out.append(_issue(str(exc), "Use a canonical accelerator name from the catalog.", ref))
            continue
        if canonical != name:
            out.append(_issue(f"accelerator `{name}` is not the canonical spelling", f"Write `{canonical}`.", ref))
    return out


@rule("cohort-cycles", "the cohort tree has no cycles (Kueue disables every ClusterQueue in a cycle)")
def check_cohort_cycles(inv: Inventory) -> list[Issue]:
    out = []
    reported: set[str] = set()
    for start in inv.cohorts:
        path: list[str] = []
        current: str | None = start.name
        while current is not None and current in inv.cohort_by_name and current not in path:
            path.append(current)
            current = inv.cohort_by_name[current].parent
        if current is not None and current in path and current not in reported:
            cycle = path[path.index(current) :]
            reported.update(cycle)
            out.append(
                _issue(
                    f"cohorts form a cycle: {' -> '.join([*cycle, current])}",
                    "Make one of them a root (remove its `parent`).",
                    ("cohorts", current, "parent"),
                )
            )
    return out


# --- placement -------------------------------------------------------------------------------------


@rule("machine-at-provider", "a pool's machine and a cluster's kind exist at the cluster's provider")
def check_machine_at_provider(inv: Inventory) -> list[Issue]:
    out = []
    for c in inv.clusters:
        site = inv.site_by_name.get(c.site)
        if site is None:
            continue
        cloud = provider_of(c.kind).cloud
        if cloud != site.provider:
            out.append(
                _issue(
                    f"a `{c.kind}` cluster cannot run at a `{site.provider}` site",
                    f"Use a site of provider `{cloud}` or change `kind`.",
                    ("clusters", c.name, "kind"),
                )
            )
        for p in c.pools:
            m = inv.machine_by_name.get(p.machine)
            if m is not None and m.provider != site.provider:
                out.append(
                    _issue(
                        f"machine `{p.machine}` is a `{m.provider}` machine but cluster `{c.name}` is at "
                        f"`{site.provider}`",
                        "Use a machine of the cluster's provider.",
                        ("pools", p.name, "machine"),
                    )
                )
    for cm in inv.commitments:
        m, site = inv.machine_by_name.get(cm.machine), inv.site_by_name.get(cm.site)
        if m is not None and site is not None and m.provider != site.provider:
            out.append(
                _issue(
                    f"machine `{cm.machine}` does not exist at `{site.provider}` site `{site.name}`",
                    "Use a machine of the site's provider.",
                    ("commitments", cm.name, "machine"),
                )
            )
    return out


@rule("zones-in-region", "pool zones lie in the cluster's region")
def check_zones_in_region(inv: Inventory) -> list[Issue]:
    out = []
    for c in inv.clusters:
        site = inv.site_by_name.get(c.site)
        if site is None:
            continue
        named_after_region = provider_of_cloud(site.provider).zones_named_after_region
        for p in c.pools:
            for i, zone in enumerate(p.zones):
                outside = (site.zones and zone not in site.zones) or (
                    named_after_region and not zone.startswith(site.region)
                )
                if outside:
                    options = ", ".join(site.zones) or f"zones of {site.region}"
                    out.append(
                        _issue(
                            f"zone `{zone}` is not in site `{site.name}` ({site.region})",
                            f"Use one of: {options}.",
                            ("pools", p.name, "zones", i),
                        )
                    )
        for i, zone in enumerate(site.zones):
            if named_after_region and not zone.startswith(site.region):
                out.append(
                    _issue(
                        f"zone `{zone}` is not in region `{site.region}`",
                        f"Zones of {site.region} start with `{site.region}`.",
                        ("sites", site.name, "zones", i),
                    )
                )
    return out


@rule("tpu-slices", "TPU pools have a valid topology for their generation and whole slices")
def check_tpu_slices(inv: Inventory) -> list[Issue]:
    out = []
    for p in inv.pools:
        m = inv.machine_by_name.get(p.machine)
        if m is None:
            continue
        ref: Ref = ("pools", p.name)
        if m.kind == "gpu":
            if p.tpu is not None:
                out.append(_issue(f"`tpu` is set but `{m.name}` is a GPU machine", "Remove `tpu`.", (*ref, "tpu")))
            continue
        if p.tpu is None:
            out.append(
                _issue(
                    f"TPU machine `{m.name}` needs a slice shape",
                    f"Add `tpu: {{topology: {m.tpu_topologies[0] if m.tpu_topologies else '2x2'}, slices: 1}}`.",
                    (*ref, "machine"),
                )
            )
            continue
        if p.tpu.topology not in m.tpu_topologies:
            out.append(
                _issue(
                    f"topology `{p.tpu.topology}` is not valid for `{m.name}` ({m.accelerator})",
                    f"Use one of: {', '.join(m.tpu_topologies)}.",
                    (*ref, "tpu", "topology"),
                )
            )
            continue
        if p.tpu.chips_per_slice % m.accelerators_per_node:
            out.append(
                _issue(
                    f"a `{p.tpu.topology}` slice has {p.tpu.chips_per_slice} chips, not a multiple of the "
                    f"{m.accelerators_per_node} chips per host",
                    "Choose a larger topology.",
                    (*ref, "tpu", "topology"),
                )
            )
        expected = pool_max_nodes(p, m)
        if p.nodes is not None and p.nodes != expected:
            out.append(
                _issue(
                    f"`nodes` must be slices x chips / chips per host = {p.tpu.slices} x "
                    f"{p.tpu.chips_per_slice} / {m.accelerators_per_node} = {expected}",
                    f"Set `nodes: {expected}` or remove it (it is derived).",
                    (*ref, "nodes"),
                    got=p.nodes,
                )
            )
        if p.autoscaling is not None:
            out.append(
                _issue(
                    "TPU slices are atomic: a slice pool has 0 or all its nodes, it cannot autoscale within a slice",
                    "Remove `autoscaling`; change `tpu.slices` instead.",
                    (*ref, "autoscaling"),
                )
            )
        if len(p.zones) != 1:
            out.append(
                _issue(
                    "a TPU slice pool must be in exactly one zone (COMPACT placement)",
                    "List a single zone.",
                    (*ref, "zones"),
                    got=list(p.zones),
                )
            )
    return out


@rule("even-zones", "a cloud pool's size splits evenly over its zones (GKE and EKS size pools per zone)")
def check_even_zones(inv: Inventory) -> list[Issue]:
    out = []
    for c in inv.clusters:
        provider = provider_of(c.kind)
        if not provider.sizes_pools_per_zone:
            continue
        for p in c.pools:
            if p.tpu is not None or len(p.zones) < 2:
                continue
            sizes = [("nodes", p.nodes)] if p.nodes is not None else []
            if p.autoscaling is not None:
                sizes = [
                    ("autoscaling.min_nodes", p.autoscaling.min_nodes),
                    ("autoscaling.max_nodes", p.autoscaling.max_nodes),
                ]
            for key, count in sizes:
                if count is not None and count % len(p.zones):
                    path = tuple(key.split("."))
                    out.append(
                        _issue(
                            f"{count} nodes cannot be split evenly over {len(p.zones)} zones ({provider.title} "
                            "sizes node pools per zone)",
                            f"Use a multiple of {len(p.zones)} or list fewer zones.",
                            ("pools", p.name, *path),
                            got=count,
                        )
                    )
    return out


@rule("provisioning", "each provisioning mode's requirements hold (GKE DWS, capacity blocks, reservations)")
def check_provisioning(inv: Inventory) -> list[Issue]:
    out = []
    for c in inv.clusters:
        provider = provider_of(c.kind)
        for p in c.pools:
            ref: Ref = ("pools", p.name)
            if p.provisioning not in provider.provisioning:
                problem, fix = provider.refusal(Provisioning(p.provisioning), providers())
                out.append(_issue(problem, fix, (*ref, "provisioning"), got=c.kind))
            if p.provisioning == Provisioning.FLEX_START and p.tpu is not None:
                out.append(
                    _issue(
                        "a TPU pool cannot be flex-start: each slice is emitted as a fixed-size node pool, which runs "
                        "and bills around the clock, while Kueue gets a queued-provisioning admission check that "
                        "never succeeds on it, so nothing is admitted to the TPUs being paid for",
                        "Use `provisioning: on-demand`, `spot` or `reservation` for TPU slices (flex-start with "
                        "queued provisioning is emitted for GPU pools only).",
                        (*ref, "provisioning"),
                        got=p.provisioning,
                    )
                )
            elif p.provisioning == Provisioning.FLEX_START:
                if p.nodes is not None:
                    out.append(
                        _issue(
                            "a flex-start pool autoscales from 0; it cannot have a fixed size",
                            "Replace `nodes` with `autoscaling: {min_nodes: 0, max_nodes: N}`.",
                            (*ref, "nodes"),
                        )
                    )
                elif p.autoscaling is not None and p.autoscaling.min_nodes != 0:
                    out.append(
                        _issue(
                            "a flex-start pool must scale from 0 nodes",
                            "Set `autoscaling.min_nodes: 0`.",
                            (*ref, "autoscaling", "min_nodes"),
                            got=p.autoscaling.min_nodes,
                        )
                    )
            elif p.max_run_duration_hours is not None:
                out.append(
                    _issue(
                        "`max_run_duration_hours` applies only to flex-start pools",
                        "Remove it or set `provisioning: flex-start`.",
                        (*ref, "max_run_duration_hours"),
                    )
                )
            if p.provisioning == Provisioning.CAPACITY_BLOCK and len(p.zones) != 1:
                out.append(
                    _issue(
                        "a capacity-block pool must be in the block's single zone",
                        "List one zone.",
                        (*ref, "zones"),
                        got=list(p.zones),
                    )
                )
            if p.provisioning in COMMITTED_PROVISIONING and p.commitment is None:
                out.append(
                    _issue(
                        f"a `{p.provisioning}` pool must name the commitment it consumes",
                        "Add `commitment: <name>`.",
                        (*ref, "provisioning"),
                    )
                )
            if p.provisioning not in COMMITTED_PROVISIONING and p.commitment is not None:
                out.append(
                    _issue(
                        f"a `{p.provisioning}` pool cannot consume a commitment",
                        "Set `provisioning: reservation` (or `capacity-block`) or remove `commitment`.",
                        (*ref, "commitment"),
                    )
                )
            out += provider.pool_issues(c, p)
    return out


@rule("commitment-consumers", "a commitment is consumed only by pools of its machine and site, within its count")
def check_commitment_consumers(inv: Inventory) -> list[Issue]:
    out = []
    used: dict[str, int] = {}
    for c in inv.clusters:
        for p in c.pools:
            cm = inv.commitment_by_name.get(p.commitment) if p.commitment else None
            if cm is None:
                continue
            ref: Ref = ("pools", p.name, "commitment")
            if cm.machine != p.machine:
                out.append(
                    _issue(
                        f"commitment `{cm.name}` is for `{cm.machine}`, not `{p.machine}`",
                        "Consume a commitment of the pool's machine.",
                        ref,
                    )
                )
            if cm.site != c.site:
                out.append(
                    _issue(
                        f"commitment `{cm.name}` is at site `{cm.site}`, but the pool is at `{c.site}`",
                        "Consume a commitment at the pool's site.",
                        ref,
                    )
                )
            if cm.zone is not None and cm.zone not in p.zones:
                out.append(
                    _issue(
                        f"commitment `{cm.name}` is in zone `{cm.zone}`, which the pool does not use",
                        f"Add `{cm.zone}` to the pool's zones.",
                        ("pools", p.name, "zones"),
                    )
                )
            m = inv.machine_by_name.get(p.machine)
            if m is not None:
                used[cm.name] = used.get(cm.name, 0) + pool_max_nodes(p, m)
    for cm in inv.commitments:
        if used.get(cm.name, 0) > cm.count:
            out.append(
                _issue(
                    f"pools consume {used[cm.name]} nodes of commitment `{cm.name}`, which holds {cm.count}",
                    "Shrink the consuming pools or raise the commitment's count.",
                    ("commitments", cm.name, "count"),
                    severity="warning",
                )
            )
    return out


@rule("cluster-settings", "clusters carry the settings their kind and MultiKueue role need")
def check_cluster_settings(inv: Inventory) -> list[Issue]:
    out = []
    for c in inv.clusters:
        ref: Ref = ("clusters", c.name)
        provider = provider_of(c.kind)
        out += provider.cluster_issues(inv, c)
        if provider.needs_project and not c.project:
            out.append(
                _issue(
                    f"a `{c.kind}` cluster needs `project` (project, account or subscription id)",
                    "Add `project:`.",
                    (*ref, "kind"),
                )
            )
        if c.multikueue_role == "manager":
            if not c.multikueue_workers:
                out.append(
                    _issue(
                        "a MultiKueue manager needs `multikueue_workers`",
                        "List the worker clusters.",
                        (*ref, "multikueue_role"),
                    )
                )
            for i, w in enumerate(c.multikueue_workers):
                worker = inv.cluster_by_name.get(w)
                if w == c.name:
                    out.append(
                        _issue(
                            "a MultiKueue manager cannot be its own worker",
                            "Remove it from the list.",
                            (*ref, "multikueue_workers", i),
                        )
                    )
                elif worker is not None and worker.multikueue_role != "worker":
                    out.append(
                        _issue(
                            f"cluster `{w}` is listed as a worker but its `multikueue_role` is "
                            f"`{worker.multikueue_role}`",
                            f"Set `multikueue_role: worker` on `{w}`.",
                            (*ref, "multikueue_workers", i),
                        )
                    )
                elif worker is not None and not worker.kubeconfig_secret:
                    out.append(
                        _issue(
                            f"worker `{w}` has no `kubeconfig_secret` for the manager to reach it",
                            f"Set `kubeconfig_secret` on cluster `{w}`.",
                            (*ref, "multikueue_workers", i),
                        )
                    )
        elif c.multikueue_workers:
            out.append(
                _issue(
                    "only a MultiKueue manager lists workers",
                    "Set `multikueue_role: manager` or remove `multikueue_workers`.",
                    (*ref, "multikueue_workers"),
                )
            )
    return out


# --- quotas ----------------------------------------------------------------------------------------


@rule("quota-within-capacity", "per flavor, the sum of nominal quotas fits the pool's capacity")
def check_quota_within_capacity(inv: Inventory) -> list[Issue]:
    capacity = flavor_capacity(inv)
    totals: dict[str, list[tuple[str, int, int]]] = {}
    for t in inv.teams:
        for i, q in enumerate(t.quotas):
            totals.setdefault(q.flavor, []).append((t.name, i, q.nominal))
    out = []
    for flavor, entries in totals.items():
        if flavor not in capacity:
            continue
        total = sum(n for _, _, n in entries)
        if total > capacity[flavor]:
            team, i, _ = max(entries, key=lambda e: e[2])
            teams = ", ".join(f"{t}={n}" for t, _, n in sorted(entries, key=lambda e: -e[2]))
            severity: Severity = "warning" if inv.policy.allow_oversubscription else "error"
            out.append(
                _issue(
                    f"flavor `{flavor}` is over-subscribed: nominal quotas sum to {total} but the pool has "
                    f"{capacity[flavor]} accelerators ({teams})",
                    "Lower the quotas, grow the pool, or set `policy.allow_oversubscription: true` to "
                    "over-subscribe deliberately.",
                    ("teams", team, "quotas", i, "nominal"),
                    got=total,
                    severity=severity,
                )
            )
    return out


@rule("lending-within-nominal", "a team lends at most its nominal quota (Kueue webhook rule)")
def check_lending_within_nominal(inv: Inventory) -> list[Issue]:
    return [
        _issue(
            f"lending_limit ({q.lending_limit}) is above nominal ({q.nominal})",
            f"Set `lending_limit` to at most {q.nominal}.",
            ("teams", t.name, "quotas", i, "lending_limit"),
        )
        for t in inv.teams
        for i, q in enumerate(t.quotas)
        if q.lending_limit is not None and q.lending_limit > q.nominal
    ]


@rule("cohort-for-borrowing", "only teams in a cohort borrow or lend (Kueue rejects limits without a cohort)")
def check_cohort_for_borrowing(inv: Inventory) -> list[Issue]:
    out = []
    for t in inv.teams:
        if t.cohort is not None:
            continue
        for i, q in enumerate(t.quotas):
            for key in ("borrowing_limit", "lending_limit"):
                if getattr(q, key) is not None:
                    out.append(
                        _issue(
                            f"`{key}` needs the team to be in a cohort",
                            "Set the team's `cohort` or remove the limit.",
                            ("teams", t.name, "quotas", i, key),
                        )
                    )
    for co in inv.cohorts:
        if co.parent is not None:
            continue
        for i, q in enumerate(co.quotas):
            for key in ("borrowing_limit", "lending_limit"):
                if getattr(q, key) is not None:
                    out.append(
                        _issue(
                            f"`{key}` on a root cohort has no parent to borrow from or lend to",
                            "Remove the limit or give the cohort a `parent`.",
                            ("cohorts", co.name, "quotas", i, key),
                        )
                    )
    return out


@rule("scenario-probabilities", "demand scenarios' probabilities sum to 1")
def check_scenario_probabilities(inv: Inventory) -> list[Issue]:
    scenarios = inv.policy.scenarios
    total = sum(s.probability for s in scenarios)
    if scenarios and abs(total - 1) > 1e-6:
        return [
            _issue(
                f"scenario probabilities sum to {total:g}, not 1",
                "Adjust them so they sum to 1.",
                ("policy", "scenarios"),
                got=round(total, 6),
            )
        ]
    return []


@rule("pool-prices", "every pool's node-hours beyond its commitment have a price in the price book", "warning")
def check_pool_prices(inv: Inventory) -> list[Issue]:
    """The one rule for a missing price (pricing.missing_prices), as every view applies it; an inventory with no
    price book at all (Kueue objects and node pools only) is not priced and not warned about."""
    if not inv.prices:
        return []
    return [_issue(m.message, m.fix, ("pools", m.pool, "provisioning")) for m in missing_prices(inv)]


@rule("onprem-cost-parts", "an on-prem machine's capital and operating parts add up to its price-book rate")
def check_onprem_cost_parts(inv: Inventory) -> list[Issue]:
    """Each machine and site of `onprem_costs` has an `onprem` price row whose capital per node (its upfront fee plus
    its rate less the operating part, over its term) is the parts' capital to the cent; an on-prem purchase of it
    pays at least the operating part."""
    out: list[Issue] = []
    for machine, site in dict.fromkeys((c.machine, c.site) for c in inv.onprem_costs):
        split = onprem_split(inv, machine, site)
        assert split is not None  # the pair has parts
        first = next(i for i, c in enumerate(inv.onprem_costs) if (c.machine, c.site) == (machine, site))
        rows = [r for r in inv.prices if (r.machine, r.site, r.pricing_model) == (machine, site, PricingModel.ONPREM)]
        if not rows:
            out.append(
                _issue(
                    f"{machine} at {site} has capital and operating parts but no `onprem` price row",
                    f"Add `{machine},{site},onprem,0,<usd_per_node_hour>,<source>,<as_of>` to prices.csv.",
                    ("onprem_costs", first, "machine"),
                )
            )
        for row in rows:
            capital = onprem_capital_per_node(row, split.operating_usd_per_node_hour)
            if cents(capital) != cents(split.capital_usd_per_node):
                out.append(
                    _issue(
                        f"the parts of {machine} at {site} do not add up to its price-book rate "
                        f"${row.usd_per_node_hour} a node-hour: the rate less the operating part "
                        f"(${split.operating_usd_per_node_hour} a node-hour) capitalises {format_usd(capital)} a node "
                        f"over its term, the capital items {format_usd(split.capital_usd_per_node)}",
                        "Make the capital items (hardware, installation) add up to the price row's capital, or fix "
                        "the operating items or the price row.",
                        ("onprem_costs", first, "usd_per_node"),
                        got=str(split.capital_usd_per_node),
                    )
                )
        for c in inv.commitments:
            if (c.machine, c.site) == (machine, site) and c.usd_per_node_hour < split.operating_usd_per_node_hour:
                out.append(
                    _issue(
                        f"commitment `{c.name}` pays ${c.usd_per_node_hour} a node-hour, less than the operating "
                        f"part of {machine} at {site} (${split.operating_usd_per_node_hour})",
                        "Give the commitment its whole rate, capital and operating parts included.",
                        ("commitments", c.name, "usd_per_node_hour"),
                        got=str(c.usd_per_node_hour),
                    )
                )
    # sums over every part of a machine: a part refused on loading would only repeat that error here
    return [replace(issue, about=(*issue.about, ("onprem_costs", "*"))) for issue in out]
