"""Load an inventory directory (YAML + CSV) into one typed Inventory and every problem found.

YAML is composed with libyaml into nodes that carry their start marks; a file's map from YAML path to line is
made from them again when a problem in that file is first located (a file without problems never needs it);
sections from all files are merged; each object is validated on its own so one bad object does not
hide the others; then the cross-object checks run. Nothing raises for a user mistake: problems come
back as `Issue`s with file, line, YAML path, what is wrong and how to fix it.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import re
import typing
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from quartermaster import cycle_collector
from quartermaster.checks import run_checks as run_all_checks
from quartermaster.issues import Issue, Location, Ref, did_you_mean, format_path
from quartermaster.model import (
    MAX_TEAM_NAMESPACES,
    MAX_TEAM_QUOTAS,
    Cluster,
    Cohort,
    Commitment,
    DemandRow,
    Inventory,
    Machine,
    OnpremCost,
    Policy,
    PriceRow,
    PriorityClass,
    Site,
    Team,
    TeamTerms,
    UsageRow,
)
from quartermaster.names import COST_CENTER_PATTERN, OWNER_PATTERN, QUARTER_PATTERN
from quartermaster.providers import inventory_types, provider_of, providers
from quartermaster.textsafety import codeowners_path
from quartermaster.units import FIRST_DAY, LAST_DAY

TEAM_FOLDER = "teams"
"""Files in a folder of this name are team files: their owners approve them (CODEOWNERS), so they hold only the
`teams:` section (a `clusters:` section in a team file added $4.34M a month with the team's approval), and
their teams take what moves money or sharing from `team_terms`."""
TERMS = ("cost_center", "cohort", "priority_class", "fair_sharing_weight")
"""The fields of a team that `team_terms` sets (`TeamTerms`): never in a team file."""

# Top-level YAML sections: name -> model of each list item.
LIST_SECTIONS: dict[str, type[BaseModel]] = {
    "sites": Site,
    "clusters": Cluster,
    "machines": Machine,
    "commitments": Commitment,
    "teams": Team,
    "team_terms": TeamTerms,
    "cohorts": Cohort,
    "priority_classes": PriorityClass,
}
SINGLE_SECTIONS: dict[str, type[BaseModel]] = {"policy": Policy}


def section_type(section: str) -> Any:
    """The type of one item of a list section as the registered providers narrow it (`inventory_types`); a
    cluster's is their cluster models, told apart by `kind` (`Cluster` is only their shared base)."""
    return inventory_types().item_type(LIST_SECTIONS[section])


# CSV files by the start of their name (prices.csv, onprem_costs.csv, demand-2027.csv, usage.csv).
CSV_SECTIONS: dict[str, type[BaseModel]] = {
    "prices": PriceRow,
    "onprem_costs": OnpremCost,
    "demand": DemandRow,
    "usage": UsageRow,
}
YAML_SUFFIXES = (".yaml", ".yml")
UNREAD = "unread"
"""The rule of an issue about inventory content that was not read (an unreadable folder, a link out or in a loop, a
file that is not UTF-8 text): cross-file checks would then blame the files that were read."""
MAX_FILE_BYTES = 256 * 1024 * 1024
REFERENCE_DOC = "docs/inventory-reference.md"

YamlPath = tuple[str | int, ...]


@dataclass
class SourceMap:
    """Where every loaded object and value came from, to turn references into file:line."""

    lines: dict[str, dict[YamlPath, int]] = field(default_factory=dict)
    """File -> YAML path -> line, for the files located so far."""
    objects: dict[Ref, tuple[str, YamlPath]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    """File -> the YAML text it was loaded from, until its lines are first asked for."""

    def lines_of(self, file: str) -> dict[YamlPath, int]:
        """The map from YAML path to line of a file, made from its text when first asked for."""
        lines = self.lines.get(file)
        if lines is None:
            text = self.texts.pop(file, None)
            lines = self.lines[file] = {} if text is None else yaml_lines(text)
        return lines

    def at(self, file: str, path: YamlPath) -> Location:
        """The location of a YAML path in a file: the line of the deepest part of the path that exists."""
        lines = self.lines_of(file)
        shown = format_path(path)
        if file.endswith(".csv"):  # rows are lines; show the column, not the row index
            shown = ".".join(str(p) for p in path[1:]) or f"row {lines.get(path[:1], '?')}"
        for end in range(len(path), -1, -1):
            if path[:end] in lines:
                return Location(file, lines[path[:end]], shown)
        return Location(file, None, shown)

    def locate(self, ref: Ref) -> Location | None:
        """The location of a logical reference such as ("teams", "ml", "quotas", 0, "flavor")."""
        for end in range(len(ref), 0, -1):
            if ref[:end] in self.objects:
                file, prefix = self.objects[ref[:end]]
                return self.at(file, prefix + ref[end:])
        return None


@dataclass
class LoadResult:
    """An inventory with every problem found in it."""

    inventory: Inventory
    issues: list[Issue]
    sources: SourceMap
    files: list[str]
    team_files: frozenset[str] = frozenset()
    """team_files: the files (as in `files`) under a `teams/` folder of the inventory: their teams' owners approve
    them alone (`is_team_file`)."""

    @property
    def ok(self) -> bool:
        return not any(i.severity == "error" for i in self.issues)


def load(
    root: str | os.PathLike[str], *, run_checks: bool = True, edited: Mapping[Path, str] | None = None
) -> LoadResult:
    """Load every inventory file under `root` (a directory or one file); `edited` holds text read in place of some
    files' contents (an edit validated before it is written), keyed by their paths under `root`."""
    with cycle_collector.paused():
        return _load(Path(root), run_checks, edited)


def _load(root: Path, run_checks: bool, edited: Mapping[Path, str] | None) -> LoadResult:
    sources = SourceMap()
    issues: list[Issue] = []
    files = inventory_files(root, issues)
    if not files and not issues:
        issues.append(
            Issue(
                "files",
                "no inventory files (*.yaml, *.yml, prices*.csv, onprem_costs*.csv, demand*.csv, usage*.csv) under "
                f"{display_path(root)}",
                "Point qm at an inventory directory, e.g. `qm validate inventory/`.",
            )
        )
    raw: dict[str, list[tuple[str, YamlPath, Any]]] = {s: [] for s in [*LIST_SECTIONS, *SINGLE_SECTIONS]}
    rows: dict[str, list[tuple[str, int, Any]]] = {s: [] for s in CSV_SECTIONS}
    shown_files = display_paths(root, files)
    team_files = frozenset(shown for path, shown in zip(files, shown_files, strict=True) if is_team_file(root, path))
    dropped_sections: set[str] = set()
    refused_rows: set[str] = set()
    for path, shown in zip(files, shown_files, strict=True):
        if path.suffix in YAML_SUFFIXES:
            dropped_sections |= _read_yaml(path, shown, shown in team_files, sources, issues, raw, edited or {})
        else:
            refused_rows |= _read_csv(path, shown, sources, issues, rows, edited or {})

    built: dict[str, Any] = {}
    # a CSV section with a refused row: a check across its rows (`about` (section, "*")) would only repeat that error
    broken: set[tuple[str, str]] = {(section, "*") for section in refused_rows}
    # a file or folder that could not be read may hold any team or team_terms entry: no follow-on about either
    unread_any = any(issue.rule == UNREAD for issue in issues)
    built["team_terms"] = _apply_team_terms(
        raw,
        team_files,
        sources,
        issues,
        broken,
        teams_unread=unread_any or "teams" in dropped_sections,
        terms_unread=unread_any or "team_terms" in dropped_sections,
    )
    for section, model in LIST_SECTIONS.items():
        if section != "team_terms":
            built[section] = _validate_items(section, model, raw[section], sources, issues, broken)
    policies = raw["policy"]
    if len(policies) > 1:
        first = sources.at(policies[0][0], policies[0][1])
        for file, ypath, _ in policies[1:]:
            issues.append(
                Issue(
                    "unique-names",
                    "`policy` is defined twice",
                    f"Keep one `policy:` section; the first is at {first.file}:{first.line}.",
                    location=sources.at(file, ypath),
                )
            )
    if policies:
        file, ypath, data = policies[0]
        sources.objects[("policy",)] = (file, ypath)
        policy = _validate_one(Policy, data, file, ypath, sources, issues)
        if policy is not None:
            built["policy"] = policy
    for section in CSV_SECTIONS:
        for k, (file, index, _) in enumerate(rows[section]):
            sources.objects[(section, k)] = (file, (index,))
        built[section] = [row for _, _, row in rows[section]]

    inventory = Inventory(**built)
    unread = sum(issue.rule == UNREAD for issue in issues)
    if run_checks and unread:
        issues.append(
            Issue(
                UNREAD,
                f"the checks across files (references by name, quotas against capacity, cohorts) "
                f"were not run: {unread} file(s) or folder(s) above could not be read, so every name "
                "defined there would be reported missing",
                "Fix those first, then run again.",
                severity="warning",
            )
        )
    elif run_checks:
        teams_broken = any(section == "teams" for section, _ in broken)
        for issue in run_all_checks(inventory):
            if any(about in broken or (about == ("teams", "*") and teams_broken) for about in issue.about):
                continue  # the object it refers to already failed to load; that error says enough
            if any(section in dropped_sections for section, _ in issue.about):
                continue  # it may be defined in a file that was not read (one error per cause)
            issues.append(issue if issue.location else _located(issue, sources))
    return LoadResult(inventory, issues, sources, shown_files, team_files)


def is_team_file(root: Path, path: Path) -> bool:
    """Whether `path` lies in a `teams/` folder of the inventory `root` (folders above the inventory do not count)."""
    inside = path.relative_to(root) if root.is_dir() else Path(path.name)
    return TEAM_FOLDER in inside.parent.parts


def _apply_team_terms(
    raw: dict[str, list[tuple[str, YamlPath, Any]]],
    team_files: frozenset[str],
    sources: SourceMap,
    issues: list[Issue],
    broken: set[tuple[str, str]],
    *,
    teams_unread: bool = False,
    terms_unread: bool = False,
) -> list[TeamTerms]:
    """Validate `team_terms` and copy each entry's fields into its team (rewriting `raw["teams"]`), each copied
    field located at its entry. A team file may not set them, a team of a team file needs an entry, an entry names
    a team that exists, once, and a field is set in one place only. Where teams or entries may sit in a file that
    could not be read (`teams_unread`, `terms_unread`), a missing counterpart is not reported: that file's error
    says enough."""
    terms: dict[str, tuple[TeamTerms, str, YamlPath]] = {}
    refused: set[str] = set()
    out = []
    for file, ypath, data in raw["team_terms"]:
        entry = _validate_one(TeamTerms, data, file, ypath, sources, issues)
        if entry is None:
            if isinstance(data, dict) and isinstance(data.get("team"), str):
                refused.add(data["team"])  # its error says enough: the team is not checked again
            continue
        if entry.team in terms:
            first = sources.at(terms[entry.team][1], terms[entry.team][2])
            issues.append(
                Issue(
                    "unique-names",
                    f"`team_terms` for `{entry.team}` are given twice",
                    f"Keep one entry per team; the first is at {first.file}:{first.line}.",
                    location=sources.at(file, (*ypath, "team")),
                )
            )
            continue
        terms[entry.team] = (entry, file, ypath)
        out.append(entry)
    teams, named = [], set()
    for file, ypath, data in raw["teams"]:
        name = data.get("name") if isinstance(data, dict) else None
        if not isinstance(name, str):
            teams.append((file, ypath, data))
            continue
        named.add(name)
        in_team_file = file in team_files
        data = dict(data)
        for key in TERMS:
            if in_team_file and key in data:
                del data[key]
                issues.append(
                    Issue(
                        "tenancy",
                        f"`{key}` in a team file: who pays for a team and how it shares move money, and CODEOWNERS "
                        "gives this file to the team's owners alone",
                        f"Set it in the team's `team_terms` entry (org.yaml, owned by the finance approvers): "
                        f"`- {{team: {name}, {key}: ...}}`.",
                        location=sources.at(file, (*ypath, key)),
                    )
                )
        found = terms.get(name)
        if found is None and (name in refused or (in_team_file and terms_unread)):
            broken.add(("teams", name))
            continue
        if found is None:
            if in_team_file:
                broken.add(("teams", name))
                issues.append(
                    Issue(
                        "tenancy",
                        f"team `{name}` has no `team_terms` entry: its cost centre, cohort and priority class are "
                        "set by finance",
                        f"Add `- {{team: {name}, cost_center: CC-...}}` to `team_terms` in org.yaml (a new team "
                        "needs the finance approvers).",
                        location=sources.at(file, (*ypath, "name")),
                    )
                )
                continue
            teams.append((file, ypath, data))
            continue
        entry, terms_file, terms_path = found
        for key in entry.model_fields_set - {"team"}:
            if key in data:
                issues.append(
                    Issue(
                        "tenancy",
                        f"`{key}` of team `{name}` is set here and in its `team_terms` entry",
                        f"Keep it in `team_terms` only (at {terms_file}).",
                        location=sources.at(file, (*ypath, key)),
                    )
                )
            data[key] = getattr(entry, key)
            sources.objects[("teams", name, key)] = (terms_file, (*terms_path, key))
        teams.append((file, ypath, data))
    raw["teams"] = teams
    for name, (_, file, ypath) in terms.items():
        if name not in named and not teams_unread:
            issues.append(
                Issue(
                    "references",
                    f"`team_terms` for `{name}`: no such team",
                    "Remove the entry with its team, or rename it with the team (a team removed or renamed needs "
                    f"the finance approvers). {did_you_mean(name, sorted(named))}".rstrip(),
                    location=sources.at(file, (*ypath, "team")),
                )
            )
    return out


# --- files -----------------------------------------------------------------------------------------


def inventory_files(root: Path, issues: list[Issue]) -> list[Path]:
    """The inventory's YAML and CSV files; a link that leaves the inventory is refused (and never read: its
    content could reach a PR comment), a linked folder is not followed (no loops)."""
    if root.is_file():
        return [root]
    if not root.is_dir():
        return []
    inside = root.resolve()
    found = []
    for folder, folders, names in os.walk(root, onerror=lambda exc: _unreadable(exc, issues)):
        folders[:] = sorted(d for d in folders if not d.startswith("."))
        for name in sorted(n for n in [*names, *folders] if not n.startswith(".")):
            path = Path(folder) / name
            wanted = path.suffix in YAML_SUFFIXES or (path.suffix == ".csv" and _csv_section(path) is not None)
            if path.is_symlink() and (wanted or path.is_dir()):
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13), or dangling
                    issues.append(
                        Issue(
                            UNREAD,
                            "a link that leads nowhere (to itself, around a loop, or to a "
                            "missing file); it is not read",
                            "Remove the link, or point it at a file of the inventory.",
                            location=Location(display_path(path), None, ""),
                        )
                    )
                    continue
                if not target.is_relative_to(inside):
                    issues.append(
                        Issue(
                            UNREAD,
                            "a link to a file outside the inventory; it is not read",
                            "Copy the file into the inventory instead of linking to it.",
                            location=Location(display_path(path), None, ""),
                        )
                    )
                    continue
            if wanted and path.is_file():
                found.append(path)
                _check_file_name(path.relative_to(root), path, issues)
    return sorted(found)


def _check_file_name(relative: Path, path: Path, issues: list[Issue]) -> None:
    """A file whose name CODEOWNERS cannot hold as written (a `*`, a line feed, a space...) is refused: its line
    there would be read as a pattern or as several lines (`x<LF>* @attacker<LF>#.yaml`, `*.yaml`)."""
    try:
        codeowners_path("/" + relative.as_posix())
    except ValueError:
        issues.append(
            Issue(
                "files",
                "the file's name holds characters that CODEOWNERS reads as pattern syntax (`*`, `?`, `[`, `#`, `!`, "
                "a space, a line feed), so no review rule could name exactly this file",
                "Rename it with letters, digits, `.`, `_` and `-` only.",
                location=Location(display_path(path), None, ""),
            )
        )


def _unreadable(exc: OSError, issues: list[Issue]) -> None:
    issues.append(
        Issue(
            UNREAD,
            f"cannot read this folder ({exc.strerror})",
            "Make it readable (chmod) or move it out of the inventory.",
            location=Location(display_path(Path(exc.filename or "")), None, ""),
        )
    )


def _csv_section(path: Path) -> str | None:
    return next((s for s in CSV_SECTIONS if path.stem.startswith(s)), None)


def display_path(path: Path) -> str:
    """A path as messages show it: relative to the current folder when inside it, else as given."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def display_paths(root: Path, files: list[Path]) -> list[str]:
    """`display_path` of each file found under the folder `root`, from root's (one relpath, not one a file)."""
    if not root.is_dir():
        return [display_path(f) for f in files]
    base = display_path(root)
    inside = [f.relative_to(root).as_posix() for f in files]
    return inside if base == "." else [f"{base}/{rel}" for rel in inside]


def read_text(path: Path, shown: str, issues: list[Issue], edited: Mapping[Path, str]) -> str | None:
    """The file's text (or its in-memory edit from `edited`), or None with a located issue (see `read_file`)."""
    if path in edited:
        return edited[path]
    read = read_file(path, shown, issues)
    return None if read is None else read[1]


def read_file(path: Path, shown: str, issues: list[Issue]) -> tuple[bytes, str] | None:
    """The file's bytes and its text (a UTF-8 BOM dropped), read once; or None with a located issue: unreadable,
    too large, UTF-16, binary, not UTF-8, empty."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            issues.append(
                Issue(
                    UNREAD,
                    "file is larger than 256 MiB",
                    "Split it into several files.",
                    location=Location(shown, None, ""),
                )
            )
            return None
        data = path.read_bytes()
    except OSError as exc:
        issues.append(
            Issue(
                UNREAD,
                f"cannot read this file ({exc.strerror})",
                "Make it readable (chmod) or move it out of the inventory.",
                location=Location(shown, None, ""),
            )
        )
        return None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        issues.append(Issue(UNREAD, "file is UTF-16 text", "Save it as UTF-8.", location=Location(shown, 1, "")))
        return None
    if b"\x00" in data[:8192]:
        issues.append(
            Issue(
                UNREAD,
                "file is binary, not YAML or CSV text",
                "Replace it with the text file it should be, or move it out of the inventory.",
                location=Location(shown, 1, ""),
            )
        )
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        issues.append(
            Issue(
                UNREAD,
                f"file is not UTF-8 text (byte {data[exc.start]:#04x})",
                "Save the file as UTF-8.",
                location=Location(shown, line, ""),
            )
        )
        return None
    if not text.strip():
        issues.append(
            Issue("files", "file is empty", "Add its content or delete the file.", location=Location(shown, 1, ""))
        )
        return None
    return data, text


def _read_yaml(
    path: Path,
    shown: str,
    team_file: bool,
    sources: SourceMap,
    issues: list[Issue],
    raw: dict[str, list[tuple[str, YamlPath, Any]]],
    edited: Mapping[Path, str],
) -> set[str]:
    """Read one YAML file's sections into `raw`; the sections it holds when its content was dropped for a problem
    in it (references to objects of those sections are then not checked)."""
    text = read_text(path, shown, issues, edited)
    if text is None:
        return set()  # an unread file: the UNREAD rule says so
    deep = nesting_issue(text, shown)
    if deep is not None:
        issues.append(deep)
        return _sections_of(text, path)
    try:
        node = yaml.compose(text, Loader=_SafeComposer)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        issues.append(
            Issue(
                "yaml",
                f"malformed YAML: {problem}",
                "Fix the syntax at that line (indentation, a missing ':' or an unclosed quote or bracket).",
                location=Location(shown, mark.line + 1 if mark else None, ""),
            )
        )
        return _sections_of(text, path)
    if node is None:
        issues.append(
            Issue(
                "files",
                "file has no content, only comments",
                "Add its content or delete the file.",
                location=Location(shown, 1, ""),
            )
        )
        return set()
    before = len(issues)
    try:
        try:
            data = plain_data(node, (), None, shown, issues, value_budget(text))
            sources.texts[shown] = text
        except _DuplicateKey:  # converted again recording lines, to say where the first of the two keys is
            del issues[before:]
            lines: dict[YamlPath, int] = {}
            sources.lines[shown] = lines
            data = plain_data(node, (), lines, shown, issues, value_budget(text))
    except YamlTooLarge as exc:
        issues.append(exc.issue(shown, None))
        return _sections_of(text, path)
    if len(issues) > before:
        return _sections_of(
            text, path
        )  # duplicate keys, a date that is none: the file's meaning is unclear, read no further
    if not isinstance(data, dict):
        issues.append(
            Issue(
                "yaml",
                "the top level must be a mapping of sections (sites:, clusters:, teams:, ...)",
                "Start the file with a section key such as `teams:`.",
                got=type(data).__name__,
                location=Location(shown, 1, ""),
            )
        )
        return _sections_of(text, path)
    known = [*LIST_SECTIONS, *SINGLE_SECTIONS]
    for key, value in data.items():
        if team_file and key != "teams" and key in known:
            issues.append(
                Issue(
                    "schema",
                    f"`{key}` in a team file: a file under {TEAM_FOLDER}/ holds only `teams:`",
                    f"Move `{key}` to its own file outside {TEAM_FOLDER}/ (CODEOWNERS gives a team file to "
                    "the team's owners only; capacity, commitments, prices and policy need the finance "
                    "and platform approvers).",
                    location=sources.at(shown, (key,)),
                )
            )
        elif key not in known:
            issues.append(
                Issue(
                    "schema",
                    f"unknown section `{key}`",
                    _did_you_mean(str(key), known),
                    location=sources.at(shown, (key,)),
                )
            )
        elif key in SINGLE_SECTIONS:
            raw[key].append((shown, (key,), value))
        elif not isinstance(value, list):
            issues.append(
                Issue(
                    "schema",
                    f"`{key}` must be a list of objects (items start with '- ')",
                    f"Write `{key}:` followed by items like `  - name: ...`.",
                    got=type(value).__name__,
                    location=sources.at(shown, (key,)),
                )
            )
        else:
            raw[key].extend((shown, (key, i), item) for i, item in enumerate(value))
    return set()


def _sections_of(text: str, path: Path) -> set[str]:
    """The sections a file that could not be read holds, from its top-level keys (a team file: teams; pools live in
    clusters); every section when none is recognised."""
    sections = {"teams"} if TEAM_FOLDER in path.parent.parts else set(_TOP_KEY.findall(text)) & set(LIST_SECTIONS)
    if "clusters" in sections:
        sections.add("pools")
    return sections or {*LIST_SECTIONS, "pools"}


_TOP_KEY = re.compile(r"^([a-z_]+):", re.MULTILINE | re.ASCII)


class _SafeComposer(yaml.CSafeLoader):
    """libyaml's safe loader, composing only, that resolves the tag of each distinct scalar once per file (keys and
    values repeat from object to object; the cache is functools' C one) and skips the path resolvers, which the
    safe loader has none of."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.resolve = functools.cache(super().resolve)  # type: ignore[method-assign]

    def dispose(self) -> None:
        """Drop the cache, which holds this loader (a cycle, freed at once only without it)."""
        del self.resolve
        super().dispose()

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


assert not _SafeComposer.yaml_path_resolvers  # what skipping them relies on

_SCALARS = yaml.constructor.SafeConstructor()
_STR, _INT, _MERGE = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:merge"


MAX_DEPTH = 64
"""Nesting levels a YAML file may have: an inventory needs fewer than ten; a deeper file is refused before it
reaches the (recursive) composer, which a list nested 100,000 deep crashes."""
MAX_VALUES_PER_CHARACTER = 10
"""Values a file may expand to per character of text: aliases repeat values, and nested aliases (an alias
bomb: 7 lines, millions of values) are refused once they pass this."""
_DEEP_FLOW = re.compile(r"(?:[\[{]\s*){" + str(MAX_DEPTH + 1) + ",}", re.ASCII)


class YamlTooLarge(Exception):
    """A file's aliases expand past its budget of values, or it nests deeper than MAX_DEPTH."""

    def issue(self, shown: str, line: int | None) -> Issue:
        return Issue(
            "yaml",
            str(self),
            "Write the values out instead of nesting anchors and aliases.",
            location=Location(shown, line, ""),
        )


def nesting_issue(text: str, shown: str) -> Issue | None:
    """The located error for a file nested deeper than MAX_DEPTH, found before it is composed; else None."""
    deep = too_deep(text)
    return (
        None
        if deep is None
        else Issue(
            "yaml",
            f"YAML nested deeper than {MAX_DEPTH} levels",
            "A few levels are enough; flatten the structure.",
            location=Location(shown, deep, ""),
        )
    )


def value_budget(text: str) -> list[int]:
    """How many values a file of `text` may expand to (a one-item list, counted down while converting)."""
    return [MAX_VALUES_PER_CHARACTER * len(text) + 1000]


def too_deep(text: str) -> int | None:
    """The first line nested deeper than MAX_DEPTH (by indentation or by flow brackets), or None."""
    flow = _DEEP_FLOW.search(text) if text.count("[") + text.count("{") > MAX_DEPTH else None
    first = text.count("\n", 0, flow.start()) + 1 if flow else None
    if " " * (2 * MAX_DEPTH + 1) not in text:  # no line is indented that deep
        return first
    for number, line in enumerate(text.splitlines(), start=1):
        if first is not None and number >= first:
            break
        if len(line) - len(line.lstrip(" ")) > 2 * MAX_DEPTH:
            return number
    return first


ALIAS_BOMB = "YAML anchors and aliases expand to more values than the file could hold (an alias bomb)"


class _DuplicateKey(Exception):
    """A mapping repeats a key while lines are not recorded: its message needs the line of the first one."""


def yaml_lines(text: str) -> dict[YamlPath, int]:
    """The line of every YAML path of a file that loaded without a problem (composed and converted again)."""
    lines: dict[YamlPath, int] = {}
    node = yaml.compose(text, Loader=_SafeComposer)
    if node is not None:
        plain_data(node, (), lines, "", [], value_budget(text))
    return lines


def plain_data(
    node: yaml.Node,
    path: YamlPath,
    lines: dict[YamlPath, int] | None,
    shown: str,
    issues: list[Issue],
    budget: list[int],
) -> Any:
    """Turn a composed node into plain Python data, recording the line of every path in `lines` (unless it is
    None: then a duplicate key raises _DuplicateKey); `budget` holds how many more values the file may expand
    to."""
    budget[0] -= 1
    if budget[0] < 0:
        raise YamlTooLarge(ALIAS_BOMB)
    if len(path) > MAX_DEPTH:
        raise YamlTooLarge(f"YAML nested deeper than {MAX_DEPTH} levels")
    if lines is not None:
        lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        merged = _merged(node, path, lines, shown, issues, budget)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                issues.append(
                    Issue(
                        "yaml",
                        "a key that is a list or mapping (`? ...`)",
                        "Keys are plain names; write this entry as `name: value`.",
                        location=Location(shown, key_node.start_mark.line + 1, format_path(path)),
                    )
                )
                continue
            if key_node.tag == _STR:  # a plain key, as plain_data gives it, inline (one value of the budget)
                budget[0] -= 1
                if budget[0] < 0:
                    raise YamlTooLarge(ALIAS_BOMB)
                key = key_node.value
            else:
                key = plain_data(key_node, path, lines, shown, issues, budget)
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                key = str(key)
            if key in out:
                if lines is None:
                    raise _DuplicateKey
                issues.append(
                    Issue(
                        "yaml",
                        f"duplicate key `{key}`",
                        f"Remove one of them; the first is on line {lines[(*path, key)]}.",
                        location=Location(shown, key_node.start_mark.line + 1, format_path((*path, key))),
                    )
                )
                continue
            if lines is not None:
                lines[(*path, key)] = key_node.start_mark.line + 1
            tag = value_node.tag
            if (
                isinstance(value_node, yaml.ScalarNode)
                and (tag == _STR or (tag == _INT and value_node.value.isdigit()))
                and len(path) < MAX_DEPTH
            ):  # a plain string or whole number, as plain_data gives it, inline
                budget[0] -= 1
                if budget[0] < 0:
                    raise YamlTooLarge(ALIAS_BOMB)
                out[key] = value_node.value if tag == _STR else int(value_node.value)
            else:
                out[key] = plain_data(value_node, (*path, key), lines, shown, issues, budget)
        return {**{k: v for k, v in merged.items() if k not in out}, **out} if merged else out
    if isinstance(node, yaml.SequenceNode):
        return [plain_data(item, (*path, i), lines, shown, issues, budget) for i, item in enumerate(node.value)]
    if node.tag == _STR:  # fast path for the common scalars; the constructor handles the rest
        return node.value
    if node.tag == _INT and node.value.isdigit():
        return int(node.value)
    try:
        return _SCALARS.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError:
        issues.append(
            Issue(
                "yaml",
                f"unknown YAML tag `{node.tag}`",
                "An inventory holds plain values: remove the tag (secrets never belong in it).",
                location=Location(shown, node.start_mark.line + 1, format_path(path)),
            )
        )
        return None
    except (ValueError, OverflowError):  # shaped as a date or time YAML reads, but none (2026-02-30, 25:00)
        issues.append(
            Issue(
                "yaml",
                f"`{node.value}` is shaped like a date or time, but there is no such day or time",
                f'Write a real one, or quote it to mean text (`"{node.value}"`).',
                location=Location(shown, node.start_mark.line + 1, format_path(path)),
            )
        )
        return None


def _merged(
    node: yaml.MappingNode,
    path: YamlPath,
    lines: dict[YamlPath, int] | None,
    shown: str,
    issues: list[Issue],
    budget: list[int],
) -> dict[Any, Any]:
    """The values a mapping takes from its merge keys (`<<: *base` or `<<: [*a, *b]`; the first source of a key
    wins, and the mapping's own keys override them all, as YAML's merge key type says)."""
    merged: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        if key_node.tag != _MERGE:
            continue
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for source in sources:
            if not isinstance(source, yaml.MappingNode):
                issues.append(
                    Issue(
                        "yaml",
                        "a merge key `<<` takes a mapping or a list of mappings",
                        "Point `<<:` at an anchored mapping, such as `<<: *defaults`.",
                        location=Location(shown, source.start_mark.line + 1, format_path(path)),
                    )
                )
                continue
            for key, value in plain_data(source, path, lines, shown, issues, budget).items():
                merged.setdefault(key, value)
    return merged


def _read_csv(
    path: Path,
    shown: str,
    sources: SourceMap,
    issues: list[Issue],
    rows: dict[str, list[tuple[str, int, Any]]],
    edited: Mapping[Path, str],
) -> set[str]:
    """Read one CSV's rows into `rows`; the issues found go to `issues`. Returns the CSV's section when a row of it
    (or the whole file) was refused, else nothing."""
    text = read_text(path, shown, issues, edited)
    if text is None:
        return set()
    section = _csv_section(path)
    assert section is not None  # inventory_files only returns CSVs with a section
    model = CSV_SECTIONS[section]
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except csv.Error as exc:
        issues.append(
            Issue("csv", f"unreadable CSV header ({exc})", "Fix the first line.", location=Location(shown, 1, "header"))
        )
        return {section}
    fields = list(model.model_fields)
    lines: dict[YamlPath, int] = {(): 1}
    sources.lines[shown] = lines
    if len(header) > 4 * len(fields):
        issues.append(
            Issue(
                "csv",
                f"the header has {len(header)} columns; a {section} file has {len(fields)}",
                f"Use the columns {', '.join(fields)}.",
                location=Location(shown, 1, "header"),
            )
        )
        return {section}
    bad = False
    for col, name in enumerate(header):
        lines[(name,)] = 1
        if name not in fields:
            issues.append(
                Issue(
                    "schema",
                    f"unknown column `{name}`",
                    _did_you_mean(name, fields),
                    location=Location(shown, 1, f"column {col + 1}"),
                )
            )
            bad = True
    required = [n for n, f in model.model_fields.items() if f.is_required()]
    for name in required:
        if name not in header:
            issues.append(
                Issue(
                    "schema",
                    f"missing column `{name}`",
                    f"Add `{name}` to the header; the columns are: {', '.join(fields)}.",
                    location=Location(shown, 1, "header"),
                )
            )
            bad = True
    if bad:
        return {section}
    records: list[dict[str, str]] = []
    try:
        _read_rows(reader, header, shown, lines, records, issues)
    except csv.Error as exc:  # e.g. a field over csv's 128 KiB limit
        issues.append(
            Issue(
                "csv",
                f"unreadable CSV ({exc})",
                "Fix or shorten that row.",
                location=Location(shown, reader.line_num, f"row {reader.line_num}"),
            )
        )
        return {section}
    valid: list[Any] = [None] * len(records)
    try:  # `model` is the section's, chosen at run time (mypy takes a type only from an annotation: the ignore)
        valid = list(TypeAdapter(list[model]).validate_python(records))  # type: ignore[valid-type]
    except ValidationError as exc:
        failed = {err["loc"][0] for err in exc.errors()}
        for err in exc.errors():
            index = int(err["loc"][0])
            if records[index]:
                issues.append(_schema_issue(err, model, shown, (index,), sources, csv_row=True))
        valid = [model.model_validate(r) if i not in failed else None for i, r in enumerate(records)]
    rows[section].extend((shown, i, row) for i, row in enumerate(valid) if row is not None)
    return {section} if None in valid else set()


def _read_rows(
    reader: Iterator[list[str]],
    header: list[str],
    shown: str,
    lines: dict[YamlPath, int],
    records: list[dict[str, str]],
    issues: list[Issue],
) -> None:
    """The CSV's rows as records of their non-empty values; a row of the wrong width is an issue and an empty
    record (so indexes stay row-aligned)."""
    for number, values in enumerate(reader, start=2):
        if not any(v.strip() for v in values):
            continue
        index = len(records)
        lines[(index,)] = number
        if len(values) != len(header):
            issues.append(
                Issue(
                    "csv",
                    f"row has {len(values)} values but the header has {len(header)}",
                    "Give every row one value per header column (quote values that contain commas).",
                    location=Location(shown, number, f"row {number}"),
                )
            )
            records.append({})
            continue
        records.append({k: v for k, v in zip(header, values, strict=True) if v.strip() != ""})


# --- validation ------------------------------------------------------------------------------------


def _validate_items(
    section: str,
    model: type[BaseModel],
    items: list[tuple[str, YamlPath, Any]],
    sources: SourceMap,
    issues: list[Issue],
    broken: set[tuple[str, str]],
) -> list[Any]:
    out = []
    for file, ypath, data in items:
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, str):
            sources.objects.setdefault((section, name), (file, ypath))
            if section == "clusters":
                for j, pool in enumerate(data.get("pools") or []):
                    if isinstance(pool, dict) and isinstance(pool.get("name"), str):
                        sources.objects.setdefault(("pools", pool["name"]), (file, (*ypath, "pools", j)))
        obj = _validate_one(model, data, file, ypath, sources, issues)
        if obj is not None:
            out.append(obj)
        elif isinstance(name, str):
            broken.add((section, name))
            if section == "clusters":
                broken.update(
                    ("pools", p["name"])
                    for p in data.get("pools") or []
                    if isinstance(p, dict) and isinstance(p.get("name"), str)
                )
    return out


