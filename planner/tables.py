"""The planner's own tables, typed: one row schema per `PlanData` table (data.py builds them, program.py and
build_result.py read them).

A schema is a NamedTuple: its fields are the table's columns, in order, with their Python types. `rows(frame,
Schema)` reads a table as typed rows (what mypy checks, where `itertuples()` gives any scalar), and
`check_tables(data)` holds every table of a `PlanData` to its schema: the columns, and each column's kind of
values (text, whole numbers, real numbers, Decimal USD), so a renamed or retyped column fails where the tables are
built, not as a wrong number in a plan.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from quartermaster.units import Quarter, cached_quarter

if TYPE_CHECKING:
    import pandas as pd


class Offer(NamedTuple):
    """`offers`: where capacity can be had, a machine at a site."""

    offer: str
    site: str
    machine: str
    accelerator: str
    accelerators_per_node: int
    nodes_per_unit: int
    """nodes_per_unit: nodes in one whole unit (a TPU slice's hosts; 1 for GPUs)."""


class RecoursePrice(NamedTuple):
    """`recourse_prices`: a pay-per-use pricing model's price at an offer."""

    offer: str
    pricing_model: str
    term_months: int
    usd_per_node_hour: Decimal
    upfront_usd_per_node: Decimal
    usd_per_node_hour_used: Decimal


class CommitOption(NamedTuple):
    """`commit_options`: a commitment that can be started at an offer."""

    offer: str
    option: str
    pricing_model: str
    term_months: int
    term_quarters: int
    usd_per_node_hour: Decimal
    upfront_usd_per_node: Decimal
    usd_per_node_hour_used: Decimal


class Existing(NamedTuple):
    """`existing`: an inventory commitment in a quarter, as average active nodes and its cost (fixed)."""

    commitment: str
    offer: str
    kind: str
    quarter: Quarter
    nodes: float
    usd: Decimal
    usd_per_node_hour: Decimal


class Cap(NamedTuple):
    """`caps`: a site's supply cap per offer and pricing model."""

    offer: str
    pricing_model: str
    max_nodes: int


class Demand(NamedTuple):
    """`demand`: one load-duration bucket of a demand key in a quarter and scenario."""

    demand_key: str
    team: str
    accelerator: str
    site: str
    quarter: Quarter
    scenario: str
    bucket: int
    weight: float
    """weight: the bucket's share of the quarter's hours."""
    level: float
    """level: demand in the bucket, accelerators."""
    preemptible_share: float


class Curve(NamedTuple):
    """A demand curve's bucket as the planner takes it in (`curves.curves_frame`: the forecast's, from usage, or a
    test's), before the keys share buckets."""

    team: str
    accelerator: str
    site: str
    quarter: Quarter
    scenario: str
    weight: float
    level: float
    preemptible_share: float
    bucket: float
    """bucket: the bucket's number where every key of the quarter shares the same hours (demand from usage), else
    NaN."""


class Route(NamedTuple):
    """`routes`: an offer that may serve a demand key, and its accelerators per accelerator of demand."""

    demand_key: str
    offer: str
    ratio: float


class Budget(NamedTuple):
    """`budgets`: a cost centre's budget in a quarter."""

    cost_center: str
    quarter: Quarter
    usd: Decimal


class Team(NamedTuple):
    """`teams`: a team, its cost centre and the sites it may run at."""

    team: str
    cost_center: str
    sites: str


class Pool(NamedTuple):
    """`pools`: an inventory pool at its largest, for proposed quotas."""

    pool: str
    site: str
    machine: str
    provisioning: str
    accelerators: int


class TailRatio(NamedTuple):
    """`tail_ratio`: demand an offer may serve in a quarter after the horizon over that in its last quarter."""

    offer: str
    quarter: Quarter
    ratio: float


SCHEMAS: dict[str, type[NamedTuple]] = {
    "offers": Offer,
    "recourse_prices": RecoursePrice,
    "commit_options": CommitOption,
    "existing": Existing,
    "caps": Cap,
    "demand": Demand,
    "routes": Route,
    "budgets": Budget,
    "teams": Team,
    "pools": Pool,
    "tail_ratio": TailRatio,
}
"""Each PlanData table and the schema of its rows."""

Row = TypeVar("Row", bound=NamedTuple)

# numpy dtype kinds a column of each Python type may have: text and Decimal are objects (or pandas' string dtype).
_KINDS = {str: "OUT", Quarter: "OUT", int: "iu", float: "fiu", Decimal: "O"}


def columns(schema: type[NamedTuple]) -> list[str]:
    """A schema's columns, in order."""
    return list(schema._fields)


def rows(frame: pd.DataFrame, schema: type[Row]) -> Iterator[Row]:
    """The table's rows as `schema` rows (its columns, in the schema's order; other columns left out), with Python
    values (`tolist`: 5-9x faster than `itertuples` on pandas' Arrow-backed text columns); a `Quarter` column's
    values as `Quarter`s (pandas keeps them as plain text)."""
    hints = _hints(schema)
    return map(schema._make, zip(*(_values(frame[column], hints[column]) for column in columns(schema)), strict=True))


@functools.cache
def _hints(schema: type[NamedTuple]) -> dict[str, type]:
    """A schema's column types (`typing.get_type_hints` resolves the postponed annotations; once per schema)."""
    return typing.get_type_hints(schema)


def _values(column: pd.Series, kind: type) -> list[object]:
    """A column's values as Python values of `kind`: a `Quarter` column's text parsed once per distinct quarter."""
    values = column.tolist()
    return [cached_quarter(text) for text in values] if kind is Quarter else values


def schema_problems(name: str, frame: pd.DataFrame) -> list[str]:
    """How table `name` differs from its schema: missing or extra columns, columns of the wrong kind of values
    (an empty table's columns have no kind yet and are not checked)."""
    schema = SCHEMAS[name]
    want, got = columns(schema), [str(c) for c in frame.columns]
    if want != got:
        return [f"{name}: columns {got}, the schema {schema.__name__} has {want}"]
    if frame.empty:
        return []
    hints = _hints(schema)
    problems = []
    for column in want:
        kind = frame[column].dtype.kind
        python = hints[column]
        if kind not in _KINDS[python] or (python is Decimal and not isinstance(frame[column].iloc[0], Decimal)):
            problems.append(f"{name}.{column}: {frame[column].dtype} values, the schema says {python.__name__}")
    return problems


def check_tables(data: object) -> None:
    """Hold every table of `data` (a `PlanData`, which reads this module: any object with the tables as attributes)
    to its schema; TypeError naming each difference (a bug, not a user's mistake)."""
    problems = [p for name in SCHEMAS if (f := getattr(data, name)) is not None for p in schema_problems(name, f)]
    if problems:
        raise TypeError("planner tables differ from their schemas (planner/tables.py): " + "; ".join(problems))
