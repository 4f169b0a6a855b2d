"""Comment-preserving quota edits of the inventory YAML: `qm quota set` and the planner's `qm plan --propose`.

A quota edit must change that quota's line and nothing else, byte for byte. ruamel.yaml's round-trip
dump gets close but reformats what it does not model: `- { flavor: x, nominal: 64 }` comes back as
`- {flavor: x, nominal: 96}` and trailing comments move. So ruamel.yaml round-trip loads each file only to
find where things are (line and column of every key and value), and the edit splices the new scalar into
the original text at that place. The result is proved twice before anything is written:

1. the edited text, parsed again, equals the old data with exactly the requested changes applied;
2. the edited inventory loads and validates (`quartermaster.loader.load`) — an edit that would make it
   invalid is refused with the located messages.

A value shared through an anchor, an alias or a tag is refused (the edit would change other places too); a key
taken from a merge key (`<<:`) is overridden by adding it to the entry itself.

Files with uncommitted git changes are refused unless `force` (the edit would mix with unreviewed work), as are
read-only files. Each file is written atomically: a temporary file in the same directory, fsync, then rename
over; edits of one inventory are serialised by a lock on its folder, and a file changed meanwhile is not
overwritten. Nothing else is written: the edited inventory is validated from memory.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import glob
import os
import re
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from quartermaster.issues import Issue, Location, did_you_mean, format_path
from quartermaster.loader import YAML_SUFFIXES, display_path, inventory_files, load, read_file

QUOTA_KEYS = ("nominal", "borrowing_limit", "lending_limit")  # the keys an edit may set, in model order
_SCALAR_TOKEN = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'|[^\s,}\]#]+", re.ASCII)
_KEY_AND_COLON = re.compile(r"[^:]*:\s*", re.ASCII)
_ALIAS = re.compile(r"\*[^\s,\]}]+", re.ASCII)
_BOM = "\ufeff"


@dataclass(frozen=True)
class QuotaChange:
    """Set one team's quota for one flavor; None leaves that value as it is (or absent)."""

    team: str
    flavor: str
    nominal: int | None = None
    borrowing_limit: int | None = None
    lending_limit: int | None = None

    def values(self) -> dict[str, int]:
        """The keys this change sets, in model order."""
        return {k: v for k in QUOTA_KEYS if (v := getattr(self, k)) is not None}


@dataclass(frozen=True)
class Edit:
    """One value written: where, and old -> new (old None: the key or quota entry was added)."""

    file: str
    line: int
    path: str
    old: int | None
    new: int

    def format(self) -> str:
        old = "(new)" if self.old is None else str(self.old)
        return f"{self.file}:{self.line} {self.path}: {old} -> {self.new}"


@dataclass
class EditResult:
    """What an edit did: the edits (planned or written), the files written, and every problem."""

    edits: list[Edit] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(i.severity == "error" for i in self.issues)


@dataclass
class _TeamFile:
    path: Path
    shown: str
    bom: str
    text: str
    original: bytes
    """original: the file's bytes as read; the edit is written only if the file still holds them."""


def set_quotas(
    inventory_dir: str | os.PathLike[str],
    changes: list[QuotaChange],
    *,
    force: bool = False,
    dry_run: bool = False,
) -> EditResult:
    """Write quota changes into the team files under `inventory_dir`, keeping every other byte.

    Refuses (writes nothing, returns issues) when a team is unknown, a file has uncommitted changes and
    `force` is false, or the edited inventory would not validate.
    """
    root = Path(inventory_dir)
    with _edit_lock(root):
        return _set_quotas(root, changes, force=force, dry_run=dry_run)


