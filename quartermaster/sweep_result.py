"""A plan sweep as a contract: what `qm plan --sweep / --draws` writes beside a plan (planner/sweep.py solves it)
and what the finance report and `qm plan` read back (`load_sweep`, `cost_bands`, `robust_commitments`).

It lives in the core beside the plan's own contract (plan_contract.py) and imports neither the solver nor pandas;
pyarrow only when a sweep's tables are written or read. Every figure is on the planned basis.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quartermaster.plan_contract import not_what_was_written
from quartermaster.units import Quarter

if TYPE_CHECKING:
    import pyarrow as pa

NO_CHANGE = ("0", "0%", "+0%", "none")
"""Values of a sweep axis that leave it unchanged (the plan as the other axes have it)."""
FILES = ("sweep.json", "sweep.parquet", "sweep.csv", "sweep_purchases.parquet", "sweep_purchases.csv")


@dataclass(frozen=True)
class Scenario:
    """One plan of a sweep: what-ifs on top of the plan's own, and a demand draw (None: the forecast as written);
    labelled `base` when it changes nothing."""

    index: int
    what_if: tuple[str, ...]
    draw: int | None
    axes: tuple[str, ...]
    """axes: this scenario's value on each sweep axis, in the order of SweepSpec.grid."""

    @property
    def label(self) -> str:
        parts = [*self.what_if, *([] if self.draw is None else [f"draw {self.draw}"])]
        return ", ".join(parts) or "base"


@dataclass(frozen=True)
class SweepSpec:
    """What to sweep: grid axes (what-if target, values) and demand draws."""

    grid: tuple[tuple[str, tuple[str, ...]], ...] = ()
    draws: int = 0
    seed: int = 0

    def scenarios(self) -> list[Scenario]:
        """Every grid point x every draw, the first axis slowest, draws fastest."""
        points = itertools.product(*(values for _, values in self.grid))
        draws: list[int | None] = list(range(self.draws)) if self.draws else [None]
        return [
            Scenario(
                i,
                tuple(f"{target}={v}" for (target, _), v in zip(self.grid, point, strict=True) if v not in NO_CHANGE),
                draw,
                tuple(point),
            )
            for i, (point, draw) in enumerate(itertools.product(points, draws))
        ]


@dataclass(frozen=True)
class Sweep:
    """A gathered sweep: its settings and two Arrow tables (costs per scenario and quarter, purchases)."""

    spec: SweepSpec
    costs: pa.Table
    purchases: pa.Table
    meta: dict[str, Any] = field(default_factory=dict)
    """meta: backend, workers, wall seconds, the plan's what-ifs and expected cost (what sweep.json records)."""

    def write(self, out_dir: str | Path) -> list[Path]:
        """sweep.json, sweep.parquet + .csv, sweep_purchases.parquet + .csv in `out_dir`."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        doc = {
            "grid": [[t, list(v)] for t, v in self.spec.grid],
            "draws": self.spec.draws,
            "seed": self.spec.seed,
            **self.meta,
        }
        (out / "sweep.json").write_text(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n")
        import pyarrow.csv
        import pyarrow.parquet as pq

        for name, table in (("sweep", self.costs), ("sweep_purchases", self.purchases)):
            pq.write_table(table, out / f"{name}.parquet")
            pyarrow.csv.write_csv(table, out / f"{name}.csv")
        return [out / f for f in FILES]


def clear(out_dir: str | Path) -> list[Path]:
    """Remove a sweep's files from a plan folder (a new plan without a sweep must not keep an old one)."""
    gone = [p for p in (Path(out_dir) / f for f in FILES) if p.exists()]
    for p in gone:
        p.unlink()
    return gone


def load_sweep(out_dir: str | Path) -> Sweep | None:
    """The sweep written beside a plan, or None when the folder has none."""
    out = Path(out_dir)
    if not (out / "sweep.json").is_file():
        return None
    import pyarrow.parquet as pq

    with not_what_was_written("sweep.json"):
        doc = json.loads((out / "sweep.json").read_text())
        spec = SweepSpec(tuple((t, tuple(v)) for t, v in doc.pop("grid")), doc.pop("draws"), doc.pop("seed"))
    return Sweep(spec, pq.read_table(out / "sweep.parquet"), pq.read_table(out / "sweep_purchases.parquet"), doc)