def _validate_one(
    model: type[BaseModel], data: Any, file: str, ypath: YamlPath, sources: SourceMap, issues: list[Issue]
) -> Any:
    try:
        return inventory_types().validate(model, data)
    except ValidationError as exc:
        for err in _first_causes(exc.errors()):
            err, within = _as_cluster_error(err) if model is Cluster else (err, model)
            issues.append(_schema_issue(err, within, file, ypath, sources))
        return None


def _as_cluster_error(err: Any) -> tuple[Any, type[BaseModel]]:
    """A cluster's error as its kind's model reports it: the union's tag dropped from the path, and a `kind` no
    provider has (or none) as the value or key error of `kind`."""
    loc = tuple(err["loc"])
    if err["type"] == "union_tag_invalid":
        expected = ", ".join(f"'{p.kind}'" for p in providers())
        kind = err["input"].get("kind")
        return {**err, "type": "literal_error", "loc": ("kind",), "input": kind, "ctx": {"expected": expected}}, Cluster
    if err["type"] == "union_tag_not_found":
        return {**err, "type": "missing", "loc": ("kind",)}, Cluster
    if loc and isinstance(loc[0], str):
        return {**err, "loc": loc[1:]}, provider_of(loc[0]).cluster_model
    return err, Cluster


def _first_causes(errors: list[Any]) -> list[Any]:
    """The errors without the follow-ons of others: a list "too short" only because its one item was refused."""
    paths = [tuple(e["loc"]) for e in errors]
    return [
        e
        for e in errors
        if e["type"] != "too_short"
        or not any(p[: len(e["loc"])] == tuple(e["loc"]) and p != tuple(e["loc"]) for p in paths)
    ]


