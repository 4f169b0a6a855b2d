"""Plan sweeps (issue 21): a what-if grid worked out by hand, seeded demand draws, the same tables from every
backend, and the cost bands and robust commitments derived from the gathered scenarios."""

from __future__ import annotations

import importlib.util
import shlex
import statistics
from decimal import Decimal
from pathlib import Path
from statistics import NormalDist

import pytest
import yaml
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.demand_quantiles import shifted_quantiles
from quartermaster.errors import MissingExtra
from quartermaster.loader import load
from quartermaster.modules.kueue.builders import objects_for_cluster
from quartermaster.planner import PlanInputError, PlanOptions
from quartermaster.planner.sweep import run_sweep, spec_of
from quartermaster.sweep_result import cost_bands, load_sweep, percentile, robust_commitments
from quartermaster.units import quarter_hours
from tests.builders import DURING_THE_BLOCK
from tests.paths import REPO
from tests.planner.planning import MACHINE, SITE, one_site

H1 = quarter_hours("2027Q1")  # 2,160 hours
OPTIONS = PlanOptions(start="2027Q1", horizon=1, gap_rel=1e-9, time_limit_s=60)


def inventory(p90: float | None = None):
    """One site selling MACHINE (one L4 a node) on demand at $10 and for 12 months at $6 a node-hour; team ml wants
    10 L4 in 2027Q1 (p50; p90 as given)."""
    b = one_site(on_demand=10, commit_12=6)
    return b.add("demand", period="2027Q1", team="ml", accelerator="L4", p50=10, p90=p90).build()


def write_inventory(directory: Path, on_demand: float = 10, commit_12: float = 6, p50: float = 10) -> Path:
    """inventory()'s files: the builder's YAML, prices.csv and demand.csv (the loader reads these two as CSV)."""
    b = one_site(on_demand=on_demand, commit_12=commit_12)
    prices = b.data.pop("prices")
    b.write(directory)
    header = "machine,site,pricing_model,term_months,usd_per_node_hour,source,as_of"
    lines = [
        f"{p['machine']},{p['site']},{p['pricing_model']},{p['term_months']},{p['usd_per_node_hour']},test,2026-11-25"
        for p in prices
    ]
    (directory / "prices.csv").write_text("\n".join([header, *lines]) + "\n")
    (directory / "demand.csv").write_text(
        f"period,team,accelerator,site,p50,p90,preemptible_share\n2027Q1,ml,L4,,{p50},,0.0\n"
    )
    return directory


def test_a_two_level_demand_grid_is_the_commitment_worked_out_by_hand():
    """Flat demand, commitment cheaper than on-demand for every hour: commit to all of it (10 nodes, or 5 at -50 %);
    the quarter costs nodes x $6 x 2,160 h (the forecast, held flat after 2027Q1, uses the rest of the term)."""
    sweep = run_sweep(inventory(), OPTIONS, spec_of(["demand=-50%,0"], 0, 0), backend="serial")
    rows = sweep.costs.to_pylist()
    assert [(r["label"], r["axis:demand"], r["outcome"], r["quarter"]) for r in rows] == [
        ("demand=-50%", "-50%", "optimal", "2027Q1"),
        ("base", "0", "optimal", "2027Q1"),
    ]
    want = [Decimal(n * 6 * H1) for n in (5, 10)]
    assert [r["cost_usd"] for r in rows] == want
    assert [r["expected_cost_usd"] for r in rows] == want
    bought = [
        (p["scenario"], p["site"], p["machine"], p["pricing_model"], p["term_months"], p["nodes"])
        for p in sweep.purchases.to_pylist()
    ]
    assert bought == [(0, SITE, MACHINE, "commit", 12, 5), (1, SITE, MACHINE, "commit", 12, 10)]
    [robust] = robust_commitments(sweep)
    assert (robust.bought_in, robust.scenarios, robust.min_nodes, robust.max_nodes, robust.first_quarter) == (
        2,
        2,
        5,
        10,
        "2027Q1",
    )


def test_a_grid_is_the_cartesian_product_of_its_axes_and_none_leaves_an_axis_alone():
    spec = spec_of(["demand=-10%,0,+10%", f"price:{SITE}/{MACHINE}=-20%,none"], 2, 0)
    scenarios = spec.scenarios()
    assert len(scenarios) == 3 * 2 * 2
    assert scenarios[0].what_if == ("demand=-10%", f"price:{SITE}/{MACHINE}=-20%") and scenarios[0].draw == 0
    assert scenarios[3].what_if == ("demand=-10%",) and scenarios[3].draw == 1  # price `none`, second draw
    assert scenarios[-1].label == "demand=+10%, draw 1"


