"""The plan as a contract (issue 27, point 2): `PlanResult` and its rows are core data, read without the solver.

A written plan is loaded in a fresh interpreter, so what the import pulled in is exactly what `sys.modules` shows.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import typing
from pathlib import Path

import jsonschema
import pytest

from quartermaster.plan_contract import (
    EXISTING,
    NEW,
    PLAN_FORMAT_VERSION,
    ROWS,
    PlanResult,
    load_result,
    plan_schema_json,
)
from quartermaster.units import Quarter
from tests.paths import DATA, REPO
from tests.planner.planning import curves, one_site, run

PLAN_SCHEMA = REPO / "docs" / "reference" / "plan.schema.json"

UNIFORM = list(range(1, 101))  # 1..100 GPUs, one hour each: the plan buys commitments and pay-per-use both
SOLVER_AND_TABLES = ("pulp", "highspy", "pandas", "numpy", "quartermaster.planner")

LOAD_IN_A_FRESH_INTERPRETER = """
import pickle, sys
from quartermaster.plan_contract import load_result
result = load_result(sys.argv[1])
loaded = sorted(m for m in {modules!r} if m in sys.modules)
sys.stdout.buffer.write(pickle.dumps((result, loaded)))
"""


def test_a_written_plan_loads_without_the_solver_or_pandas(tmp_path):
    result = run(one_site(on_demand=10, commit_12=6, spot=3), curves("ml", ["2027Q1"], hourly=UNIFORM))
    result.write(tmp_path)
    assert result.purchase_schedule and result.routing  # the tables the reports read are not empty

    script = LOAD_IN_A_FRESH_INTERPRETER.format(modules=SOLVER_AND_TABLES)
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, check=True)
    loaded, imported = pickle.loads(out.stdout)

    assert imported == []  # none of pulp, highspy, pandas, numpy or the planner package
    assert loaded == result  # every field and typed row, as the planner made them


def _quarter_values(plan: PlanResult) -> list[object]:
    """The values of every field typed Quarter in a plan: its quarters and each table's quarter columns."""
    out: list[object] = list(plan.quarters)
    for table, row_type in ROWS.items():
        names = [name for name, hint in typing.get_type_hints(row_type).items() if hint is Quarter]
        out += [getattr(row, name) for row in getattr(plan, table) for name in names]
    return out


def test_a_quarter_field_holds_a_quarter_as_made_and_as_read_back(tmp_path):
    """Pandas and JSON give quarters as plain text; the plan's fields typed Quarter hold `Quarter`s (issue 39, point
    5), as the planner makes them and as plan.json is read back. A ledger line's quarter is one too, or empty."""
    result = run(one_site(on_demand=10, commit_12=6, spot=3), curves("ml", ["2027Q1", "2027Q2"], hourly=UNIFORM))
    result.write(tmp_path)
    for plan in (result, load_result(tmp_path)):
        values = _quarter_values(plan)
        assert len(values) > len(plan.quarters)  # the tables' quarter columns, not only the horizon
        assert {type(v) for v in values} == {Quarter}
        assert {type(x.quarter) for x in plan.ledger if x.quarter} == {Quarter}


def test_the_routing_tiers_are_named_by_the_contract():
    """The finance report tells spare hours of existing commitments from new ones by these names alone."""
    result = run(one_site(on_demand=10, commit_12=6), curves("ml", ["2027Q1"], hourly=UNIFORM))
    assert {r.tier for r in result.routing} <= {EXISTING, NEW, "on-demand"}
    assert NEW in {r.tier for r in result.routing}  # commit_12 at 6 < 10 on demand: the plan buys some


def test_the_reports_read_the_contracts_not_the_planner():
    """Every module under reports/ (finance and its tables, the sweep section, FOCUS, the quota diff, metering)
    imported in a fresh interpreter: none of them pulls in the planner package or the solver."""
    paths = (p.relative_to(REPO).with_suffix("").parts for p in (REPO / "reports").rglob("*.py"))
    modules = sorted("quartermaster." + ".".join(part for part in parts if part != "__init__") for parts in paths)
    script = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in ('pulp', 'highspy', 'quartermaster.planner') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert len(modules) > 20  # finance/tables alone has 17
    assert out.stdout.strip() == "[]"


def test_the_committed_plan_schema_is_fresh():
    assert PLAN_SCHEMA.read_text() == plan_schema_json(), "Run `qm schema` and commit the result."


@pytest.mark.parametrize("folder", [DATA / "reports" / "plan", DATA / "reports" / "previous-plan"])
def test_the_stored_example_plans_validate_against_the_committed_schema(folder: Path):
    jsonschema.validate(json.loads((folder / "plan.json").read_text()), json.loads(PLAN_SCHEMA.read_text()))


def test_a_written_plan_validates_and_the_schema_refuses_what_the_reader_refuses(tmp_path):
    """plan.json as written carries its format version and validates; the schema, like `load_result`, refuses a
    plan of another version, a key no plan has, and a table row missing a field."""
    run(one_site(on_demand=10, commit_12=6), curves("ml", ["2027Q1"], hourly=UNIFORM)).write(tmp_path)
    doc = json.loads((tmp_path / "plan.json").read_text())
    schema = json.loads(PLAN_SCHEMA.read_text())
    assert doc["format_version"] == PLAN_FORMAT_VERSION
    jsonschema.validate(doc, schema)
    row = {k: v for k, v in doc["purchase_schedule"][0].items() if k != "nodes"}
    for bad in ({**doc, "format_version": 2}, {**doc, "budgets": []}, {**doc, "purchase_schedule": [row]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
