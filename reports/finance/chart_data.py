"""The report's charts as numbers, read from its tables (the tables keep the exact money)."""

from __future__ import annotations

from collections.abc import Sequence

from quartermaster.reports.finance.table import ZERO, Chart, ChartSeries, Table
from quartermaster.units import Quarter


def report_charts(quarters: Sequence[Quarter], tables: list[Table]) -> tuple[Chart, ...]:
    spend = next(t for t in tables if t.name == "spend_by_quarter")
    models = [c for c in spend.columns if c.kind == "money" and c.key != "total"]
    coverage = next(t for t in tables if t.name == "coverage")
    demand = next(t for t in tables if t.name == "demand_vs_capacity")
    band = next(t for t in tables if t.name == "cost_band")
    bridge = next(t for t in tables if t.name == "bridge")
    accelerators = sorted({r["accelerator"] for r in demand.rows})
    payments = next(t for t in tables if t.name == "payment_schedule")
    depreciation = next(t for t in tables if t.name == "depreciation")

    def per_accelerator_total(key: str) -> tuple[float, ...]:
        return tuple(float(sum((r[key] for r in demand.rows if r["accelerator"] == a), ZERO)) for a in accelerators)

    bridge_chart = (
        Chart(
            "bridge",
            bridge.title,
            tuple(str(r["item"]).split(",")[0] for r in bridge.rows),  # `2026-10 metered`, not its scaling
            (ChartSeries("USD", tuple(float(r["usd"]) for r in bridge.rows)),),
            "USD",
            "waterfall",
            "USD per quarter (metered to planned)",
            "From the metered month, scaled to a quarter (first bar, basis: metered), to the plan's quarter (last bar, "
            "basis: planned): each bar between is a line of the table below, red where it adds cost, green where it "
            "saves.",
        ),
    )
    return (
        *(bridge_chart if bridge.rows else ()),
        Chart(
            "spend",
            "Spend by quarter and pricing model",
            tuple(quarters),
            tuple(ChartSeries(c.label, tuple(float(r[c.key]) for r in spend.rows)) for c in models),
            "USD",
            "stacked",
            "USD per quarter (planned)",
            "Basis: planned. Each bar is a quarter's expected cost, split by pricing model.",
        ),
        Chart(
            "coverage",
            "Coverage, utilisation and effective savings rate",
            tuple(quarters),
            (
                ChartSeries("coverage ($)", tuple(float(r["coverage"]) for r in coverage.rows)),
                ChartSeries("utilisation ($)", tuple(float(r["utilisation"]) for r in coverage.rows)),
                ChartSeries("effective savings rate", tuple(float(r["esr"]) for r in coverage.rows)),
            ),
            "%",
            "lines",
            "% of USD (planned)",
            "Basis: planned. Coverage and utilisation measured in dollars (FinOps Foundation), as in the table.",
        ),
        Chart(
            "demand",
            f"Demand vs capacity per accelerator, all sites, {demand.title.rsplit(', ', 1)[-1]}",
            tuple(accelerators),
            (
                ChartSeries("demand p50", per_accelerator_total("p50")),
                ChartSeries("demand p90", per_accelerator_total("p90")),
                ChartSeries("pools today", per_accelerator_total("pools")),
                ChartSeries("new commitments", per_accelerator_total("new_committed")),
            ),
            "accelerators",
            "grouped",
            "Accelerators (average concurrent)",
            "All sites together per accelerator: demand without a site may run at any site the team may use, so "
            "it is compared with the capacity of every site. The table below splits both by site.",
        ),
        Chart(
            "band",
            "Cost per quarter, p10 to p90 demand",
            tuple(quarters),
            tuple(
                ChartSeries(label, tuple(float(r[key]) for r in band.rows))
                for key, label in (
                    ("p10", "at p10 demand"),
                    ("expected", "expected (planned)"),
                    ("p90", "at p90 demand"),
                )
            ),
            "USD",
            "band",
            "USD per quarter (exposure)",
            "Shaded: from the cost at p10 demand to the cost at p90 demand (basis: exposure); the line between is "
            "the planned cost. How each bound is estimated: the table below.",
        ),
        *(
            ()
            if not payments.rows
            else (
                Chart(
                    "payments",
                    "Payments for the plan's purchases by month",
                    tuple(r["month"] for r in payments.rows),
                    (
                        ChartSeries("paid upfront", tuple(float(r["upfront"]) for r in payments.rows)),
                        ChartSeries("paid by the hour", tuple(float(r["hourly"]) for r in payments.rows)),
                    ),
                    "USD",
                    "stacked",
                    "USD per month (planned, cash)",
                    "Basis: planned. What the plan's purchases pay in each calendar month: upfront when bought, then "
                    "each month's own hours of their terms, to the end of the last term. Each month: the table below.",
                    label_every=12,
                ),
            )
        ),
        *(
            ()
            if not depreciation.rows
            else (
                Chart(
                    "depreciation",
                    "On-prem capital by month: depreciation and interest",
                    tuple(r["month"] for r in depreciation.rows),
                    (
                        ChartSeries("depreciation", tuple(float(r["depreciation"]) for r in depreciation.rows)),
                        ChartSeries("interest", tuple(float(r["interest"]) for r in depreciation.rows)),
                    ),
                    "USD",
                    "stacked",
                    "USD per month (planned, books)",
                    "Basis: planned; the books, not spend. The straight-line depreciation of the on-prem purchases "
                    "and assets held, each over its life from the month it starts, and the interest of the financed "
                    "ones. Each month, its operating cost and the net book value: the table below.",
                    label_every=12,
                ),
            )
        ),
    )
