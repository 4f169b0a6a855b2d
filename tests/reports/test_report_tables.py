"""The finance report's typed tables and the one rounding rule of a plan's money (issue 26, points 4 and 9)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest

from quartermaster.reports.finance.table import Column, Row, Table


@dataclass(frozen=True)
class _Line(Row):
    team: str
    usd: Decimal


def test_a_column_naming_a_field_the_row_lacks_fails_when_the_table_is_built() -> None:
    # issue 26 point 9: a renamed field must fail loudly, not print $0.00
    with pytest.raises(KeyError, match="_Line has no field cost_usd"):
        Table("t", "T", (Column("team", "Team"), Column("cost_usd", "Cost", "money")), (_Line("a", Decimal(1)),))
    row = _Line("a", Decimal("1.50"))
    assert row["usd"] == Decimal("1.50")
    with pytest.raises(KeyError, match="no field `cost_usd`"):
        row["cost_usd"]
