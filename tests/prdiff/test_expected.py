"""The quota diff's two bases (issue 14): exposure (each quota used in full at its marginal rate) and the
expected change (the team's recent use carried to the new quota)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from quartermaster.pricing import HOURS_PER_MONTH
from quartermaster.reports.quota_diff import build_quota_diff
from tests.builders import InventoryBuilder, make_inventory

ON_DEMAND = Decimal("88")  # $/node-hour of a3-megagpu-8g (8 GPUs): $11 per GPU-hour
RATE = ON_DEMAND / 8 * HOURS_PER_MONTH  # $8,030 per GPU-month
LAST = dt.datetime(2026, 10, 31, 23)


def fleet(nominal: int, held: float | None) -> InventoryBuilder:
    """Team `ml` with `nominal` GPUs of an on-demand pool of 4 nodes (32 GPUs; none paid anyway), holding `held`
    GPUs every hour of the last 30 days (no usage rows at all when None)."""
    b = make_inventory().edit("teams", "ml", quotas=[{"flavor": "h100", "nominal": nominal}])
    b.edit_pool("h100", nodes=None, autoscaling={"min_nodes": 0, "max_nodes": 4})
    b.add(
        "prices",
        machine="a3-megagpu-8g",
        site="gcp-us-central1",
        pricing_model="on-demand",
        usd_per_node_hour=str(ON_DEMAND),
        source="test",
    )
    if held is not None:
        for h in range(30 * 24):
            b.add(
                "usage",
                hour=(LAST - dt.timedelta(hours=h)).isoformat(),
                cluster="gke-a",
                team="ml",
                flavor="h100",
                accelerators_used=held,
                accelerators_requested=held,
            )
    return b


@pytest.mark.parametrize(
    "old, new, held, want_exposure_gpus, want_expected_gpus",
    [
        # raising 8 -> 16 while the team holds 6: 8 more GPUs exposed, none expected to be used
        (8, 16, 6.0, 8, 0),
        # raising 8 -> 16 while it holds 12 (borrowing today): it is expected to use 4 more of its own
        (8, 16, 12.0, 8, 4),
        # cutting 16 -> 8 while it holds 12: 8 fewer exposed, 4 fewer expected
        (16, 8, 12.0, -8, -4),
    ],
)
def test_exposure_and_expected_change_of_a_quota(old, new, held, want_exposure_gpus, want_expected_gpus) -> None:
    diff = build_quota_diff(fleet(old, held).build(), fleet(new, held).build())
    [row] = diff.rows
    assert row.rate_usd_per_accelerator_month == RATE
    assert row.monthly_usd == want_exposure_gpus * RATE
    assert row.recent_use == Decimal(str(held))
    assert row.expected_monthly_usd == want_expected_gpus * RATE
    assert diff.expected_monthly_usd == diff.teams[0].expected_monthly_usd == want_expected_gpus * RATE
    assert diff.basis == "exposure"


def test_without_usage_history_the_expected_change_is_unknown_not_zero() -> None:
    diff = build_quota_diff(fleet(8, None).build(), fleet(16, None).build())
    assert diff.rows[0].expected_monthly_usd is None and diff.expected_monthly_usd is None
    assert diff.rows[0].monthly_usd == 8 * RATE


def test_paid_capacity_no_quota_shares_goes_to_the_teams_by_the_idle_policy() -> None:
    """A fixed pool nobody has quota in is paid all the same (1 node x $88 x 730 h = $64,240 a month); the team
    figures the budget check reads carry it, shared in proportion to each team's exposure (issue 14)."""

    def side(ml: int) -> InventoryBuilder:
        b = make_inventory().edit("teams", "ml", quotas=[{"flavor": "h100", "nominal": ml}])
        b.team("cv", quotas={"h100": 8}, cohort="org").pool("spare", nodes=1)
        return b.add(
            "prices",
            machine="a3-megagpu-8g",
            site="gcp-us-central1",
            pricing_model="on-demand",
            usd_per_node_hour=str(ON_DEMAND),
            source="test",
        )

    diff = build_quota_diff(side(8).build(), side(4).build())
    ml, cv = (next(t for t in diff.teams if t.team == name) for name in ("ml", "cv"))
    h100 = ON_DEMAND * 2 * HOURS_PER_MONTH  # 2 fixed nodes: $128,480 a month, paid whatever the quotas
    spare = ON_DEMAND * 1 * HOURS_PER_MONTH
    # before: ml holds 8 of 16 quota -> half of h100, and half of the spare node (exposures 1:1)
    assert ml.monthly_usd.past == h100 / 2 + spare / 2
    # after: cutting 8 -> 4 inside paid capacity changes no exposure row, but ml now holds 4 of 12 -> a third of
    # h100, and the spare splits by those shares, 1:2 (issue 19: the chargeback moves to cv, which is listed)
    assert ml.monthly_usd.current == h100 / 3 + spare * (h100 / 3) / (h100 / 3 + h100 * 2 / 3)
    moved = ml.monthly_usd.past - ml.monthly_usd.current
    assert round(cv.monthly_usd.current - cv.monthly_usd.past, 2) == round(moved, 2)
    assert ml.quota_changed and not cv.quota_changed
