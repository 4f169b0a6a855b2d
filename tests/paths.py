"""Where the repository's files are, so the suite runs from any folder (`cd / && pytest <repo>/tests`)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INVENTORY = REPO / "inventory"  # the bundled example inventory
DATA = REPO / "tests" / "data"  # fixtures and golden files
DOCS = REPO / "docs"  # the documentation site
