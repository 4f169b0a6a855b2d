"""Issue 26, point 4: one answer to "how does a cost centre stand against its budget?" in the finance report and
the quota-PR check, and a verdict that counts waiting and chargeback moved onto other cost centres. The README's
own example: cutting llm-pretrain's reserved H100 quota from 64 to 16."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from quartermaster.plan_contract import load_result
from quartermaster.pricing import HOURS_PER_MONTH
from quartermaster.reports.finance import build_report
from quartermaster.units import quarter_hours
from tests.paths import DATA
from tests.prdiff.repo import QuotaRepo

PLAN = DATA / "reports" / "plan"
FIVE = ("cost_center", "quarter", "basis", "usd", "budget_usd")


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> tuple[QuotaRepo, dict, str]:
    repo = QuotaRepo.create(tmp_path_factory.mktemp("cut"))
    repo.quota("llm-pretrain", "h100-mega-resv", nominal=16)
    as_json = repo.diff("HEAD", "--format", "json", "--plan", str(PLAN))
    markdown = repo.diff("HEAD", "--plan", str(PLAN))
    assert as_json.exit_code == markdown.exit_code == 1, as_json.output  # blocked: waiting
    return repo, json.loads(as_json.stdout), markdown.stdout


def test_report_json_and_qm_diff_json_agree_on_the_planned_budget_status(
    cut: tuple[QuotaRepo, dict, str], tmp_path: Path
) -> None:
    repo, diff, _ = cut
    plan = load_result(PLAN)
    report = json.loads(build_report(repo.load(), plan).to_json())
    table = next(t for t in report["tables"] if t["name"] == "budget_status")
    in_report = {(r["cost_center"], r["quarter"]): {k: r[k] for k in FIVE} for r in table["rows"]}
    planned = [r for r in diff["budget_status"] if r["basis"] == "planned"]
    touched = {t["cost_center"] for t in diff["teams"]}
    assert {r["cost_center"] for r in planned} == touched & {cc for cc, _ in in_report}
    for row in planned:
        assert row == in_report[(row["cost_center"], row["quarter"])]
    # the planned charge of a cost centre is the report's cost-centre row, the sum of its teams' rows
    centres = next(t for t in report["tables"] if t["name"] == "cost_centers")
    teams = next(t for t in report["tables"] if t["name"] == "teams")
    quarter = report["quarter"]
    for row in (r for r in planned if r["quarter"] == quarter):
        centre = next(c for c in centres["rows"] if c["cost_center"] == row["cost_center"])
        assert row["usd"] == centre["current"]
        parts = [Decimal(t["current"]) for t in teams["rows"] if t["cost_center"] == row["cost_center"]]
        assert Decimal(row["usd"]) == sum(parts)


def test_the_exposure_row_is_the_chargeback_after_the_change_times_the_quarter_s_months(
    cut: tuple[QuotaRepo, dict, str],
) -> None:
    repo, diff, _ = cut
    inventory = repo.load()
    for row in (r for r in diff["budget_status"] if r["basis"] == "exposure"):
        # every team of the cost centre: its monthly exposure after the change, as the comment's team table
        # shows it (teams the change does not touch keep theirs, not listed); here all of the centre's teams moved
        members = {t.name for t in inventory.teams if t.cost_center == row["cost_center"]}
        listed = [t for t in diff["teams"] if t["team"] in members]
        assert {t["team"] for t in listed} == members
        monthly = sum(Decimal(t["monthly_usd"]["current"]) for t in listed)
        months = Decimal(quarter_hours(row["quarter"])) / HOURS_PER_MONTH
        assert abs(Decimal(row["usd"]) - monthly * months) <= Decimal("0.01") * len(listed) * months


def test_a_cut_that_makes_its_team_wait_is_blocked_and_names_every_moved_cost_centre_s_owners(
    cut: tuple[QuotaRepo, dict, str],
) -> None:
    repo, diff, markdown = cut
    inventory = repo.load()
    hours = 30 * 24
    waited = max(r["hours_waiting"]["current"] for r in diff["impact"] if r["team"] == "llm-pretrain")
    share = Decimal(str(inventory.policy.max_waiting_share))
    assert waited > share * hours  # 695 of 720 hours in the README's example
    verdicts = {(v["check"], v["subject"]): v["status"] for v in diff["verdicts"]}
    assert verdicts[("waiting", "llm-pretrain")] == "fail"
    assert diff["blocking"] is True
    assert "Not blocked" not in markdown and "**❌ Blocked** by waiting" in markdown
    # chargeback moves onto the cost centres whose teams' quotas did not change: each warns, and their owners
    moved = {
        t["cost_center"]
        for t in diff["teams"]
        if Decimal(t["monthly_usd"]["delta"]) != 0 and t["team"] != "llm-pretrain"
    }
    assert moved == {"CC-1002", "CC-1003", "CC-2001"}
    assert {s for (c, s), status in verdicts.items() if c == "exposure-moves" and status == "warn"} == moved
    named = {a["who"] for a in diff["approvals"]}
    for centre in moved | {"CC-1001"}:
        assert {o for t in inventory.teams if t.cost_center == centre for o in t.owners} <= named


def test_a_small_cut_that_moves_chargeback_needs_the_moved_cost_centres_approval(tmp_path: Path) -> None:
    # 64 -> 60 reserved H100s: llm-pretrain waits no more than policy allows, but 4/128 of the commitment's cost
    # moves onto the flavor's other teams' cost centres: not "Not blocked", and not blocking either
    repo = QuotaRepo.create(tmp_path)
    repo.quota("llm-pretrain", "h100-mega-resv", nominal=60)
    result = repo.diff("HEAD", "--format", "json")
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)
    assert diff["blocking"] is False and diff["needs_approval"] is True
    warned = sorted(v["subject"] for v in diff["verdicts"] if v["check"] == "exposure-moves" and v["status"] == "warn")
    assert warned == ["CC-1002", "CC-1003", "CC-2001"]
    comment = repo.diff("HEAD").stdout
    assert f"**⚠️ Needs approval** by the owners of {', '.join(warned)} (exposure moves onto them)" in comment
    assert "Not blocked" not in comment


def test_the_budget_gate_judges_the_planned_row_and_names_the_exposure_beside_it(
    cut: tuple[QuotaRepo, dict, str],
) -> None:
    """Issue 35, point 4: the over-budget check judged the exposure row (CC-1002 at 99.4 % of its budget by exposure,
    12.2 % by plan) under the heading of the planned status. With a plan it gates on the planned row; the exposure
    is named beside it, labelled exposure, and gates nothing."""
    _, diff, markdown = cut
    rows = {(r["cost_center"], r["quarter"], r["basis"]): r for r in diff["budget_status"]}
    verdicts = [v for v in diff["verdicts"] if v["check"] == "over-budget"]
    assert verdicts
    for v in verdicts:
        centre, quarter = v["subject"].split()
        planned, exposure = rows[(centre, quarter, "planned")], rows[(centre, quarter, "exposure")]
        assert v["status"] == ("fail" if Decimal(planned["usd"]) > Decimal(planned["budget_usd"]) else "pass")
        assert v["message"].startswith(f"{centre} {quarter}: planned ${Decimal(planned['usd']):,}")
        assert f"; exposure ${Decimal(exposure['usd']):,} of ${Decimal(exposure['budget_usd']):,}" in v["message"]
        assert v["message"].endswith("not gated")
    # the planned row comes first in the budget table, the one the gate reads
    budget_rows = [line for line in markdown.splitlines() if line.startswith("| CC-")]
    assert budget_rows and "| planned |" in budget_rows[0]
    assert "chargeback" not in markdown.lower()
