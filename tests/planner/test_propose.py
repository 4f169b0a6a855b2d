"""`qm plan --propose`: the plan's quotas are written where they fit today's pools, and only there."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.edit import QuotaChange
from quartermaster.loader import load
from quartermaster.planner import load_result
from quartermaster.planner.plan_result import ProposedQuotaRow
from quartermaster.planner.propose import proposed_changes
from tests.builders import make_inventory
from tests.paths import REPO


def proposal(*rows: tuple[str, str, int, int]) -> tuple[ProposedQuotaRow, ...]:
    return tuple(ProposedQuotaRow(team=t, flavor=f, site="gcp-us-central1", machine="a3-megagpu-8g", quarter="2027Q1",
                                  nominal=n, borrowing_limit=b) for t, f, n, b in rows)


def test_a_fitting_flavor_is_applied_to_every_team_and_limits_follow_the_rules() -> None:
    # h100 holds 16 GPUs; ml (in cohort org, lending 6) gets 4, ops (no cohort) gets 12 with a borrowing
    # limit it cannot have without a cohort.
    inventory = (make_inventory().edit("teams", "ml", quotas=[{"flavor": "h100", "nominal": 8, "lending_limit": 6}])
                 .team("ops", cohort=None).build())
    changes, skipped = proposed_changes(inventory, proposal(("ml", "h100", 4, 2), ("ops", "h100", 12, 5)))
    assert skipped == []
    assert changes == [QuotaChange("ml", "h100", nominal=4, borrowing_limit=2, lending_limit=4),
                       QuotaChange("ops", "h100", nominal=12, borrowing_limit=None, lending_limit=None)]


def test_a_team_the_plan_leaves_out_of_an_applied_flavor_goes_to_zero() -> None:
    inventory = make_inventory().team("ops", quotas={"h100": 8}).build()
    changes, _ = proposed_changes(inventory, proposal(("ml", "h100", 16, 0)))
    assert QuotaChange("ops", "h100", nominal=0) in changes


def test_flavors_beyond_todays_pool_or_without_a_pool_are_left_alone_with_the_reason() -> None:
    inventory = make_inventory().build()
    changes, skipped = proposed_changes(inventory, proposal(("ml", "h100", 24, 0),
                                                           ("ml", "new:gcp-us-central1/a3-megagpu-8g", 8, 0)))
    assert changes == []
    assert skipped == [
        "h100: the proposal needs 24 accelerators but the pool has 16; grow the pool to what the plan "
        "provisions, then propose again",
        "new:gcp-us-central1/a3-megagpu-8g: the plan uses capacity that no pool has yet (8 accelerators); add a "
        "pool for it to the inventory",
    ]


def test_qm_plan_propose_writes_the_fitting_quotas_and_keeps_the_inventory_valid(tmp_path: Path) -> None:
    root = tmp_path / "inventory"
    shutil.copytree(REPO / "inventory", root)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    before = load(root).inventory
    result = CliRunner().invoke(app, ["plan", str(root), "--horizon", "4q", "--out", str(tmp_path / "plan"),
                                      "--propose"])
    assert result.exit_code == 0, result.output
    proposed = load_result(tmp_path / "plan").proposed_quotas
    changes, skipped = proposed_changes(before, proposed)
    assert changes, "the example's plan changes some quotas"
    for reason in skipped:
        assert f"not proposed: {reason}" in result.output
    after = load(root)
    assert after.ok, [i.format() for i in after.issues]
    nominal = {(t.name, q.flavor): q.nominal for t in after.inventory.teams for q in t.quotas}
    assert all(nominal[(c.team, c.flavor)] == c.nominal for c in changes)
    changed_files = subprocess.run(["git", "diff", "--name-only"], cwd=root, check=True, capture_output=True,
                                   text=True).stdout.split()
    assert changed_files and all(f.startswith("teams/") for f in changed_files)
