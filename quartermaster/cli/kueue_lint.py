"""`qm validate --kueue FILE_OR_DIR`: lint any Kueue manifests against Kueue v0.19.2's own rules."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from quartermaster.cli.command_support import console, print_issue
from quartermaster.errors import ProblemsFound
from quartermaster.model import Inventory


def lint(path: Path, inventory: Inventory | None = None) -> None:
    """Print every problem (errors first) and a summary; raise `ProblemsFound` if any is an error. With the
    inventory, the objects of each of its clusters are also checked for admission: a queue that could never get
    nodes, or whose workloads Kueue would refuse, is named with the reason."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.modules.kueue import validate_path

    manifests, issues = validate_path(path)
    if inventory is not None:
        from quartermaster.modules.kueue.admission import manifest_refusals

        issues += manifest_refusals(inventory, manifests, dt.datetime.now(dt.UTC))
    for issue in sorted(issues, key=lambda i: i.severity != "error"):
        print_issue(issue)
    errors = sum(1 for i in issues if i.severity == "error")
    warnings = len(issues) - errors
    kueue = sum(
        1
        for m in manifests
        if isinstance(m.obj, dict) and str(m.obj.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
    )
    summary = f"{path}: {len(manifests)} objects ({kueue} Kueue), {errors} error(s), {warnings} warning(s)"
    if any("[Kueue rule " in issue.message for issue in issues):
        summary += "; Kueue rule n is rule n of docs/reference/kueue-rules.md (Kueue v0.19.2, with its sources)"
    if errors:
        raise ProblemsFound(summary)
    console.print(f"OK: {summary}", markup=False)