def test_a_draw_moves_the_fitted_lognormal_by_z_standard_deviations():
    """With p50 and p90 alone, a shift by z scales every quantile by (p90 / p50)^(z / z_0.9)."""
    z = 0.7
    factor = (15 / 10) ** (z / NormalDist().inv_cdf(0.9))
    got = shifted_quantiles({0.5: 10.0, 0.9: 15.0}, z)
    assert got[0.5] == pytest.approx(10 * factor) and got[0.9] == pytest.approx(15 * factor)


def test_draws_are_seeded_the_same_for_any_number_of_draws_and_differ_between_seeds():
    inv = inventory(p90=15)
    two = run_sweep(inv, OPTIONS, spec_of([], 2, 7), backend="serial").costs.drop_columns(["seconds", "cpu_seconds"])
    three = run_sweep(inv, OPTIONS, spec_of([], 3, 7), backend="serial").costs.drop_columns(["seconds", "cpu_seconds"])
    other = run_sweep(inv, OPTIONS, spec_of([], 2, 8), backend="serial").costs
    assert three.slice(0, 2).equals(two)
    assert other.column("cost_usd").to_pylist() != two.column("cost_usd").to_pylist()
    assert len(set(three.column("cost_usd").to_pylist())) == 3  # each draw its own demand


@pytest.mark.parametrize("backend", [pytest.param(b, marks=pytest.mark.slow) for b in ("processes", "ray")])
def test_every_backend_gives_the_same_tables_as_serial_for_the_same_seed(backend):
    """Ray with one local worker: its start-up (`ray.init`) is most of this test's time."""
    inv, spec = inventory(p90=15), spec_of(["demand=-50%,0"], 2, 3)
    serial = run_sweep(inv, OPTIONS, spec, backend="serial")
    other = run_sweep(inv, OPTIONS, spec, backend=backend, workers=2 if backend == "processes" else 1)
    timings = ["seconds", "cpu_seconds"]
    assert other.costs.drop_columns(timings).equals(serial.costs.drop_columns(timings))
    assert other.purchases.equals(serial.purchases)
    assert serial.costs.num_rows == 4 and other.meta["backend"] == backend


def test_cost_bands_are_the_quantiles_of_the_gathered_scenario_costs():
    sweep = run_sweep(inventory(p90=15), OPTIONS, spec_of([], 5, 1), backend="serial")
    costs = [r["cost_usd"] for r in sweep.costs.to_pylist()]
    deciles = statistics.quantiles(costs, n=10, method="inclusive")  # type 7, as numpy's default
    [quarter, total] = cost_bands(sweep)
    assert (quarter.quarter, quarter.scenarios) == ("2027Q1", 5)
    assert (quarter.p10_usd, quarter.p50_usd, quarter.p90_usd) == (deciles[0], statistics.median(costs), deciles[8])
    assert total.quarter == "total" and total.p50_usd == statistics.median(costs)  # one quarter: total = quarter


@pytest.mark.parametrize(
    ("values", "p", "want"),
    [
        ([Decimal(1), Decimal(2), Decimal(3), Decimal(4)], 0.5, Decimal("2.5")),  # h = 1.5: halfway from 2 to 3
        ([Decimal(10), Decimal(20)], 0.1, Decimal(11)),  # h = 0.1
        ([Decimal(10), Decimal(20)], 0.9, Decimal(19)),
        ([Decimal(7)], 0.9, Decimal(7)),  # one value is every quantile
    ],
)
def test_percentile_interpolates_between_order_statistics(values, p, want):
    assert percentile(values, p) == want


@pytest.mark.parametrize(
    ("axes", "draws", "message"),
    [
        (["demand"], 0, "write a what-if target and its values"),
        (["demand=-10%,-10%"], 0, "repeats a value"),
        (["demand=-10%", "demand=+10%"], 0, "names a target twice"),
        ([], -1, "must be 0 or more"),
    ],
)
def test_a_bad_sweep_is_a_plan_input_error(axes, draws, message):
    with pytest.raises(PlanInputError, match=message):
        spec_of(axes, draws, 0)