@contextlib.contextmanager
def _edit_lock(root: Path) -> Iterator[None]:
    """Serialise quota edits of one inventory (an exclusive lock on its folder, released when the process ends,
    even killed): a second `qm quota set` reads the files after the first has written them."""
    folder = root if root.is_dir() else root.parent
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _set_quotas(root: Path, changes: list[QuotaChange], *, force: bool, dry_run: bool) -> EditResult:
    result = EditResult()
    files = _team_files(root, result.issues)
    edited: dict[Path, _TeamFile] = {}
    for change in changes:
        if not change.values():
            result.issues.append(
                Issue(
                    "quota-edit",
                    f"nothing to set for team `{change.team}` flavor `{change.flavor}`",
                    "Give a nominal, borrowing or lending value.",
                )
            )
            continue
        team_file = next((f for f in files if _find_team(f.text, change.team) is not None), None)
        if team_file is None:
            unreadable = [i for f in files if f.text.strip() and (i := _unreadable(f)) is not None]
            if unreadable:
                result.issues.extend(i for i in unreadable if i not in result.issues)
                continue
            names = sorted(n for f in files for n in _team_names(f.text))
            result.issues.append(
                Issue(
                    "quota-edit",
                    f"no team `{change.team}` in {display_path(root)}",
                    _did_you_mean(change.team, names),
                    got=change.team,
                )
            )
            continue
        try:
            team_file.text, edits = _apply(team_file, change)
        except _CannotEdit as exc:
            result.issues.append(Issue("quota-edit", str(exc), exc.fix, location=exc.location))
            continue
        result.edits.extend(edits)
        edited[team_file.path] = team_file
    if not result.ok or not edited:
        return result
    result.issues.extend(_prove_only_requested(root, edited, changes))
    if not force:
        result.issues.extend(_uncommitted(f) for f in edited.values() if _is_dirty(f.path))
    if result.ok:
        result.issues.extend(_validate_edited(root, edited))
    if result.ok and not dry_run:
        result.issues.extend(
            Issue(
                "quota-edit",
                "the file is read-only",
                "Make it writable if it should be edited (`chmod u+w`), then run again.",
                location=Location(f.shown, None, ""),
            )
            for f in edited.values()
            if not f.path.stat().st_mode & stat.S_IWUSR
        )
    if result.ok and not dry_run:
        changed = [f for f in edited.values() if f.path.read_bytes() != f.original]
        result.issues.extend(
            Issue(
                "quota-edit",
                "the file changed while the edit was being made",
                "Nothing was written; run the command again on the file as it is now.",
                location=Location(f.shown, None, ""),
            )
            for f in changed
        )
    if result.ok and not dry_run:
        for team_file in edited.values():
            _write_atomically(team_file.path, team_file.bom + team_file.text)
            result.written.append(team_file.shown)
    return result


# --- finding the team and its quota -----------------------------------------------------------------


