"""No two product files share a name unless they play the same part: a file's name says what it does, so a reader
who meets `meter.py` knows which one is meant. The CLI names each command module after its command
(`quartermaster/cli/<command>_command.py`), so a command never shares the name of the library module it calls.

Two kinds of file share a name by design: `__init__.py`, and a provider package's emitters
(`quartermaster/providers/<name>/cloud.py`, `pulumi_components.py`, `terraform_resources.py`), which the emitter layer
imports by these names (`CLOUD_PART`, `PULUMI_PART`, `TERRAFORM_PART`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import PurePosixPath

from tests.paths import REPO

PRODUCT = ("quartermaster", "planner", "modules", "reports", "stacks")
PROVIDERS = PurePosixPath("quartermaster/providers")
PROVIDER_PARTS = ("cloud.py", "pulumi_components.py", "terraform_resources.py")


def product_files() -> list[PurePosixPath]:
    """Every file of the product folders, from the repository root (compiled bytecode left out)."""
    return sorted(
        PurePosixPath(path.relative_to(REPO).as_posix())
        for tree in PRODUCT
        for path in (REPO / tree).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )


def same_part(name: str, paths: list[PurePosixPath]) -> bool:
    """Whether files of one name all play one part: package markers, or the same emitter of each provider."""
    if name == "__init__.py":
        return True
    return name in PROVIDER_PARTS and all(path.parent.parent == PROVIDERS for path in paths)


def name_clashes(paths: Iterable[PurePosixPath]) -> dict[str, list[str]]:
    """{file name: its paths} for every name that more than one file carries in different parts."""
    by_name: dict[str, list[PurePosixPath]] = defaultdict(list)
    for path in paths:
        by_name[path.name].append(path)
    return {
        name: sorted(str(p) for p in found)
        for name, found in sorted(by_name.items())
        if len(found) > 1 and not same_part(name, found)
    }


def test_no_two_product_files_share_a_name() -> None:
    files = product_files()
    assert len(files) > 100, "the scan reads the product, not an empty folder"
    clashes = name_clashes(files)
    assert clashes == {}, "name each file after what it does (a CLI command module: `<command>_command.py`):\n" + (
        "\n".join(f"{name}: {', '.join(paths)}" for name, paths in clashes.items())
    )


def test_a_shared_name_is_a_clash_unless_the_files_play_one_part() -> None:
    def clashes(*paths: str) -> list[str]:
        return list(name_clashes(PurePosixPath(p) for p in paths))

    # two `validate.py` doing different things (the command and the Kueue manifest checks)
    assert clashes("quartermaster/cli/validate.py", "modules/kueue/validate.py") == ["validate.py"]
    # every provider's specs are `cloud.py` of its package, and every package has its marker
    assert clashes("quartermaster/providers/gke/cloud.py", "quartermaster/providers/eks/cloud.py") == []
    assert clashes("planner/__init__.py", "reports/__init__.py") == []
    # a `cloud.py` outside a provider package is not a provider's specs
    assert clashes("quartermaster/providers/gke/cloud.py", "modules/cloud/cloud.py") == ["cloud.py"]
    assert clashes("quartermaster/providers/gke/data/cloud.py", "quartermaster/providers/eks/cloud.py") == ["cloud.py"]
