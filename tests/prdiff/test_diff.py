"""`qm diff` on a git repository of the example inventory: each way a quota PR can change things, with the
comment's numbers and verdicts asserted exactly. Expected money comes from the inventory's own price book,
commitments and pools (tests/prdiff/repo.py), never typed in."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from quartermaster.pricing import HOURS_PER_MONTH, cents, format_pct
from quartermaster.reports.filters import money
from quartermaster.reports.quota_diff import MARKER
from quartermaster.units import quarter_hours
from tests.prdiff.repo import QuotaRepo, flavor_month, per_accelerator_month, team_month


@pytest.fixture
def repo(tmp_path: Path) -> QuotaRepo:
    return QuotaRepo.create(tmp_path)


def plus(amount: Decimal) -> str:
    return f"+{money(amount)}"


def pct(part: Decimal, whole: Decimal) -> str:
    return f"{part * 100 / whole:+.1f} %"


def policy_lines(comment: str) -> list[str]:
    section = comment.split("### Policies\n\n", 1)[1].split("\n\n", 1)[0]
    return section.splitlines()


def approvers(comment: str) -> list[str]:
    section = comment.split("### Approvals needed\n\n", 1)[1].split("\n\n", 1)[0]
    return [line.removeprefix("- ").split(":")[0] for line in section.splitlines()]


def test_raise_beyond_commitments_is_priced_on_demand_and_needs_finance(repo: QuotaRepo) -> None:
    repo.replace(
        "clusters.yaml",
        "autoscaling: {min_nodes: 0, max_nodes: 4}\n\n  - name: aks",
        "autoscaling: {min_nodes: 0, max_nodes: 8}\n\n  - name: aks",
    ).commit("grow p5-od to 8 nodes")
    before = repo.load()
    repo.quota("speech", "p5-od", nominal=48)

    result = repo.diff("HEAD")

    assert result.exit_code == 0, result.output  # a finance warning does not block
    rate = per_accelerator_month(before, "p5-od", "on-demand")
    want_usd = 32 * rate
    want_past = team_month(before, "speech")
    assert result.stdout.startswith(MARKER + "\n")
    assert (
        f"**speech**: +32 H100-80GB in eks-us-east-1; monthly exposure {plus(want_usd)} ({pct(want_usd, want_past)})"
    ) in result.stdout
    assert (
        f"| speech | eks-us-east-1 | p5-od (H100-80GB, on-demand) | 16 | 48 | +32 | 0 free of 64 | - | - | "
        f"{money(rate)} | {plus(want_usd)} |"
    ) in result.stdout
    threshold = before.policy.finance_approval_usd_per_month
    assert policy_lines(result.stdout) == [
        f"- ⚠️ **finance-approval**: {plus(want_usd)}/month is above {money(threshold)}/month: needs finance approval",
        "- ✅ **borrowing**: every borrowing limit can be lent by the cohort",
        "- ✅ **exposure-moves**: no exposure moves onto cost centres whose quotas stay",
        "- ✅ **over-budget**: no budget applies to the changed teams",
        "- ✅ **over-capacity**: 1 changed flavor(s) within capacity",
        "- ✅ **spot-share**: changed teams within the 50 % spot limit",
        "- ✅ **waiting**: no team waits more than 5 % of the last 720 hours more than before",
    ]
    assert approvers(result.stdout) == ["@northwind/speech-leads", "@northwind/finops"]


def test_lower_returns_the_flex_start_price(repo: QuotaRepo) -> None:
    before = repo.load()
    repo.quota("llm-pretrain", "h100-flex", nominal=16)

    result = repo.diff("HEAD", "--format", "json")

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    want_usd = -16 * per_accelerator_month(before, "h100-flex", "flex-start")
    [row] = data["rows"]
    assert row["nominal"] == {"past": 32, "current": 16, "delta": -16}
    assert row["flavor_left"] == {"past": 0, "current": 16, "delta": 16}
    assert Decimal(row["monthly_usd"]) == want_usd.quantize(Decimal("0.01"))
    team = data["teams"][0]
    want_past = team_month(before, "llm-pretrain")
    assert team["monthly_usd"]["delta"] == row["monthly_usd"]
    assert Decimal(team["monthly_usd"]["past"]) == want_past.quantize(Decimal("0.01"))
    assert Decimal(data["monthly_usd"]["delta"]) == want_usd.quantize(Decimal("0.01"))
    assert data["blocking"] is False
    assert {v["check"]: v["status"] for v in data["verdicts"]} == {
        "over-capacity": "pass",
        "over-budget": "pass",
        "finance-approval": "pass",
        "borrowing": "pass",
        "spot-share": "pass",
        "exposure-moves": "pass",
        "waiting": "pass",
    }
    markdown = repo.diff("HEAD").stdout
    assert f"Monthly exposure will decrease by {money(-want_usd)}" in markdown


def test_move_inside_a_commitment_costs_nothing_and_moves_the_chargeback(repo: QuotaRepo) -> None:
    """The fleet pays the commitment anyway ($0.00), but 16 of its 128 GPUs' cost moves from multimodal to
    llm-pretrain (issue 19: a quota move on paid capacity is not "$0.00" to the teams)."""
    before = repo.load()
    repo.quota("multimodal", "h100-mega-resv", nominal=16).quota("llm-pretrain", "h100-mega-resv", nominal=80)

    result = repo.diff("HEAD")

    assert result.exit_code == 0, result.output
    moved = flavor_month(before, "h100-mega-resv") * 16 / 128
    assert (
        f"**llm-pretrain**: +16 H100-80GB in gke-gpu-us-east4; monthly exposure {plus(moved)} "
        f"({pct(moved, team_month(before, 'llm-pretrain'))})"
    ) in result.stdout
    assert (
        f"**multimodal**: -16 H100-80GB in gke-gpu-us-east4; monthly exposure {money(-moved)} "
        f"({pct(-moved, team_month(before, 'multimodal'))})"
    ) in result.stdout
    assert (
        "| llm-pretrain | gke-gpu-us-east4 | h100-mega-resv (H100-80GB, reservation) "
        "| 64 | 80 | +16 | 0 free of 128 |" in result.stdout
    )
    assert "Monthly exposure will not change" in result.stdout
    assert approvers(result.stdout) == [
        "@northwind/llm-leads",
        "ana.ruiz@northwind.ai",
        "@northwind/multimodal-leads",
    ]


def test_move_on_spot_prices_both_rows_and_fails_the_spot_share(repo: QuotaRepo) -> None:
    before = repo.load()
    repo.quota("rl-research", "h100-mega-spot", nominal=16).quota("search-ranking", "h100-mega-spot", nominal=32)

    result = repo.diff("HEAD")

    assert result.exit_code == 1  # spot share is a blocking policy
    usd = 16 * per_accelerator_month(before, "h100-mega-spot", "spot")
    assert (
        "| rl-research | gke-gpu-us-east4 | h100-mega-spot (H100-80GB, spot) "
        "| 32 | 16 | -16 | 0 free of 64 | - | - "
        f"| {money(usd / 16)} | -{money(usd)} |" in result.stdout
    )
    assert (
        "| search-ranking | gke-gpu-us-east4 | h100-mega-spot (H100-80GB, spot) "
        "| 16 | 32 | +16 | 0 free of 64 | - | - "
        f"| {money(usd / 16)} | {plus(usd)} |" in result.stdout
    )
    assert "Monthly exposure will not change" in result.stdout
    search = before.team_by_name["search-ranking"]
    total = sum(q.nominal for q in search.quotas) + 16
    assert policy_lines(result.stdout)[0] == (
        f"- ❌ **spot-share**: search-ranking: 32 of {total} accelerators are spot "
        f"({32 * 100 / total:.1f} %), "
        f"above policy.max_spot_share 50 %"
    )


def test_added_team_is_new_cost_and_its_owners_approve(repo: QuotaRepo) -> None:
    before = repo.load()
    repo.replace(
        "clusters.yaml",
        "autoscaling: {min_nodes: 0, max_nodes: 4}\n\n  - name: onprem",
        "autoscaling: {min_nodes: 0, max_nodes: 6}\n\n  - name: onprem",
    )
    repo.write(
        "teams/vision.yaml",
        'teams:\n  - name: vision\n    owners: ["@northwind/vision-leads"]\n    namespaces: [vision]\n'
        "    quotas:\n      - {flavor: ndh100, nominal: 16}\n",
    ).replace("org.yaml", "team_terms:\n", "team_terms:\n  - {team: vision, cost_center: CC-2004, cohort: product}\n")

    result = repo.diff("HEAD")

    assert result.exit_code == 0, result.output
    want_usd = 16 * per_accelerator_month(before, "ndh100", "on-demand")
    assert (
        f"**vision** (added team): +16 H100-80GB in aks-eastus, added in `teams/vision.yaml`; monthly exposure "
        f"{plus(want_usd)} (new)" in result.stdout
    )
    assert "| vision | aks-eastus | ndh100 (H100-80GB, on-demand) | 0 | 16 | +16 | 0 free of 48 |" in result.stdout
    assert "### Capacity and price changes" not in result.stdout  # growing an autoscaling pool costs nothing
    assert approvers(result.stdout) == ["@northwind/vision-leads", "@northwind/finops"]
    assert "`aks-eastus`" in result.stdout and "+  name: vision" in result.stdout  # the new ClusterQueue


def test_exceeding_capacity_fails_capacity_and_an_exposure_over_budget_warns(repo: QuotaRepo) -> None:
    """Issue 35, point 4: without a plan (`--plan`) there is no planned charge, the basis the budget gate judges: an
    exposure over budget warns (finance approves) and names its basis; it no longer blocks."""
    before = repo.load()
    repo.replace(
        "teams/llm-pretrain.yaml",
        "{flavor: h100-mega-resv, nominal: 64,",
        "{flavor: h100-mega-resv, nominal: 192,",
    )

    result = repo.diff("HEAD")

    assert result.exit_code == 1
    rate = per_accelerator_month(before, "h100-mega-resv", "on-demand")
    want_usd = 128 * rate  # the 128 GPUs of the commitment are taken: every new GPU is on-demand
    fixed = flavor_month(before, "h100-mega-resv")  # the commitment

    def chargeback_change(team: str) -> Decimal:
        """The flavor's cost (commitment plus the on-demand GPUs beyond it) shared by quota: 128 -> 256 GPUs."""
        nominal = next(q.nominal for q in before.team_by_name[team].quotas if q.flavor == "h100-mega-resv")
        return (fixed + want_usd) * (nominal + 128 * (team == "llm-pretrain")) / 256 - fixed * nominal / 128

    llm = chargeback_change("llm-pretrain")
    assert (
        f"**llm-pretrain**: +128 H100-80GB in gke-gpu-us-east4; monthly exposure {plus(llm)} "
        f"({pct(llm, team_month(before, 'llm-pretrain'))})"
    ) in result.stdout
    assert f"| 64 | 192 | +128 | over by 128 | 32 | - | {money(rate)} | {plus(want_usd)} |" in result.stdout
    budget = next(b for b in before.policy.budgets if b.cost_center == "CC-1001")
    in_flavor = {t.name for t in before.teams if any(q.flavor == "h100-mega-resv" for q in t.quotas)}
    centre_month = sum(
        team_month(before, t.name) + (chargeback_change(t.name) if t.name in in_flavor else 0)
        for t in before.teams
        if t.cost_center == "CC-1001"
    )
    spend = centre_month * quarter_hours(budget.quarter) / HOURS_PER_MONTH
    lines = policy_lines(result.stdout)
    # the other teams in the flavor share its on-demand overflow by quota too, so other centres may go over
    assert {
        f"- ⚠️ **over-budget**: CC-1001 {budget.quarter}: no plan (`qm diff --plan DIR`), so no planned charge to "
        f"gate on; exposure {money(spend)} of {money(budget.usd)} ({format_pct(cents(spend) / budget.usd)}), not "
        "gated: over the budget, finance approves",
        "- ❌ **over-capacity**: h100-mega-resv in gke-gpu-us-east4: nominal quotas sum to 256 "
        "but the flavor has "
        "128 H100-80GB (128 over)",
        f"- ⚠️ **finance-approval**: {plus(want_usd)}/month is above "
        f"{money(before.policy.finance_approval_usd_per_month)}/month: needs finance approval",
    } <= set(lines)
    assert "blocking: over-capacity failed." in result.stderr
    # issue 26: the owners of every cost centre whose charge changes are named (the flavor's other teams share its
    # on-demand overflow), after the owners of the team whose quota changes and before finance
    moved = sorted({before.team_by_name[t].cost_center for t in in_flavor})
    owners = [*before.team_by_name["llm-pretrain"].owners]
    for centre in moved:
        owners += [o for t in before.teams if t.cost_center == centre for o in t.owners if o not in owners]
    assert approvers(result.stdout) == [*owners, "@northwind/finops"]
    assert "-        nominalQuota: 64\n+        nominalQuota: 192\n" in result.stdout