class _CannotEdit(Exception):
    def __init__(self, message: str, fix: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.fix = fix
        self.location = location


def _rt_load(text: str) -> Any:
    """Round-trip load (keeps positions); None for text that does not parse (see `_unreadable`)."""
    try:
        return YAML(typ="rt").load(text)
    except YAMLError:
        return None


def _unreadable(team_file: _TeamFile) -> Issue | None:
    """Why the round-trip parser cannot read a file (which then cannot be edited), located; None if it can."""
    try:
        YAML(typ="rt").load(team_file.text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        lines = team_file.text.splitlines()
        tab = "\\t" in problem or (mark is not None and mark.line < len(lines) and "\t" in lines[mark.line])
        return Issue(
            "quota-edit",
            f"the file cannot be read for editing: {problem}",
            "Replace the tab with spaces, then run again." if tab else "Fix the YAML at that line.",
            location=Location(team_file.shown, mark.line + 1 if mark else None, ""),
        )
    return None


def _team_files(root: Path, issues: list[Issue]) -> list[_TeamFile]:
    """The inventory's YAML files as the loader finds and reads them (links out of the inventory, loops, UTF-16
    and binary files are located issues, never read); the caller holds the inventory's edit lock."""
    out = []
    for path in inventory_files(root, issues):
        shown = display_path(path)
        if path.suffix not in YAML_SUFFIXES or (read := read_file(path, shown, issues)) is None:
            continue
        original, text = read
        bom = _BOM if original.startswith(_BOM.encode("utf-8")) else ""
        out.append(_TeamFile(path, shown, bom, text, original))
    return out


def _teams_of(text: str) -> list[Any]:
    data = _rt_load(text)
    teams = data.get("teams") if isinstance(data, CommentedMap) else None
    return [t for t in teams if isinstance(t, CommentedMap)] if isinstance(teams, CommentedSeq) else []


def _team_names(text: str) -> list[str]:
    return [str(t.get("name")) for t in _teams_of(text)]


def _find_team(text: str, name: str) -> tuple[int, CommentedMap] | None:
    data = _rt_load(text) if "teams" in text else None
    if not isinstance(data, CommentedMap) or not isinstance(data.get("teams"), CommentedSeq):
        return None
    for index, team in enumerate(data["teams"]):
        if isinstance(team, CommentedMap) and team.get("name") == name:
            return index, team
    return None


# --- splicing ---------------------------------------------------------------------------------------


def _apply(team_file: _TeamFile, change: QuotaChange) -> tuple[str, list[Edit]]:
    """Apply one change to the file's text, one value at a time (each splice re-reads the positions)."""
    text, edits = team_file.text, list[Edit]()
    for key, value in change.values().items():
        found = _find_team(text, change.team)
        if found is None:  # a splice made the text unreadable: refuse rather than write it
            raise _CannotEdit(
                f"team `{change.team}`: the file cannot be edited in place",
                "Set this quota by hand.",
                Location(team_file.shown, None, ""),
            )
        team_index, team = found
        quotas = team.get("quotas")
        entries = [q for q in quotas or [] if isinstance(q, CommentedMap)]
        index = next((i for i, q in enumerate(entries) if q.get("flavor") == change.flavor), None)
        where = ("teams", team_index, "quotas")
        _refuse_shared(
            team_file.shown,
            text,
            team,
            quotas,
            None if index is None else entries[index],
            format_path(where if index is None else (*where, index)),
        )
        if index is None:  # a new quota entry carrying every value of the change at once
            text, line = _add_entry(text, team, change)
            path = format_path((*where, len(entries)))
            edits.extend(Edit(team_file.shown, line, f"{path}.{k}", None, v) for k, v in change.values().items())
            return text, edits
        entry = entries[index]
        path = format_path((*where, index, key))
        own = [k for k, _ in entry.non_merged_items()]
        if not own:
            raise _CannotEdit(
                "the quota entry has only merged values (`<<:`)",
                "Write its flavor out, then run again.",
                Location(team_file.shown, entry.lc.line + 1, path),
            )
        if key in own:
            line, col = entry.lc.value(key)
            token = _written_value(text, *entry.lc.key(key))
            if token[:1] in ("&", "*", "!"):
                raise _CannotEdit(
                    f"`{key}` is written as `{token}` (an anchor, alias or tag), not as a number",
                    "Write the number itself, then run again.",
                    Location(team_file.shown, entry.lc.key(key)[0] + 1, path),
                )
            text = _replace_scalar(text, line, col, str(value))
            edits.append(Edit(team_file.shown, line + 1, path, entry[key], value))
        else:  # absent, or taken from a merge key (`<<:`): the entry's own key overrides the merged one
            text, line = _add_key(text, entry, own, key, value)
            edits.append(Edit(team_file.shown, line + 1, path, entry.get(key), value))
    return text, edits


def _refuse_shared(
    shown: str, text: str, team: CommentedMap, quotas: Any, entry: CommentedMap | None, path: str
) -> None:
    """Refuse to edit a quota that an anchor shares with other places, or a team whose `quotas:` is an alias of
    another's list (a new entry went into both teams): the edit would change them all."""
    if "quotas" in team:
        key_line, key_col = team.lc.key("quotas")
        after_colon = _KEY_AND_COLON.match(text, _offset(text, key_line, key_col))
        alias = _ALIAS.match(text, after_colon.end()) if after_colon else None
        if alias:
            token = alias.group()
            raise _CannotEdit(
                f"the team's `quotas` is written as `{token}`, an alias of a list another team uses too, so the edit "
                "would change that team's quotas as well",
                "Write this team's quotas out (drop the alias), then run again.",
                Location(shown, team.lc.key("quotas")[0] + 1, path),
            )
    for node, what in ((team, "the team"), (quotas, "its quotas"), (entry, "the quota entry")):
        anchor = node.anchor.value if node is not None and hasattr(node, "anchor") else None
        if anchor:
            line = (entry if entry is not None else team).lc.line + 1
            raise _CannotEdit(
                f"{what} carries the anchor `&{anchor}`, so its aliases (`*{anchor}`) would change too",
                "Write the values out where they are reused (drop the anchor), then run again.",
                Location(shown, line, path),
            )


def _offset(text: str, line: int, col: int) -> int:
    starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
    return starts[line] + col


def _token_end(text: str, start: int) -> int:
    match = _SCALAR_TOKEN.match(text, start)
    if match is None:
        raise _CannotEdit("the value is not a plain scalar", "Edit this value by hand.")
    return match.end()


def _written_value(text: str, line: int, col: int) -> str:
    """The first token after the key at (line, col) and its colon: `16`, or an anchor `&n`, alias `*n` or tag."""
    after_colon = _KEY_AND_COLON.match(text, _offset(text, line, col))
    assert after_colon is not None  # the parser found a key here
    start = after_colon.end()
    return text[start : _token_end(text, start)]


def _replace_scalar(text: str, line: int, col: int, new: str) -> str:
    start = _offset(text, line, col)
    return text[:start] + new + text[_token_end(text, start) :]


def _line_end(text: str, offset: int) -> int:
    """The offset just after the newline that ends the line holding `offset` (adds one at end of file)."""
    end = text.find("\n", offset)
    return len(text) if end < 0 else end + 1


def _add_key(text: str, entry: CommentedMap, own: list[str], key: str, value: int) -> tuple[str, int]:
    """Add `key: value` after the last of a quota entry's own keys `own`, in its style; returns the text and the
    0-based line."""
    line, col = entry.lc.value(own[-1])
    end = _token_end(text, _offset(text, line, col))
    if entry.fa.flow_style():
        return text[:end] + f", {key}: {value}" + text[end:], line
    indent = entry.lc.key(own[0])[1]
    at = _line_end(text, end)
    prefix = "" if text[:at].endswith("\n") else "\n"
    return text[:at] + f"{prefix}{' ' * indent}{key}: {value}\n" + text[at:], line + 1


def _add_entry(text: str, team: CommentedMap, change: QuotaChange) -> tuple[str, int]:
    """Add a quota entry for a new flavor after the team's last one, in the style of that one."""
    values = {"flavor": change.flavor, **change.values()}
    flow = ", ".join(f"{k}: {v}" for k, v in values.items())
    quotas = team.get("quotas")
    if "quotas" not in team:  # no quotas yet: a `quotas:` block right after the team's name
        line, col = team.lc.value("name")
        indent = team.lc.key("name")[1]
        at = _line_end(text, _token_end(text, _offset(text, line, col)))
        addition = f"{' ' * indent}quotas:\n{' ' * (indent + 2)}- {{{flow}}}\n"
        return text[:at] + addition + text[at:], line + 3
    if not isinstance(quotas, CommentedSeq) or not all(isinstance(q, CommentedMap) for q in quotas):
        raise _CannotEdit(f"team `{change.team}`: `quotas` is not a list of entries", "Fix the file first.")
    if quotas.fa.flow_style():
        if quotas:
            raise _CannotEdit(
                f"team `{change.team}`: quotas are written as one flow list `[...]`",
                "Write them as a block list (one `- {flavor: ..., nominal: ...}` per line) or add the entry by hand.",
            )
        line, col = team.lc.value("quotas")
        start = _offset(text, line, col)
        close = text.index("]", start) + 1
        return text[:start] + f"[{{{flow}}}]" + text[close:], line + 1
    last = quotas[-1]
    item_line, item_col = quotas.lc.item(len(quotas) - 1)
    line_start = _offset(text, item_line, 0)
    dash = text.rindex("-", line_start, line_start + item_col)
    gap = " " * (item_col - (dash - line_start) - 1)
    value_line, value_col = last.lc.value(list(last)[-1])
    end = _token_end(text, _offset(text, value_line, value_col))
    if last.fa.flow_style():
        end = text.index("}", end) + 1
        opening = text[_offset(text, item_line, item_col) :]
        inner = f" {flow} " if opening.startswith("{ ") else flow
        body = f"{{{inner}}}\n"
    else:
        body = "".join(f"{'' if i == 0 else ' ' * item_col}{k}: {v}\n" for i, (k, v) in enumerate(values.items()))
    at = _line_end(text, end)
    prefix = "" if text[:at].endswith("\n") else "\n"
    new_line = text[:at].count("\n") + (1 if prefix else 0)
    return text[:at] + prefix + " " * (dash - line_start) + "-" + gap + body + text[at:], new_line + 1


# --- proofs and writing -----------------------------------------------------------------------------


def _prove_only_requested(root: Path, edited: dict[Path, _TeamFile], changes: list[QuotaChange]) -> list[Issue]:
    """The edited files parse to the old data with exactly the requested changes; anything else is a bug."""
    issues = []
    for path, team_file in edited.items():
        before = _parse(path.read_bytes().decode("utf-8-sig"))
        want = copy.deepcopy(before)
        for change in changes:
            for team in want.get("teams") or []:
                if isinstance(team, dict) and team.get("name") == change.team:
                    entries = team.setdefault("quotas", [])
                    entry = next((q for q in entries if q.get("flavor") == change.flavor), None)
                    if entry is None:
                        entries.append(entry := {"flavor": change.flavor})
                    entry.update(change.values())
        try:
            after = _parse(team_file.text)
        except yaml.YAMLError:
            after = None
        if after != want:
            issues.append(
                Issue(
                    "quota-edit",
                    "the edit would change more than the requested quota values",
                    "Edit this file by hand and report the file's layout as a bug.",
                    location=Location(team_file.shown, None, ""),
                )
            )
    return issues


def _parse(text: str) -> Any:
    """The data in `text`, read by the parser the inventory loader uses (libyaml's safe loader)."""
    return yaml.load(text, Loader=yaml.CSafeLoader)


def _is_dirty(path: Path) -> bool:
    """True if git knows the file has uncommitted changes (or is untracked); False outside a git work tree."""
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:  # no git installed: nothing to protect
        return False
    return status.returncode == 0 and bool(status.stdout.strip())


def _uncommitted(team_file: _TeamFile) -> Issue:
    return Issue(
        "quota-edit",
        "file has uncommitted changes; an edit now would mix with unreviewed work",
        "Commit or stash them first, or pass --force to edit anyway.",
        location=Location(team_file.shown, None, ""),
    )


def _validate_edited(root: Path, edited: dict[Path, _TeamFile]) -> list[Issue]:
    """Load the inventory as it would be after the edit (the edited text read in place of those files; nothing is
    copied or written); return its errors."""
    loaded = load(root, edited={path: team_file.text for path, team_file in edited.items()})
    return [replace(i, message=f"after the edit, {i.message}") for i in loaded.issues if i.severity == "error"]


def _write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same directory, then rename over the original (a linked team file:
    over its target, so the link stays a link); temporary files a killed run left are removed first."""
    path = path.resolve()
    for left in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):  # a killed run's; the caller holds the lock
        left.unlink(missing_ok=True)
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _did_you_mean(word: str, options: list[str]) -> str:
    fallback = f"Teams: {', '.join(options)}." if options else "Add the team's file under teams/ first."
    return did_you_mean(word, options) or fallback