def test_qm_plan_sweep_writes_the_sweep_beside_the_plan_and_a_plan_without_one_removes_it(tmp_path):
    folder = write_inventory(tmp_path / "inv")
    out = tmp_path / "plan"
    base = ["plan", str(folder), "--horizon", "1q", "--out", str(out)]
    result = CliRunner().invoke(app, [*base, "--sweep", "demand=-50%,0", "--backend", "serial"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "Sweep: 2 scenarios (2 optimal) on serial x 1" in flat
    # issue 26: a grid of what-ifs is no sample: its lowest and highest (5 and 10 nodes), not p10 / p90
    lowest, highest = Decimal(5 * 6 * H1), Decimal(10 * 6 * H1)
    assert f"lowest ${lowest:,.2f}, highest ${highest:,.2f}" in flat and "p90" not in flat
    for name in ("sweep.json", "sweep.parquet", "sweep.csv", "sweep_purchases.parquet", "sweep_purchases.csv"):
        assert (out / name).is_file(), name
    assert (out / "sweep.csv").read_text().splitlines()[0].startswith('"scenario","label","axis:demand"')
    assert load_sweep(out).meta["plan_expected_cost_usd"] == str(10 * 6 * H1) + ".000000"
    again = CliRunner().invoke(app, base)
    assert again.exit_code == 0 and "Removed the previous sweep" in again.output
    assert load_sweep(out) is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sweep", "demand=-50%,lots"], "is not a percentage"),
        (["--sweep", "lose-site=gcp-us-centrl1"], "Did you mean `gcp-us-central1`?"),
        (["--draws", "2", "--from-usage"], "cannot be combined with --from-usage"),
        (["--sweep", "demand=0,+10%", "--backend", "dask"], "--backend must be one of serial, processes, ray"),
    ],
)
def test_a_bad_sweep_on_the_command_line_exits_2_before_planning(tmp_path, extra, message):
    folder = write_inventory(tmp_path / "inv")
    result = CliRunner().invoke(app, ["plan", str(folder), "--out", str(tmp_path / "plan"), *extra])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "plan" / "plan.json").exists()


def test_the_documented_rayjob_is_what_qm_prints_and_queues_to_a_local_queue_that_qm_render_creates():
    """The plan-sweeps guide's `qm plan --rayjob` command prints the guide's RayJob; Kueue's queue label names a
    LocalQueue of the example in the job's namespace; `shutdownAfterJobFinishes` is true (Kueue requires it)."""
    guide = (REPO / "docs" / "how-to" / "plan-sweeps.md").read_text(encoding="utf-8")
    text = guide.split("**On Kubernetes: a KubeRay RayJob that Kueue admits.**", 1)[1]
    command = text.split("```bash\n", 1)[1].split(" | kubectl", 1)[0]
    documented = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    result = CliRunner().invoke(app, shlex.split(command)[1:], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout == documented
    job = yaml.safe_load(documented)
    inventory = load(REPO / "inventory").inventory
    queues = {
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for c in inventory.clusters
        for o in objects_for_cluster(inventory, c.name, DURING_THE_BLOCK)
        if o["kind"] == "LocalQueue"
    }
    meta = job["metadata"]
    assert (meta["namespace"], meta["labels"]["kueue.x-k8s.io/queue-name"]) in queues
    assert job["spec"]["shutdownAfterJobFinishes"] is True
    assert shlex.split(job["spec"]["entrypoint"]) == [
        "qm",
        "plan",
        "/inventory",
        "--horizon",
        "8q",
        "--draws",
        "200",
        "--seed",
        "7",
        "--backend",
        "ray",
        "--out",
        "/results/plan",
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--draws", "2", "--rayjob", "llm-pretrian", "--image", "x"], "Did you mean `llm-pretrain`?"),  # a typo
        (["--rayjob", "llm-pretrain", "--image", "x"], "--rayjob prints a sweep; give it --sweep or --draws."),
        (["--draws", "2", "--rayjob", "llm-pretrain"], "--rayjob needs --image"),
        # the job creates no storage: the team names the claim the plan is written to (issue 28, point 6)
        (["--draws", "2", "--rayjob", "llm-pretrain", "--image", "x"], "--rayjob needs --results-claim"),
    ],
)
def test_a_rayjob_without_a_team_a_sweep_or_an_image_exits_2(extra, message):
    result = CliRunner().invoke(app, ["plan", str(REPO / "inventory"), *extra])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())


def test_ray_without_the_ray_extra_names_the_extra_before_anything_is_solved(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(MissingExtra, match=r"needs the `ray` extra.*pip install 'quartermaster\[ray\]'"):
        run_sweep(inventory(), OPTIONS, spec_of(["demand=-50%,0"], 0, 0), backend="ray")
