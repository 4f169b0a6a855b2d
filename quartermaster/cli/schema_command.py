"""`qm schema`: write the inventory's JSON Schema and its reference page, generated from the model, and the JSON
Schema of a plan folder's plan.json, generated from the plan contract."""

from __future__ import annotations

from pathlib import Path

import typer

from quartermaster.cli.command_support import console
from quartermaster.plan_contract import plan_schema_json
from quartermaster.schema import reference_markdown, schema_json

DEFAULT_SCHEMA = Path("inventory/inventory.schema.json")
DEFAULT_REFERENCE = Path("docs/inventory-reference.md")
DEFAULT_PLAN_SCHEMA = Path("docs/reference/plan.schema.json")


def command(
    out: Path = typer.Option(DEFAULT_SCHEMA, help="Where to write the JSON Schema."),
    reference: Path = typer.Option(DEFAULT_REFERENCE, help="Where to write the Markdown reference page."),
    plan: Path = typer.Option(DEFAULT_PLAN_SCHEMA, help="Where to write the JSON Schema of plan.json."),
) -> None:
    """Write the JSON Schema that editors (yaml-language-server) use to complete and check inventory files, its
    reference page, and the JSON Schema of the plan.json that `qm plan --out` writes."""
    for path, text in ((out, schema_json()), (reference, reference_markdown()), (plan, plan_schema_json())):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        console.print(f"wrote {path}")
