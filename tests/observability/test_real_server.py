"""A real Prometheus, backfilled with two days of the example usage under Kueue's metric names: `qm usage pull`
gives back the same records, to the accelerator-hour (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.loader import load
from tests.observability.promserver import needs_prometheus, openmetrics, prometheus_server
from tests.paths import INVENTORY

DAYS = ("2026-10-01", "2026-10-03")


@pytest.fixture(scope="module")
def source() -> pd.DataFrame:
    """The example usage of the first two days of October 2026."""
    usage = pd.read_csv(INVENTORY / "usage.csv", parse_dates=["hour"])
    return usage[(usage["hour"] >= DAYS[0]) & (usage["hour"] < DAYS[1])].reset_index(drop=True)


@needs_prometheus
def test_pulled_usage_equals_the_backfilled_source(source: pd.DataFrame, tmp_path: Path) -> None:
    inventory = load(INVENTORY).inventory
    resource = {p.name: inventory.machine_by_name[p.machine].resource_name for p in inventory.pools}
    # A queue made by hand (not a team) and a follower replica's copy of a real series: the first is named in a
    # warning with its accelerator-hours, the second is not counted (it would double the leader's).
    extra = [
        f'kueue_cluster_queue_resource_reservation{{cluster="onprem-sjc",cluster_queue="adhoc",'
        f'flavor="dgx-h100-a",replica_role="leader",resource="nvidia.com/gpu"}} 2 {1790000000 + 60 * m}'
        for m in range(3)
    ]
    text = openmetrics(source, resource)
    text = text.replace(
        "# TYPE kueue_cluster_queue_resource_usage gauge",
        "\n".join([*extra, "# TYPE kueue_cluster_queue_resource_usage gauge"]),
    )
    follower = text.splitlines()[1].replace('replica_role="leader"', 'replica_role="follower"')
    text = text.replace(text.splitlines()[1], text.splitlines()[1] + "\n" + follower, 1)
    out = tmp_path / "pulled.csv"
    # 1,790,000,000 s is 2026-09-21T13:33:20Z: three samples of 2 in that hour, mean 2, so 2 accelerator-hours.
    with prometheus_server(text, tmp_path) as url:
        result = CliRunner().invoke(
            app,
            [
                "usage",
                "pull",
                "--prometheus",
                url,
                "--since",
                "2026-09-21",
                "--until",
                DAYS[1],
                "--inventory",
                str(INVENTORY),
                "--out",
                str(out),
                "--chunk-hours",
                "20",
            ],
        )
    assert result.exit_code == 0, result.output
    assert "not mapped: cluster 'onprem-sjc', ClusterQueue 'adhoc', flavor 'dgx-h100-a'" in result.output
    assert "(2.0 accelerator-hours left out)" in result.output
    pulled = pd.read_csv(out, parse_dates=["hour"])
    keys = ["hour", "cluster", "team", "flavor"]
    want = source.sort_values(keys).reset_index(drop=True)
    got = pulled.sort_values(keys).reset_index(drop=True)
    assert got[keys].equals(want[keys])
    for column in ("accelerators_requested", "accelerators_used"):
        assert (got[column] - want[column]).abs().max() < 1e-6, column
    # The totals a person reads in `qm meter`, per team: the same accelerator-hours as the source.
    by_team = ["team"]
    assert (
        got.groupby(by_team)["accelerators_requested"]
        .sum()
        .round(6)
        .equals(want.groupby(by_team)["accelerators_requested"].sum().round(6))
    )