def test_borrowing_beyond_what_the_cohort_lends_warns(repo: QuotaRepo) -> None:
    inv = repo.load()
    lendable = sum(
        q.nominal if q.lending_limit is None else q.lending_limit
        for t in inv.teams
        if t.name != "llm-pretrain" and t.cohort
        for q in t.quotas
        if q.flavor == "h100-mega-resv"
    )
    repo.quota("llm-pretrain", "h100-mega-resv", borrowing_limit=lendable + 1)

    result = repo.diff("HEAD", "--format", "text")

    assert result.exit_code == 0, result.output
    assert (
        f"llm-pretrain: borrowing limit on h100-mega-resv 32 → {lendable + 1}; monthly exposure $0.00 (0.0 %)"
        in result.stdout
    )
    assert (
        f"WARN borrowing: llm-pretrain may borrow {lendable + 1} in h100-mega-resv "
        "but the rest of its cohort "
        f"tree can lend only {lendable}"
    ) in result.stdout


def test_no_change_says_so_and_passes(repo: QuotaRepo) -> None:
    result = repo.diff("HEAD")
    assert result.exit_code == 0, result.output
    assert "No quota, capacity or price changes between `HEAD (" in result.stdout


def test_two_folders_compare_without_git(tmp_path: Path, repo: QuotaRepo) -> None:
    import shutil

    base = tmp_path / "base"
    shutil.copytree(repo.inventory, base)
    repo.quota("speech", "ndh100", nominal=8)
    result = repo.diff(str(base), str(repo.inventory), "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"][0]["nominal"] == {"past": 16, "current": 8, "delta": -8}