# --- what a sweep says -----------------------------------------------------------------------------------

PLANNED = ("optimal", "feasible")
"""Outcomes whose costs and purchases a sweep's summaries count (a relaxed or missing plan is not a cost)."""


def percentile(values: Sequence[Decimal], p: float) -> Decimal:
    """The p-quantile (0..1) of `values`, interpolated linearly between order statistics at (n - 1) p (Hyndman and
    Fan's type 7, numpy's default, statistics.quantiles(method="inclusive")); exact in Decimal."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    h = (len(ordered) - 1) * Decimal(str(p))
    lo = int(h)
    if lo + 1 >= len(ordered):
        return ordered[-1]
    return ordered[lo] + (h - lo) * (ordered[lo + 1] - ordered[lo])


@dataclass(frozen=True)
class CostBand:
    """The planned cost of a quarter (or of the whole horizon, quarter `total`) across a sweep's scenarios."""

    quarter: str
    """quarter: a quarter (`2027Q1`), or `total` for the horizon: text, not a `Quarter`."""
    scenarios: int
    """scenarios: how many had a plan (PLANNED) and count here."""
    p10_usd: Decimal
    p50_usd: Decimal
    p90_usd: Decimal


def cost_bands(sweep: Sweep) -> list[CostBand]:
    """p10 / p50 / p90 of each quarter's planned cost, then of the horizon's (expected_cost_usd), over the
    scenarios with a plan; empty when none has one."""
    rows = [r for r in sweep.costs.to_pylist() if r["outcome"] in PLANNED]
    by_quarter: dict[str, list[Decimal]] = {}
    for r in rows:
        by_quarter.setdefault(r["quarter"], []).append(r["cost_usd"])
    totals = list({r["scenario"]: r["expected_cost_usd"] for r in rows}.values())
    groups = [*sorted(by_quarter.items()), *([("total", totals)] if totals else [])]
    return [CostBand(q, len(v), percentile(v, 0.1), percentile(v, 0.5), percentile(v, 0.9)) for q, v in groups]


@dataclass(frozen=True)
class RobustCommitment:
    """A kind of purchase (site, machine, pricing model, term) and how many of a sweep's scenarios buy it."""

    site: str
    machine: str
    pricing_model: str
    term_months: int
    bought_in: int
    """bought_in: scenarios (with a plan) that buy any of it in the horizon."""
    scenarios: int
    """scenarios: scenarios with a plan."""
    min_nodes: int
    max_nodes: int
    """min_nodes, max_nodes: nodes bought over the horizon, among the scenarios that buy it."""
    first_quarter: Quarter
    """first_quarter: the earliest quarter any scenario starts one."""


def robust_commitments(sweep: Sweep) -> list[RobustCommitment]:
    """Every kind of purchase any scenario makes, most often bought first."""
    planned = {r["scenario"] for r in sweep.costs.to_pylist() if r["outcome"] in PLANNED}
    nodes: dict[tuple[str, str, str, int], dict[int, int]] = {}
    first: dict[tuple[str, str, str, int], str] = {}
    for p in sweep.purchases.to_pylist():
        if p["scenario"] not in planned:
            continue
        key = (p["site"], p["machine"], p["pricing_model"], p["term_months"])
        per = nodes.setdefault(key, {})
        per[p["scenario"]] = per.get(p["scenario"], 0) + p["nodes"]
        first[key] = min(first.get(key, p["start_quarter"]), p["start_quarter"])
    out = [
        RobustCommitment(*key, len(per), len(planned), min(per.values()), max(per.values()), Quarter(first[key]))
        for key, per in nodes.items()
    ]
    return sorted(out, key=lambda c: (-c.bought_in, c.site, c.machine, c.pricing_model, c.term_months))
