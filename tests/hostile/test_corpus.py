"""Runs the hostile-input corpus (`tests/hostile/corpus.py`): each case in a `qm` process of its own, with the
outcome it names and the guards that hold for every case: no traceback, at most 2 s of CPU for the command's work on
its input and 500 MB of memory for the process, no byte changed outside the command's own outputs, no stray files
(temporary files included: the process's TMPDIR is a folder of the case)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

import pytest

from tests.hostile.corpus import CASES, Case

pytestmark = pytest.mark.slow  # a qm process per case
SECONDS = 2.0
MEGABYTES = 500
PRELOADED = (
    "pandas",
    "pyarrow.csv",
    "openpyxl",
    "jinja2",
    "ruamel.yaml",
    "quartermaster.loader",
    "quartermaster.edit",
    "quartermaster.metering",
    "quartermaster.reports.focus",
    "quartermaster.reports.quota_diff",
    "quartermaster.modules.kueue",
    "quartermaster.planner",
)
RUN = f"""
import importlib, os, sys, time
from quartermaster.cli import app
for name in {PRELOADED!r}:
    importlib.import_module(name)
start = time.process_time()
try:
    app(args=sys.argv[1:], prog_name="qm")
finally:
    seconds = time.process_time() - start
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["QM_CASE_SECONDS"], "w") as out:
        out.write(f"{{seconds}} {{peak}}")
"""
"""The command, timed in CPU seconds from after the imports of the CLI and of the libraries the commands load (the
same second or two whatever the input; `bench/` times what a user waits for end to end) to its exit: the guard is
about runaway work on hostile input (an alias bomb took 47 s, a loop never ends), not about library start-up or how
busy the machine running the tests is. With it, the process's own peak memory (VmHWM, KiB): the rusage of a child
also counts the memory of the process it was forked from, a pytest worker of several hundred MB."""


UNPRIVILEGED = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]
"""Root without the capabilities that let it read any file (util-linux `setpriv`), for `Case.unprivileged`."""


def _snapshot(folder: Path) -> dict[str, str]:
    """Every path under `folder` with a digest of its bytes (a link: its target; a folder: 'dir'). Git's own
    files are left out: git refreshes its index when asked for a diff."""
    out = {}
    for path in folder.rglob("*"):
        rel = path.relative_to(folder).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_dir():
            out[rel] = "dir"
        else:
            try:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            except PermissionError:
                out[rel] = "unreadable"
    return out


def _within(rel: str, outputs: tuple[str, ...]) -> bool:
    return any(rel == o or rel.startswith(o + "/") for o in outputs)


def _run(case: Case, folder: Path, url: str) -> tuple[int, str, float, float]:
    """Exit code, output (stdout and stderr), seconds and peak megabytes of one case's command (`{url}` in its
    arguments replaced by `url`)."""
    timing = folder.parent / "seconds"
    temp = folder.parent / "tmp"
    temp.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("QM_PROMETHEUS_")},
        **dict(case.env),
        "QM_CASE_SECONDS": str(timing),
        "TMPDIR": str(temp),
        "COLUMNS": "200",
        "NO_COLOR": "1",
    }
    with open(folder.parent / "output", "w+b") as output:
        command = [sys.executable, "-c", RUN, *(a.replace("{url}", url) for a in case.args)]
        if case.unprivileged and os.geteuid() == 0:
            command = [*UNPRIVILEGED, *command]
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=output, stderr=subprocess.STDOUT)
        process.wait()
        output.seek(0)
        text = output.read().decode("utf-8", errors="replace")
    assert not list(temp.iterdir()), f"stray temporary files: {sorted(p.name for p in temp.iterdir())}"
    seconds, peak_kib = timing.read_text().split()
    return process.returncode, text, float(seconds), int(peak_kib) / 1024


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input(case: Case, tmp_path: Path) -> None:
    folder = tmp_path / "case"
    folder.mkdir()
    case.build(folder)
    before = _snapshot(folder)
    with case.serve(folder) if case.serve else nullcontext("") as url:
        code, output, seconds, megabytes = _run(case, folder, url)
    assert "Traceback" not in output, output
    assert code == case.exit, output
    for text in case.says:
        assert text in output, output
    for text in case.never:
        assert text not in output, output
    assert output.count("\n") <= case.max_lines, output
    after = _snapshot(folder)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert {p for p in changed if not _within(p, case.outputs)} == set(), "changed outside the command's outputs"
    if case.check is not None:
        case.check(folder)
    assert seconds < SECONDS, f"{case.id}: {seconds:.2f} s"
    assert megabytes < MEGABYTES, f"{case.id}: {megabytes:.0f} MB"


def test_the_corpus_has_every_finding_of_the_issues() -> None:
    assert {c.item for c in CASES if c.issue == 17} == set(range(1, 11))
    # 30 (the workflow's permissions per job) is no input to a command: tests/prdiff/test_ci.py asserts it
    assert {c.item for c in CASES if c.issue == 29} | {30} == set(range(1, 31))
    assert len({c.id for c in CASES}) == len(CASES)
