"""The planner's own tables against their schemas (planner/tables.py; issue 27, point 2)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pandas as pd
import pytest

from quartermaster.loader import load
from quartermaster.planner import PlanOptions, build_data
from quartermaster.planner.tables import SCHEMAS, Demand, Offer, check_tables, columns, rows
from quartermaster.units import Quarter
from tests.paths import INVENTORY


@pytest.fixture(scope="module")
def example():
    return build_data(load(INVENTORY, run_checks=False).inventory, PlanOptions())


def test_every_table_of_the_example_has_its_schema(example):
    check_tables(example)  # raises on any difference
    for name, schema in SCHEMAS.items():
        assert list(getattr(example, name).columns) == columns(schema)
    assert all(isinstance(r.usd, Decimal) for r in rows(example.budgets, SCHEMAS["budgets"]))  # USD, not float


def test_rows_are_typed_rows_in_the_schemas_column_order(example):
    shuffled = example.offers[list(reversed(example.offers.columns))]
    got = list(rows(shuffled, Offer))
    assert [r.offer for r in got] == list(example.offers["offer"])
    # a3-megagpu-8g and every other GPU machine of the example carry 8 GPUs a node
    assert all(isinstance(r, Offer) and r.accelerators_per_node >= 1 for r in got)


def test_a_quarter_column_reads_as_quarters_with_their_calendar(example):
    """pandas keeps a quarter column as plain text; its rows carry `Quarter`s (issue 39, point 5)."""
    got = list(rows(example.demand, Demand))
    assert {r.quarter for r in got} == set(example.demand["quarter"])  # the same text
    assert all(type(r.quarter) is Quarter for r in got)  # plain str has no calendar: `.first_day`, `+ 1`, ...


@pytest.mark.parametrize(
    ("table", "change", "want"),
    [
        # a renamed column: the model would read a KeyError, or a report $0
        ("offers", lambda f: f.rename(columns={"accelerators_per_node": "gpus_per_node"}), "offers: columns"),
        # whole nodes turned into reals
        ("caps", lambda f: f.astype({"max_nodes": float}), "caps.max_nodes: float64 values, the schema says int"),
        # money as float instead of Decimal USD
        ("budgets", lambda f: f.astype({"usd": float}), "budgets.usd: float64 values, the schema says Decimal"),
    ],
)
def test_a_table_that_leaves_its_schema_is_named(example, table, change, want):
    with pytest.raises(TypeError, match=want.replace(".", r"\.")):
        check_tables(replace(example, **{table: change(getattr(example, table))}))


def test_an_empty_table_has_no_kinds_to_check(example):
    empty = pd.DataFrame(columns=columns(SCHEMAS["caps"]))  # object columns, as build_data makes them
    check_tables(replace(example, caps=empty))
