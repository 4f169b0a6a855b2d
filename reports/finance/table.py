"""The finance report's building blocks: typed table rows, tables, charts and past / current amounts.

A table's rows are frozen dataclasses (`Row`): every column of a table names a field of its row type, checked when
the table is built, and `row[key]` raises for a name the row lacks, so a renamed field fails loudly instead of
printing $0.00.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any, ClassVar, Literal

Kind = Literal["text", "money", "rate", "delta", "pct", "pct_change", "number", "int"]
"""Column kinds: `rate` is money per unit (USD per accelerator-hour), shown to 4 decimals; `pct` a share
(`80.7%`); `pct_change` a relative change with its sign (`+191.1%`), never percentage points."""
ZERO = Decimal(0)
CENTS = Decimal("0.00")
"""The start of a sum of money: an empty sum shows as $0.00."""


@dataclass(frozen=True)
class Row:
    """A typed table row. `row[key]` is the field `key` (or a `parts` entry of a row with per-key columns); a
    KeyError names the row type and the key when it has no such field."""

    PARTS: ClassVar[str | None] = None
    """PARTS: the name of a Mapping field holding columns named at run time (a pricing model per column)."""

    def cell_keys(self) -> list[str]:
        """The row's column keys: its fields, and the keys of its parts."""
        names = [f.name for f in fields(self) if f.name != self.PARTS]
        return names + (list(getattr(self, self.PARTS)) if self.PARTS else [])

    def __contains__(self, key: object) -> bool:
        return key in self.cell_keys()

    def __getitem__(self, key: str) -> Any:
        if key in self.__dataclass_fields__ and key != self.PARTS:
            return getattr(self, key)
        if self.PARTS and key in getattr(self, self.PARTS):
            return getattr(self, self.PARTS)[key]
        raise KeyError(f"{type(self).__name__} has no field `{key}`")


@dataclass(frozen=True)
class Amount:
    """A figure now, in the previous plan (None without one) and the change."""

    current: Decimal
    previous: Decimal | None = None

    @property
    def delta(self) -> Decimal | None:
        return None if self.previous is None else self.current - self.previous

    def to_dict(self) -> dict[str, Any]:
        return {"current": self.current, "previous": self.previous, "delta": self.delta}


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: Kind = "text"


NAME_COLUMN = Column("cost_center_name", "Cost centre name")


@dataclass(frozen=True)
class PagePart:
    """One HTML table of a `Table` on the page: its element id, its columns, and whether it shows the total row
    (only when one of its columns after the first has a total)."""

    id: str
    columns: tuple[Column, ...]
    total: bool


@dataclass(frozen=True)
class Table:
    """One table of the report: the same object feeds the HTML page, a workbook sheet and a CSV file. `total`: the
    total row (fields it leaves None are shown empty)."""

    name: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    note: str = ""
    total: Row | None = None
    parts: tuple[tuple[str, ...], ...] = ()
    """parts: on the page, a table too wide for a 1280-pixel screen is shown as these sets of column keys, one table
    each, in order (each set starts with the columns that name a row); () shows one table. The CSV, the workbook and
    the JSON keep one table."""

    def __post_init__(self) -> None:
        for row in (*self.rows, *([self.total] if self.total is not None else [])):
            missing = [c.key for c in self.columns if c.key not in row]
            if missing:
                raise KeyError(f"table {self.name}: {type(row).__name__} has no field {', '.join(missing)}")
        keys = [c.key for c in self.columns]
        unknown = [k for part in self.parts for k in part if k not in keys]
        unshown = [k for k in keys if self.parts and not any(k in part for part in self.parts)]
        if unknown or unshown:
            raise KeyError(f"table {self.name}: parts name no column {unknown} or leave out {unshown}")

    def page_parts(self) -> tuple[PagePart, ...]:
        """The HTML tables this table is shown as: one, or one per `parts` entry (ids `table-<name>`, then
        `table-<name>-2`, ...)."""
        by_key = {c.key: c for c in self.columns}
        sets = [tuple(by_key[k] for k in part) for part in self.parts] or [self.columns]
        return tuple(
            PagePart(
                f"table-{self.name}" + (f"-{i}" if i > 1 else ""),
                columns,
                self.total is not None and any(self.total[c.key] not in (None, "") for c in columns[1:]),
            )
            for i, columns in enumerate(sets, start=1)
        )

    def to_dict(self) -> dict[str, Any]:
        """The table as plain data: each row (and the total) as {column key: value}."""

        def cells(row: Row) -> dict[str, Any]:
            return {c.key: row[c.key] for c in self.columns}

        return {
            "name": self.name,
            "title": self.title,
            "note": self.note,
            "columns": [{"key": c.key, "label": c.label, "kind": c.kind} for c in self.columns],
            "rows": [cells(r) for r in self.rows],
            "total": None if self.total is None else cells(self.total),
        }


def column_sums(rows: Sequence[Row], keys: tuple[str, ...]) -> Mapping[str, Decimal]:
    """Each of `keys` added up over `rows` (None counts as nothing): a total row is the sum of the rows shown."""
    return {k: sum((r[k] for r in rows if r[k] is not None), CENTS) for k in keys}


@dataclass(frozen=True)
class ChartSeries:
    name: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class Chart:
    """Numbers for one chart (plain floats: charts are pictures, the tables keep the exact money)."""

    name: str
    title: str
    categories: tuple[str, ...]
    series: tuple[ChartSeries, ...]
    unit: str
    kind: Literal["stacked", "grouped", "lines", "band", "waterfall"]
    """kind: `band` draws lines and shades the area between the first and the last series; `waterfall` draws its one
    series' first and last values as bars from zero and each value between as a step from the running total."""
    y_title: str = ""
    """y_title: the y axis's title: what is measured, its unit and basis."""
    caption: str = ""
    """caption: a sentence under the chart saying what it shows."""
    label_every: int = 1
    """label_every: an x label on every n-th category only, from the first (12 on a monthly series: one a year)."""
