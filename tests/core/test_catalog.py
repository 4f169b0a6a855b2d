"""The shipped catalog: fixed headers, sourced facts, TPU shapes, canonical accelerator names."""

from __future__ import annotations

import csv
from importlib import resources

import pytest

from quartermaster.catalog import (
    ACCELERATORS_HEADER,
    MACHINES_HEADER,
    PLATFORM_TAINTS_HEADER,
    TOPOLOGY_LEVELS_HEADER,
    UnknownAccelerator,
    accelerators,
    canonical_accelerator,
)
from quartermaster.model import catalog_machines


def header(filename: str) -> list[str]:
    text = resources.files("quartermaster.catalog").joinpath(filename).read_text()
    return next(csv.reader(text.splitlines()))


def test_csv_headers_are_fixed() -> None:
    assert header("machines.csv") == MACHINES_HEADER
    assert header("accelerators.csv") == ACCELERATORS_HEADER
    assert header("topology_levels.csv") == TOPOLOGY_LEVELS_HEADER
    assert header("platform_taints.csv") == PLATFORM_TAINTS_HEADER


@pytest.mark.parametrize("filename", ["topology_levels.csv", "platform_taints.csv"])
def test_node_facts_cite_a_source_and_name_catalog_machines(filename: str) -> None:
    text = resources.files("quartermaster.catalog").joinpath(filename).read_text()
    machines = {m.name for m in catalog_machines()}
    for row in csv.DictReader(text.splitlines()):
        assert row["source"].startswith("https://") and "read 20" in row["source"], row
        assert set(row.get("machines", "").split(";")) - {""} <= machines, row


def test_every_machine_has_a_source_and_a_known_accelerator() -> None:
    known = accelerators()
    for m in catalog_machines():
        assert m.source.startswith("https://"), m.name
        assert m.accelerator in known, m.name
        assert known[m.accelerator].kind == m.kind, m.name


@pytest.mark.parametrize(
    "name,want_accelerator,want_per_node",
    [
        ("a3-megagpu-8g", "H100-80GB", 8),  # GKE A3 Mega: 8 x H100 80GB
        ("a3-ultragpu-8g", "H200-141GB", 8),  # GKE A3 Ultra: 8 x H200
        ("a4-highgpu-8g", "B200", 8),  # GKE A4: 8 x B200
        ("g2-standard-48", "L4", 4),  # G2 48 vCPU: 4 x L4
        ("p5.48xlarge", "H100-80GB", 8),
        ("p6-b200.48xlarge", "B200", 8),
        ("Standard_ND96isr_H100_v5", "H100-80GB", 8),  # 8 GPUs, not the 12 some catalogs list
        ("ct5p-hightpu-4t", "TPU-v5p", 4),
        ("ct6e-standard-8t", "TPU-v6e", 8),
    ],
)
def test_machine_facts(name: str, want_accelerator: str, want_per_node: int) -> None:
    machine = {m.name: m for m in catalog_machines()}[name]
    assert (machine.accelerator, machine.accelerators_per_node) == (want_accelerator, want_per_node)


def test_tpu_topologies_fit_their_hosts() -> None:
    for m in catalog_machines():
        for topology in m.tpu_topologies:
            chips = 1
            for dim in topology.split("x"):
                chips *= int(dim)
            assert chips % m.accelerators_per_node == 0 or chips < m.accelerators_per_node, (m.name, topology)
    eight_chip_hosts = [m for m in catalog_machines() if m.kind == "tpu" and m.accelerators_per_node == 8]
    assert eight_chip_hosts and all(m.tpu_topologies == ("2x4",) for m in eight_chip_hosts)


@pytest.mark.parametrize(
    "spelling,want",
    [
        ("h100", "H100-80GB"),
        ("H100-80GB", "H100-80GB"),
        ("nvidia-h100-mega-80gb", "H100-80GB"),
        ("Trillium", "TPU-v6e"),
        ("tpu_v5p", "TPU-v5p"),
        ("nvidia-h200-141gb", "H200-141GB"),
    ],
)
def test_spellings_canonicalise(spelling: str, want: str) -> None:
    assert canonical_accelerator(spelling) == want


def test_ambiguous_and_unknown_names_are_refused_with_a_hint() -> None:
    with pytest.raises(UnknownAccelerator, match="ambiguous; write one of A100-40GB, A100-80GB"):
        canonical_accelerator("a100")
    with pytest.raises(UnknownAccelerator, match="did you mean H100-80GB"):
        canonical_accelerator("H100-80G")