def test_invalid_base_revision_is_located_at_the_revision(repo: QuotaRepo) -> None:
    repo.replace("teams/speech.yaml", "{flavor: ndh100, nominal: 16}", "{flavor: ndh10, nominal: 16}")
    repo.commit("typo")
    repo.replace("teams/speech.yaml", "{flavor: ndh10, nominal: 16}", "{flavor: ndh100, nominal: 16}")

    result = repo.diff("HEAD")

    assert result.exit_code == 1
    assert "HEAD:inventory/teams/speech.yaml:9 teams[0].quotas[1].flavor: " in result.stderr
    assert "ndh100" in result.stderr  # the did-you-mean
    assert result.stdout.startswith(MARKER) and "The inventory does not validate" in result.stdout


def test_unknown_revision_is_a_usage_error(repo: QuotaRepo) -> None:
    result = repo.diff("origin/main")
    assert result.exit_code == 2
    assert "`origin/main` is neither an inventory folder nor a git revision" in result.stderr
    assert "git fetch origin main" in result.stderr


def test_kueue_diff_shows_changed_objects_first_and_rbac_last_each_hunk_named(repo: QuotaRepo) -> None:
    """Issue 19: a reviewer reads the quota change before the namespace plumbing. speech gets a second namespace
    (a new Namespace, Role and RoleBinding) and a quota cut (a changed ClusterQueue) in one change."""
    repo.replace("teams/speech.yaml", "namespaces: [speech]", "namespaces: [speech, speech-eval]")
    repo.quota("speech", "p5-od", nominal=8)
    result = repo.diff("HEAD", "--format", "json")
    [eks] = [k for k in json.loads(result.stdout)["kueue"] if k["cluster"] == "eks-us-east-1"]
    labels = [line.split(" @@ ", 1)[1] for line in eks["diff"].splitlines() if line.startswith("@@ ")]
    assert labels[0] == "ClusterQueue/speech"  # the changed object first, then the added LocalQueues
    assert {"LocalQueue/speech in speech-eval", "LocalQueue/default in speech-eval"} <= set(labels[1:-3])
    assert labels[-3:] == [
        "Namespace/speech-eval",
        "Role/quartermaster-team-workloads in speech-eval",
        "RoleBinding/quartermaster-team-workloads in speech-eval",
    ]  # the added RBAC last