def _schema_issue(
    err: Any, model: type[BaseModel], file: str, prefix: YamlPath, sources: SourceMap, csv_row: bool = False
) -> Issue:
    """Turn one pydantic error into an Issue with location, message and fix."""
    loc: tuple[str | int, ...] = tuple(err["loc"])
    if csv_row:
        loc = loc[1:]
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    where_model = _model_at(model, loc[:-1]) if loc else model
    doc = f"See {REFERENCE_DOC}#{(where_model or model).__name__.lower()}."
    location = sources.at(file, prefix + loc)
    field_name = _field_of(loc)
    if kind == "extra_forbidden":
        fields = list(where_model.model_fields) if where_model else []
        return Issue("schema", f"unknown key `{field_name}`", _did_you_mean(str(field_name), fields), location=location)
    if kind == "missing":
        return Issue("schema", f"missing required key `{field_name}`", f"Add `{field_name}:`. {doc}", location=location)
    if kind == "literal_error":
        expected = ctx.get("expected", "")
        options = [o.strip().strip("'") for o in expected.replace(" or ", ", ").split(",") if o.strip()]
        hint = _did_you_mean(str(value), options, plain=True)
        return Issue(
            "schema", f"`{field_name}` must be one of {', '.join(options)}", hint or doc, got=value, location=location
        )
    if kind == "string_pattern_mismatch" and ctx.get("pattern") in PATTERN_HINTS:
        what, fix = PATTERN_HINTS[ctx["pattern"]]
        return Issue(
            "schema", f"`{field_name}` is not {what}{_look_alikes(str(value))}", fix, got=value, location=location
        )
    if kind == "string_pattern_mismatch":
        return Issue(
            "schema",
            f"`{field_name}` is not a valid name{_look_alikes(str(value))}",
            _name_fix(str(value)),
            got=value,
            location=location,
        )
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        op = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}[kind]
        bound = next(iter(ctx.values()), "")
        if str(bound).startswith(("datetime.date(", "datetime.datetime(")):  # a date bound: the calendar window
            return Issue(
                "schema",
                f"`{field_name}` is outside {FIRST_DAY.year}-{LAST_DAY.year}",
                f"Use a date from {FIRST_DAY} to {LAST_DAY} (a typo in the year?). {doc}",
                got=value,
                location=location,
            )
        return Issue(
            "schema",
            f"`{field_name}` must be {op} {bound}",
            f"Use a value {op} {bound}. {doc}",
            got=value,
            location=location,
        )
    if kind == "too_long":
        most, got = ctx.get("max_length"), ctx.get("actual_length")
        return Issue(
            "schema",
            f"`{field_name}` has {got:,} items; at most {most:,} are allowed"
            if got is not None
            else f"`{field_name}` is too long",
            f"{LIST_CAP_FIXES.get(str(loc[-1]) if loc else '', 'Keep the list within the bound.')} {doc}",
            location=location,
        )
    if kind == "value_error":
        what, _, fix = str(ctx.get("error", err["msg"])).partition("; ")
        return Issue("schema", what, (fix[:1].upper() + fix[1:] + ".") if fix else doc, location=location)
    message = err["msg"][:1].lower() + err["msg"][1:]
    subject = f"`{field_name}`: " if field_name != "" else ""
    return Issue("schema", f"{subject}{message}", doc, got=value, location=location)


