"""The reservation planner: demand and prices -> a PuLP MILP -> a purchase plan and proposed quotas.

Four steps, one module each: `data` (tables in), `model` (the problem), `solve` (typed outcome),
`results` (tables out). `plan(inventory, options)` runs them; `load_result(dir)` reads a written plan.
"""

from planner.data import PlanInputError, PlanOptions, build_data
from planner.pipeline import plan
from planner.results import PlanResult, load_result
from planner.solve import Outcome

__all__ = ["Outcome", "PlanInputError", "PlanOptions", "PlanResult", "build_data", "load_result", "plan"]
