"""Fixtures of the Pulumi tests; the mock harness is `tests/pulumi/harness.py`."""

from __future__ import annotations

import pytest

from quartermaster.loader import load
from quartermaster.model import Inventory
from tests.pulumi.harness import ROOT


@pytest.fixture(scope="session")
def inventory() -> Inventory:
    result = load(ROOT / "inventory")
    assert result.ok, [i.format() for i in result.issues]
    return result.inventory
