"""The command examples of the documentation run as shown.

A fenced `bash` or `console` block right under the comment `<!-- runnable -->` in README.md or a page of docs/
is executed, the page's blocks in order, in one scratch folder laid out like the repository root: a git
checkout of the example inventory, `.github/` (for `qm codeowners --check`) and `.gitignore`, `tests/` linked
(Kueue's examples in tests/data), and `.venv/bin/qm` linked to the `qm` under test. A `bash` block runs
as one script under `set -euo pipefail`. A `console` block is lines `$ command` (a trailing backslash continues
one), each followed by what the page shows it printing: every shown line must be in the command's output
(whitespace aside; a `...` line stands for lines left out). Each command must exit 0, the last of a block the
code its marker names (`<!-- runnable exit=1 -->`). No command may print a traceback. A page undoes what it
changes: after its last block, `git status` shows nothing (what it writes goes where git ignores it, `out/`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import DOCS, REPO
from tests.prdiff.repo import QuotaRepo

MARKED = re.compile(
    r"^<!-- runnable(?: exit=(?P<exit>\d+))? -->\n```(?P<lang>bash|console)\n(?P<body>.*?)^```$", re.M | re.S
)


@dataclass(frozen=True)
class Step:
    command: str
    shown: tuple[str, ...]  # the output lines the page shows
    exit_code: int


@dataclass(frozen=True)
class Block:
    line: int
    steps: tuple[Step, ...]


def parse_console(body: str, exit_code: int) -> list[Step]:
    """`$ command` lines (backslash continues) and the output lines under each."""
    commands: list[list[str]] = []
    outputs: list[list[str]] = []
    continued = False
    for line in body.splitlines():
        if continued:
            commands[-1].append(line)
        elif line.startswith("$ "):
            commands.append([line[2:]])
            outputs.append([])
        else:
            assert commands, f"output before any `$ command`: {line!r}"
            if line.strip() and line.strip() != "...":
                outputs[-1].append(line)
        continued = line.endswith("\\")
    last = len(commands) - 1
    return [
        Step("\n".join(command), tuple(shown), exit_code if i == last else 0)
        for i, (command, shown) in enumerate(zip(commands, outputs, strict=True))
    ]


def runnable_blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in MARKED.finditer(text):
        exit_code = int(match["exit"] or 0)
        if match["lang"] == "bash":
            steps = [Step(match["body"], (), exit_code)]
        else:
            steps = parse_console(match["body"], exit_code)
        blocks.append(Block(text.count("\n", 0, match.start()) + 2, tuple(steps)))
    return blocks


PAGES = sorted(p.relative_to(REPO).as_posix() for p in [REPO / "README.md", *DOCS.rglob("*.md")] if runnable_blocks(p))


def scratch_checkout(tmp_path: Path) -> Path:
    """A git checkout of the example inventory and .github/, with .venv/bin/qm the qm under test."""
    repo = QuotaRepo.create(tmp_path)
    shutil.copytree(REPO / ".github", repo.root / ".github")
    shutil.copy(REPO / ".gitignore", repo.root / ".gitignore")
    repo.commit("CI, CODEOWNERS and what git ignores")
    (repo.root / "tests").symlink_to(REPO / "tests", target_is_directory=True)
    (repo.root / ".git" / "info" / "exclude").write_text("/tests\n", encoding="utf-8")  # the link to the repository
    qm = shutil.which("qm", path=str(Path(sys.executable).parent)) or shutil.which("qm")
    assert qm, "no `qm` beside the test interpreter or on PATH: install the package first"
    bin_dir = repo.root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "qm").symlink_to(qm)
    # a script, not a link: Python finds its virtualenv from the path it was started by
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    (bin_dir / "python").chmod(0o755)
    return repo.root


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{cwd / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail\n{command}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_tutorials_and_guides_have_runnable_examples() -> None:
    """The mechanism finds what it should: a page whose markers broke would silently run nothing."""
    assert {
        "README.md",
        "docs/tutorials/first-deploy.md",
        "docs/tutorials/first-plan.md",
        "docs/tutorials/first-quota-pr.md",
        "docs/how-to/finance-reports.md",
        "docs/how-to/kueue-objects.md",
        "docs/how-to/plan-sweeps.md",
    } <= set(PAGES)


def test_a_console_block_is_split_into_commands_and_their_shown_output() -> None:
    steps = parse_console("$ qm a \\\n  --b\nshown one\n...\n$ qm c\nshown two\n", exit_code=1)
    assert steps == [Step("qm a \\\n  --b", ("shown one",), 0), Step("qm c", ("shown two",), 1)]


@pytest.mark.slow  # each page runs its commands as processes: qm plan several times, 15-70 s a page
@pytest.mark.parametrize("page", PAGES)
def test_the_page_examples_run_as_shown(page: str, tmp_path: Path) -> None:
    root = scratch_checkout(tmp_path)
    for block in runnable_blocks(REPO / page):
        for step in block.steps:
            where = f"{page}:{block.line}: {step.command}"
            done = run(step.command, root)
            output = done.stdout + done.stderr
            assert done.returncode == step.exit_code, f"{where}\nexit {done.returncode}\n{output}"
            assert "Traceback" not in output, f"{where}\n{output}"
            missing = [line for line in step.shown if flat(line) not in flat(output)]
            assert not missing, f"{where}\nthe page shows lines the command did not print: {missing}\n{output}"
    left = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True)
    assert left.stdout == "", f"{page} leaves the checkout changed (undo it, or write under out/):\n{left.stdout}"
