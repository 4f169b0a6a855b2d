"""`qm schema`: write the inventory's JSON Schema and its reference page, generated from the model."""

from __future__ import annotations

from pathlib import Path

import typer

from quartermaster.cli.common import console
from quartermaster.schema import reference_markdown, schema_json

DEFAULT_SCHEMA = Path("inventory/inventory.schema.json")
DEFAULT_REFERENCE = Path("docs/inventory-reference.md")


def command(
    out: Path = typer.Option(DEFAULT_SCHEMA, help="Where to write the JSON Schema."),
    reference: Path = typer.Option(DEFAULT_REFERENCE, help="Where to write the Markdown reference page."),
) -> None:
    """Write the JSON Schema that editors (yaml-language-server) use to complete and check inventory files."""
    for path, text in ((out, schema_json()), (reference, reference_markdown())):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        console.print(f"wrote {path}")
