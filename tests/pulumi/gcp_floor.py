"""The pulumi-gcp classes and keyword arguments the Pulumi program passes (read from `modules/pulumi/*.py` and the
providers' `pulumi_components.py` with `ast`), and a writer of what a pulumi-gcp release's Python SDK declares for them:

    python -m tests.pulumi.gcp_floor <pulumi-gcp checkout> <floor tag> <the release before it>

writes tests/data/pulumi/pulumi_gcp_floor.json: per release, per class, the parameters of its `__init__` (or the
data source's function) in pulumi/pulumi-gcp's `sdk/python/pulumi_gcp/`. Classes whose file the checkout does not
hold (a snapshot leaves out its largest files, such as `compute/_inputs.py`) are listed as unread.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from tests.paths import DATA, REPO

FLOOR = DATA / "pulumi" / "pulumi_gcp_floor.json"
SOURCES = (
    "container/_inputs.py",
    "container/node_pool.py",
    "cloudquota/_inputs.py",
    "cloudquota/s_quota_preference.py",
    "cloudquota/get_s_quota_info.py",
    "compute/reservation.py",
    "compute/get_reservation.py",
)


def used() -> dict[str, set[str]]:
    """`container.NodePoolArgs` -> the keyword arguments the program passes it."""
    out: dict[str, set[str]] = {}
    components = (REPO / "quartermaster" / "providers").glob("*/pulumi_components.py")
    for path in sorted([*(REPO / "modules" / "pulumi").glob("*.py"), *components]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                value = node.func.value
                if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "gcp":
                    name = f"{value.attr}.{node.func.attr}"
                    out.setdefault(name, set()).update(k.arg for k in node.keywords if k.arg)
    return out


def declared(checkout: Path, tag: str) -> dict[str, list[str]]:
    """Class -> its `__init__` parameters, for the classes `used()` names, as the tag's SDK declares them."""
    wanted = used()
    out: dict[str, list[str]] = {}
    for source in SOURCES:
        text = subprocess.run(
            ["git", "-C", str(checkout), "show", f"{tag}:sdk/python/pulumi_gcp/{source}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        module = source.split("/")[0]
        for node in ast.parse(text).body:
            name = f"{module}.{getattr(node, 'name', '')}"
            if name not in wanted:
                continue
            if isinstance(node, ast.ClassDef):  # every overload of __init__ (a resource takes args= or keywords)
                inits = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
                out[name] = sorted({a.arg for f in inits for a in f.args.args[1:] + f.args.kwonlyargs})
            elif isinstance(node, ast.FunctionDef):  # a data source read
                out[name] = sorted(a.arg for a in node.args.args + node.args.kwonlyargs)
    return out


if __name__ == "__main__":
    checkout = Path(sys.argv[1])
    releases = {}
    for role, tag in (("floor", sys.argv[2]), ("before", sys.argv[3])):
        classes = declared(checkout, tag)
        releases[role] = {"tag": tag, "classes": classes, "unread": sorted(set(used()) - set(classes))}
    FLOOR.write_text(json.dumps(releases, indent=1, sort_keys=True) + "\n")
