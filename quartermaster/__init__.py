"""Quartermaster: capacity-as-code for accelerator fleets.

The core package (model, loader, checks, catalog) imports none of `modules`, `planner`, `reports`
or the CLI; they all import it.
"""

__version__ = "0.2.0"  # moves with every release; CHANGELOG.md says what changed