def _field_of(loc: tuple[str | int, ...]) -> str:
    """What a message names: the last key with the list indexes after it (`namespaces[1]`), not a bare index."""
    named = next((i for i in range(len(loc) - 1, -1, -1) if isinstance(loc[i], str)), None)
    return format_path(loc[named:]) if named is not None else format_path(loc)


def _model_at(model: type[BaseModel], loc: Iterable[str | int]) -> type[BaseModel] | None:
    """The model class that holds the last part of `loc`, walking nested fields."""
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None:
            return None
        if isinstance(part, int):
            continue
        info = current.model_fields.get(part)
        current = _inner_model(info.annotation) if info else None
    return current


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found:
            return found
    return None


def _did_you_mean(word: str, options: list[str], plain: bool = False) -> str:
    return did_you_mean(word, options) or ("" if plain else f"Valid keys here: {', '.join(options)}.")


LIST_CAP_FIXES = {
    "namespaces": f"Split the team into teams of at most {MAX_TEAM_NAMESPACES} namespaces each (every namespace gets "
    "a LocalQueue, a Role and a RoleBinding in each cluster), or let its workloads share fewer namespaces.",
    "quotas": f"List one quota per flavor (at most {MAX_TEAM_QUOTAS:,}): merge the entries of one flavor, or split "
    "the team.",
}
"""How to fix a list above its bound, per key (model.MAX_TEAM_NAMESPACES, model.MAX_TEAM_QUOTAS)."""


