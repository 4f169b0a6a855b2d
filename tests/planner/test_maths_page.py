"""The planner's maths page is generated from the model (issue 27, point 2): the page on disk is what the model's
docstring and constraint-family registry say, and a family without maths cannot be built into a page."""

from __future__ import annotations

import pytest

from quartermaster.planner import maths, program
from tests.paths import REPO

FIX = "docs/explanation/planner-maths.md is stale: run `python -m quartermaster.planner.maths` and commit the page"


def test_the_maths_page_is_the_one_the_model_generates():
    assert (REPO / maths.PAGE).read_text() == maths.page(), FIX


def test_every_family_has_its_maths_and_its_rule_on_the_page():
    page = maths.page()
    for family, add in program.FAMILIES.items():
        assert f"`{family}`" in page
        assert f"{family}_" in page.split("## Constraint families", 1)[1]  # its rows, e.g. budget_cq: ...
        assert f"Added by `{add.__name__}`" in page


def test_a_family_registered_without_maths_stops_the_page(monkeypatch):
    """A new family in the registry whose rows the docstring does not write out: the page would drift."""
    monkeypatch.setitem(program.FAMILIES, "gpu_hours_within_power", program.add_budgets)
    with pytest.raises(maths.MathsDrift, match="gpu_hours_within_power have no maths"):
        maths.page()


@pytest.mark.parametrize(
    ("word", "want"),
    [
        ("budget_cq", "budget"),  # a family and its index
        ("supply_cap_jmqsb", "supply_cap"),
        ("post_horizon_credit_within_demand_jl", "post_horizon_credit_within_demand"),  # not last_quarter_...
        ("residency", None),  # a variable domain, not a row
        ("budgets_cq", None),  # a misspelt family names none
    ],
)
def test_an_entry_belongs_to_the_family_it_starts_with(word, want):
    assert maths.family_of(word) == want
