"""The cycle collector is off inside `paused()` and back in its previous state afterwards, also after an error and
when the caller had it off already."""

from __future__ import annotations

import datetime as dt
import gc
from types import SimpleNamespace

import pytest

from quartermaster import cycle_collector
from quartermaster.loader import load
from quartermaster.modules.kueue import objects_for_cluster
from quartermaster.plan_contract import Outcome
from quartermaster.planner.build_result import collect


def test_paused_turns_the_collector_off_and_restores_it() -> None:
    assert gc.isenabled()
    with cycle_collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), cycle_collector.paused():
        raise RuntimeError("a failing stage")
    assert gc.isenabled()


def test_paused_leaves_a_collector_the_caller_turned_off_off() -> None:
    gc.disable()
    try:
        with cycle_collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Seen(Exception):
    """Stops a stage once it has shown whether the collector runs."""


def test_loading_an_inventory_runs_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    monkeypatch.setattr("quartermaster.loader._load", lambda *args: seen.append(gc.isenabled()))
    load("inventory")
    assert seen == [False]
    assert gc.isenabled()


def test_collecting_a_plan_runs_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """`collect` (the plan's result tables) runs with the collector off: seen from the first thing it prices."""
    seen: list[bool] = []

    def first_price(model: object) -> None:
        seen.append(gc.isenabled())
        raise _Seen

    monkeypatch.setattr("quartermaster.planner.build_result.on_demand_equivalent_price", first_price)
    data = SimpleNamespace(quarters=(), notes=(), options=None, actuals_until=None, forecast=None)
    report = SimpleNamespace(outcome=Outcome.OPTIMAL, solver="highs", status="Optimal", gap=None, seconds=0.0, note="")
    with pytest.raises(_Seen):
        collect(SimpleNamespace(data=data), report)  # type: ignore[arg-type]
    assert seen == [False]
    assert gc.isenabled()


def test_building_kueue_objects_runs_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cluster's Kueue objects are built and written as manifests with the collector off."""
    seen: list[bool] = []

    def manifest(obj: object, version: str) -> dict[str, str]:
        seen.append(gc.isenabled())
        return {}

    monkeypatch.setattr("quartermaster.modules.kueue.builders.to_manifest", manifest)
    inventory = load("inventory").inventory
    assert inventory is not None
    cluster = inventory.clusters[0].name
    objects_for_cluster(inventory, cluster, dt.datetime(2026, 11, 27, tzinfo=dt.UTC))
    assert seen and not any(seen)
    assert gc.isenabled()
