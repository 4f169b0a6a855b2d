"""The quota impact replay (issue 19) on hand-worked cases: each expected split is worked out in its comment from
Kueue's rules (docs/kueue-admission.md sections 1-3)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.reports.quota_diff import build_quota_diff, render_json, render_markdown, render_text
from quartermaster.reports.quota_diff.impact import Node, admit, replay
from tests.builders import InventoryBuilder, make_inventory
from tests.paths import INVENTORY


def team(
    name: str,
    nominal: float,
    cohort: str | None = "cohort:org",
    borrowing: float | None = None,
    lending: float | None = None,
    priority: int = 0,
    weight: float = 1.0,
) -> Node:
    return Node(f"team:{name}", cohort, nominal, borrowing, lending, True, priority, weight)


def cohort(
    name: str,
    parent: str | None = None,
    nominal: float = 0.0,
    borrowing: float | None = None,
    lending: float | None = None,
) -> Node:
    return Node(f"cohort:{name}", f"cohort:{parent}" if parent else None, nominal, borrowing, lending, False)


def admitted(tree: list[Node], **demand: float) -> dict[str, float]:
    got = admit(tree, {f"team:{k}": v for k, v in demand.items()})
    return {k.removeprefix("team:"): round(v, 6) for k, v in got.items()}


def test_a_lone_team_gets_its_nominal_and_the_rest_waits() -> None:
    # No cohort: a ClusterQueue can never exceed its nominal (8 of 12 admitted).
    assert admitted([team("a", 8, cohort=None)], a=12) == {"a": 8}


@pytest.mark.parametrize(
    "want_a, want_b, got_a, got_b",
    [
        # a uses 4 of its 8; b borrows a's idle 4 on top of its own 8
        (4, 12, 4, 12),
        # a wants its whole nominal back: reclaim takes b down to its nominal
        (8, 12, 8, 8),
        # both under nominal: nobody borrows
        (3, 5, 3, 5),
    ],
)
def test_two_teams_in_a_cohort_borrow_and_reclaim(want_a, want_b, got_a, got_b) -> None:
    tree = [cohort("org"), team("a", 8), team("b", 8)]
    assert admitted(tree, a=want_a, b=want_b) == {"a": got_a, "b": got_b}


def test_a_lending_limit_keeps_the_rest_of_the_nominal_private() -> None:
    # a lends at most 2 of its 8 (6 are its private reserve): b, wanting 16, gets 8 + 2
    tree = [cohort("org"), team("a", 8, lending=2), team("b", 8)]
    assert admitted(tree, a=0, b=16) == {"a": 0, "b": 10}


def test_a_borrowing_limit_caps_the_borrower() -> None:
    # b may borrow 3 beyond its 8, though a leaves all 8 idle
    tree = [cohort("org"), team("a", 8), team("b", 8, borrowing=3)]
    assert admitted(tree, a=0, b=16) == {"a": 0, "b": 11}


@pytest.mark.parametrize(
    "demand, want",
    [
        # Kueue's own unit test (pkg/cache/scheduler/resource_test.go#L253-L302): root -> {left (own 10, borrowing
        # limit 5), right (own 10)}; left -> {cq1 (10), cq2 (10, borrowing limit 5)}; right -> {rcq (10)}.
        # cq1 alone reaches left's 30 plus 5 from the root
        ({"cq1": 100}, {"cq1": 35, "cq2": 0, "rcq": 0}),
        # cq2 alone stops at its own 10 + 5
        ({"cq2": 100}, {"cq1": 0, "cq2": 15, "rcq": 0}),
        # rcq alone reaches everything: root S = left 30 + right 20
        ({"rcq": 100}, {"cq1": 0, "cq2": 0, "rcq": 50}),
    ],
)
def test_a_three_level_tree_applies_every_limit_on_the_path(demand, want) -> None:
    tree = [
        cohort("root"),
        cohort("left", "root", nominal=10, borrowing=5),
        cohort("right", "root", nominal=10),
        team("cq1", 10, "cohort:left"),
        team("cq2", 10, "cohort:left", borrowing=5),
        team("rcq", 10, "cohort:right"),
    ]
    assert admitted(tree, **demand) == want


def test_higher_priority_borrows_first() -> None:
    # a idles its 8; b and c each want 8 more than their nominal: the higher-priority c takes all 8
    tree = [cohort("org"), team("a", 8), team("b", 4, priority=100), team("c", 4, priority=1000)]
    assert admitted(tree, a=0, b=12, c=12) == {"a": 0, "b": 4, "c": 12}


@pytest.mark.parametrize(
    "weights, want",
    [
        # no weights: an even split of the 8 idle accelerators
        ((1.0, 1.0), {"a": 0, "b": 8, "c": 8}),
        # fair sharing 1:3 splits the pool 2:6
        ((1.0, 3.0), {"a": 0, "b": 6, "c": 10}),
    ],
)
def test_equal_priority_borrowers_share_the_pool_by_weight(weights, want) -> None:
    tree = [cohort("org"), team("a", 8), team("b", 4, weight=weights[0]), team("c", 4, weight=weights[1])]
    assert admitted(tree, a=0, b=20, c=20) == want


def test_replay_counts_waiting_hours_peak_borrowed_and_lent() -> None:
    """Two hours on the example-shaped inventory: ml (8 of h100) and cv (8) in cohort org."""
    inventory = make_inventory().edit_pool("h100", nodes=2).team("cv", quotas={"h100": 8}, cohort="org").build()
    h0, h1 = dt.datetime(2026, 10, 1, 0), dt.datetime(2026, 10, 1, 1)
    # hour 0: ml idle, cv wants 12 -> cv borrows 4 of ml's 8; hour 1: both want 12 -> each gets 8, 4 wait
    rows = [(h0, "ml", "h100", 0.0), (h0, "cv", "h100", 12.0), (h1, "ml", "h100", 12.0), (h1, "cv", "h100", 12.0)]
    impact = replay(inventory, rows)
    ml, cv = impact[("ml", "h100")], impact[("cv", "h100")]
    assert (cv.demand, cv.admitted, cv.waiting, cv.hours_waiting, cv.peak_waiting) == (24, 20, 4, 1, 4)
    assert (ml.demand, ml.admitted, ml.waiting, ml.hours_waiting) == (12, 8, 4, 1)
    assert (cv.borrowed, cv.lent, ml.borrowed, ml.lent) == (4, 0, 0, 4)


def test_the_pr_comment_flags_a_team_that_starts_waiting_because_of_someone_elses_change() -> None:
    """ml stops lending (lending limit 0): cv, which borrowed 4 of ml's idle GPUs every hour of the last 30 days,
    now waits 4 GPUs every hour: 30 x 24 x 4 = 2,880 accelerator-hours (issue 19)."""

    def inventory(lending: int | None) -> InventoryBuilder:
        b = make_inventory().edit_pool("h100", nodes=2).team("cv", quotas={"h100": 8}, cohort="org")
        b.edit("teams", "ml", quotas=[{"flavor": "h100", "nominal": 8, "lending_limit": lending}])
        last = dt.datetime(2026, 10, 31, 23)
        for h in range(30 * 24):
            b.add(
                "usage",
                hour=(last - dt.timedelta(hours=h)).isoformat(),
                cluster="gke-a",
                team="cv",
                flavor="h100",
                accelerators_used=12.0,
                accelerators_requested=12.0,
            )
        return b

    diff = build_quota_diff(inventory(None).build(), inventory(0).build())
    rows = {i.team: i for i in diff.impact}
    assert diff.impact_days == 30 and set(rows) == {"cv", "ml"}
    assert (rows["cv"].waiting.past, rows["cv"].waiting.current) == (0, 30 * 24 * 4)
    assert (rows["cv"].hours_waiting.current, rows["cv"].borrowed.past, rows["cv"].borrowed.current) == (720, 2880, 0)
    assert (rows["ml"].lent.past, rows["ml"].lent.current) == (2880, 0)
    assert rows["cv"].starts_waiting and not rows["cv"].author and rows["ml"].author
    assert "⚠️ **cv** (starts waiting)" in render_markdown(diff)
    assert "! cv / h100: waiting 0.0 -> 2,880.0" in render_text(diff)
    assert build_quota_diff(inventory(None).build(), inventory(0).build(), impact_days=0).impact == ()


def test_json_carries_admitted_and_waiting_hours_with_their_deltas_and_who_starts_waiting() -> None:
    """Audit of issue 19: the JSON's float figures had `delta: null`, and it lacked admitted hours and
    `starts_waiting`. cv (nominal 8) wants 12.5 H100 every hour of 30 days; ml (nominal 8) is idle and lent all
    of it; the change sets ml's lending limit to 2. Before: cv borrows 4.5, all admitted. After: cv borrows 2,
    admitted 10 an hour, 2.5 wait."""
    demand, nominal, lending, hours = 12.5, 8, 2, 30 * 24

    def inventory(limit: int | None) -> InventoryBuilder:
        b = make_inventory().edit_pool("h100", nodes=2).team("cv", quotas={"h100": nominal}, cohort="org")
        b.edit("teams", "ml", quotas=[{"flavor": "h100", "nominal": nominal, "lending_limit": limit}])
        last = dt.datetime(2026, 10, 31, 23)
        for h in range(hours):
            b.add(
                "usage",
                hour=(last - dt.timedelta(hours=h)).isoformat(),
                cluster="gke-a",
                team="cv",
                flavor="h100",
                accelerators_used=demand,
                accelerators_requested=demand,
            )
        return b

    data = json.loads(render_json(build_quota_diff(inventory(None).build(), inventory(lending).build())))
    rows = {(r["team"], r["flavor"]): r for r in data["impact"]}
    cv, ml = rows[("cv", "h100")], rows[("ml", "h100")]
    admitted_before, admitted_after = demand * hours, (nominal + lending) * hours
    assert cv["admitted"] == {
        "past": admitted_before,
        "current": admitted_after,
        "delta": admitted_after - admitted_before,
    }
    waiting_after = (demand - nominal - lending) * hours
    assert cv["waiting"] == {"past": 0.0, "current": waiting_after, "delta": waiting_after}
    assert cv["borrowed"]["delta"] == ml["lent"]["delta"] == (lending - (demand - nominal)) * hours
    assert cv["hours_waiting"] == {"past": 0, "current": hours, "delta": hours}
    assert cv["starts_waiting"] is True and ml["starts_waiting"] is False
    assert ml["admitted"] == {"past": 0.0, "current": 0.0, "delta": 0.0}


def test_a_team_file_cannot_add_paid_capacity(tmp_path: Path) -> None:
    """Issue 19: a `clusters:` section in teams/speech.yaml (a 64-node H100 pool) got the team's approval only,
    because CODEOWNERS is per file. A file under teams/ holds only `teams:`; anything else is a located error."""
    shutil.copytree(INVENTORY, tmp_path / "inv")
    team_file = tmp_path / "inv" / "teams" / "speech.yaml"
    lines = team_file.read_text().count("\n")
    team_file.write_text(
        team_file.read_text() + "clusters:\n  - name: big\n    kind: gke\n    site: gcp-us-east4\n    project: p\n"
    )
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "inv")])
    assert result.exit_code == 1
    assert f"speech.yaml:{lines + 1} clusters: `clusters` in a team file" in result.output
