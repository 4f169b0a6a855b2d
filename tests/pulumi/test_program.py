"""The project file, the deploy docs' commands and the program's messages for user mistakes."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pulumi
import pytest
import yaml

from tests.builders import make_inventory
from tests.paths import DOCS, INVENTORY
from tests.pulumi.harness import ROOT, STACKS, run_program

MAIN = STACKS / "__main__.py"


def run_main(config: dict[str, str]) -> None:
    run_program("test", config, lambda: runpy.run_path(str(MAIN), run_name="__main__"))


def deploy_docs() -> str:
    """The first-deploy tutorial and the reference of what a stack declares."""
    pages = ("tutorials/first-deploy.md", "reference/cloud-resources.md")
    return "\n".join((DOCS / page).read_text(encoding="utf-8") for page in pages)


def test_the_project_runs_stacks_main_with_the_set_up_virtualenv() -> None:
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert project["name"] == "quartermaster"
    assert project["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": ".venv"}}
    assert (project["main"], project["stackConfigDir"]) == ("stacks/", "stacks/")
    assert (ROOT / project["main"] / "__main__.py").exists()


def test_the_documented_commands_name_a_real_stack_and_the_config_keys_the_program_reads() -> None:
    section = deploy_docs()
    stacks = re.findall(r"pulumi stack select ([\w-]+)", section)
    assert stacks and all((STACKS / f"Pulumi.{s}.yaml").exists() for s in stacks)
    source = MAIN.read_text()
    keys = set(re.findall(r"quartermaster:(\w+)\b(?!:)", section))
    assert keys == {"kubeconfig", "cluster", "inventory", "now"}
    assert all(f'"{key}"' in source for key in keys)


def test_the_component_types_the_docs_name_are_the_components_type_tokens() -> None:
    named = set(re.findall(r"quartermaster:\w+:\w+", deploy_docs()))
    declared = {
        token
        for path in [
            *(ROOT / "modules" / "pulumi").glob("*.py"),
            *(ROOT / "quartermaster" / "providers").glob("*/pulumi_components.py"),
        ]
        for token in re.findall(r'"(quartermaster:\w+:\w+)"', path.read_text())
    }
    assert named and named <= declared


def test_a_broken_inventory_stops_the_program_with_located_errors(tmp_path: Path) -> None:
    directory = make_inventory().team("ml2", quotas={"h100-typo": 8}).write(tmp_path)
    with pytest.raises(pulumi.RunError, match=r"\.yaml:\d+ .*h100-typo"):
        run_main({"quartermaster:inventory": str(directory), "quartermaster:cluster": "gke-a"})


def test_an_unknown_cluster_stops_the_program_naming_the_known_ones() -> None:
    with pytest.raises(pulumi.RunError, match=r"no cluster `gke-nope`.*gke-gpu-us-east4"):
        run_main({"quartermaster:inventory": str(INVENTORY), "quartermaster:cluster": "gke-nope"})