# What a value of a non-name pattern is, and how to write one (instead of the DNS-name hint).
PATTERN_HINTS = {
    OWNER_PATTERN: (
        "a GitHub @user, @org/team or e-mail address",
        "Write one owner per list item, e.g. `@northwind/ml-leads` or `ana.ruiz@northwind.ai`.",
    ),
    QUARTER_PATTERN: ("a quarter", "Write a year from 2000 to 2100 and Q1 to Q4 in ASCII digits, e.g. `2027Q1`."),
    COST_CENTER_PATTERN: ("a cost centre", "Use letters, digits, '-' and '_', starting with a letter or digit."),
}


def _look_alikes(value: str) -> str:
    """Name the characters outside ASCII: a Cyrillic letter may look like a Latin one but never matches it."""
    odd = [c for c in value if not c.isascii()]
    if not odd:
        return ""
    shown = ", ".join(f"`{c}` ({unicodedata.name(c, f'U+{ord(c):04X}')})" for c in dict.fromkeys(odd))
    return f": it contains characters outside ASCII ({shown})"


def _name_fix(value: str) -> str:
    slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in value.lower()).strip("-")
    while "--" in slug:
        slug = slug.replace("--", "-")
    suggestion = f" such as `{slug[:63].strip('-')}`" if slug else ""
    return (
        "Use lower-case letters, digits and '-', starting and ending with a letter or digit, "
        f"at most 63 characters (40 for pools){suggestion}."
    )


def _located(issue: Issue, sources: SourceMap) -> Issue:
    """The issue with its place, and the place of the first of two duplicates in the message."""
    first = sources.locate(issue.first) if issue.first else None
    message = f"{issue.message} (the first at {first.file}:{first.line})" if first else issue.message
    return replace(issue, location=sources.locate(issue.ref), message=message)