def test_a_change_to_clusters_needs_finance_whatever_it_costs(repo: QuotaRepo) -> None:
    """Issue 19: policies follow the section, not the file. Lowering a pool's autoscaling ceiling costs nothing
    today, yet capacity is money: finance approves every change to clusters, commitments, prices or policy."""
    repo.replace(
        "clusters.yaml",
        "      - name: h100-mega-spot\n        machine: a3-megagpu-8g\n"
        "        zones: [us-east4-a, us-east4-b]\n        autoscaling: {min_nodes: 0, max_nodes: 8}",
        "      - name: h100-mega-spot\n        machine: a3-megagpu-8g\n"
        "        zones: [us-east4-a, us-east4-b]\n        autoscaling: {min_nodes: 0, max_nodes: 6}",
    )
    result = repo.diff("HEAD", "--format", "json")
    approvals = {a["who"]: a["reasons"] for a in json.loads(result.stdout)["approvals"]}
    assert approvals == {"@northwind/finops": ["changes clusters"]}


def test_a_change_cannot_name_its_own_finance_approvers(repo: QuotaRepo) -> None:
    """Issue 19 (audit): the finance approvers asked are the base branch's; a change that replaces them in
    org.yaml still needs the old ones."""
    repo.replace("org.yaml", 'finance_approvers: ["@northwind/finops"]', 'finance_approvers: ["@speech-lead"]')
    result = repo.diff("HEAD", "--format", "json")
    approvals = {a["who"]: a["reasons"] for a in json.loads(result.stdout)["approvals"]}
    assert approvals == {"@northwind/finops": ["changes policy"]}
