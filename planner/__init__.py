"""The reservation planner: demand and prices -> a PuLP MILP -> a purchase plan and proposed quotas.

Four steps, one module each: `data` (tables in), `model` (the problem), `solve` (typed outcome), `build_result`
(the solved model as the plan contract's `PlanResult`). `plan(inventory, options)` runs them; `load_result(dir)`
reads a written plan.
"""

# Installed as `quartermaster.planner`; the bare folder name is importable only by accident (the repo root on sys.path).
if __name__ != "quartermaster.planner":
    raise ImportError(f"`{__name__}` is not a package of its own: import `quartermaster.planner` instead")

from quartermaster.plan_contract import Outcome, PlanResult, load_result
from quartermaster.planner.data import build_data
from quartermaster.planner.options import PlanInputError, PlanOptions
from quartermaster.planner.pipeline import plan

__all__ = ["Outcome", "PlanInputError", "PlanOptions", "PlanResult", "build_data", "load_result", "plan"]
