"""The finance report's tables, one module per table (or per pair built from one computation), each with its typed
row. Every builder reads the plan (`PlanResult`) and the inventory and returns `table.Table`s; money is rounded by
the one rule of `quartermaster.plan_figures`."""
