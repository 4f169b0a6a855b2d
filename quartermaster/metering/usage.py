"""Usage records in: read a CSV or Parquet file, map namespaces to teams, check every row against the
inventory, and pick the period to meter.

Columns: `hour` (start of the hour, ISO 8601; or `minute`, the start of the minute, for per-minute rows that
each weigh 1/60 of an hour), `cluster`, `team` or `namespace`, `flavor`, `accelerators_used`,
`accelerators_requested` (mean accelerators over the hour or minute), and optionally `pod` (rows per pod: each
pod at most 60 minutes an hour, many pods of a team in one hour). Problems come back as
`Issue`s with the file, the first offending line and how many rows share the problem.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from quartermaster.bounds import MAX_ACCELERATORS, MAX_CSV_COLUMNS, calendar_problem
from quartermaster.issues import Issue, Location, did_you_mean
from quartermaster.model import Inventory
from quartermaster.units import FIRST_DAY, LAST_DAY, quarter_bounds

NUMERIC = ("accelerators_used", "accelerators_requested")
REQUIRED = ("hour", "cluster", "flavor", *NUMERIC)
NAMES = ("cluster", "team", "namespace", "flavor", "pod")
"""Name columns, read dictionary-encoded (pandas categoricals): few distinct values over millions of rows."""


@dataclass(frozen=True)
class Period:
    """A metering period [start, end), named like `2026-10`, `2026Q4` or `2026-10..2026-12`."""

    label: str
    start: dt.datetime
    end: dt.datetime

    @property
    def hours(self) -> int:
        return int((self.end - self.start).total_seconds()) // 3600

    def days(self) -> list[dt.datetime]:
        """The midnights (UTC) of the days the period touches: a part of a day counts as its day."""
        day = dt.datetime.combine(self.start.date(), dt.time())
        out = []
        while day < self.end:
            out.append(day)
            day += dt.timedelta(days=1)
        return out

    def months(self) -> list[Period]:
        """The calendar months of the period (FOCUS billing periods)."""
        out, year, month = [], self.start.year, self.start.month
        while dt.datetime(year, month, 1) < self.end:
            out.append(month_period(year, month))
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        return out


def month_period(year: int, month: int) -> Period:
    """The calendar month as a period."""
    last = calendar.monthrange(year, month)[1]
    return Period(
        f"{year:04d}-{month:02d}", dt.datetime(year, month, 1), dt.datetime(year, month, last) + dt.timedelta(days=1)
    )


def parse_period(text: str) -> Period:
    """`2026-10` (a month) or `2026Q4` (a quarter); ValueError with the accepted forms otherwise."""
    years = f"years {FIRST_DAY.year} to {LAST_DAY.year}"
    if m := re.fullmatch(r"([0-9]{4})-([0-9]{2})", text):
        year, month = int(m[1]), int(m[2])
        if 1 <= month <= 12 and calendar_problem(dt.date(year, month, 1)):
            raise ValueError(f"`{text}` is outside the calendar the inventory may name ({years})")
        if 1 <= month <= 12:
            return month_period(year, month)
    if re.fullmatch(r"[0-9]{4}[Qq][1-4]", text):
        if calendar_problem(dt.date(int(text[:4]), 1, 1)):
            raise ValueError(f"`{text}` is outside the calendar the inventory may name ({years})")
        start, end = quarter_bounds(text.upper())
        return Period(text.upper(), dt.datetime.combine(start, dt.time()), dt.datetime.combine(end, dt.time()))
    raise ValueError(f"`{text}` is not a period; write a month like 2026-10 or a quarter like 2026Q4")


def period_of(hours: pd.Series) -> Period:
    """The whole calendar months the records span."""
    first, last = hours.min(), hours.max()
    a, b = month_period(first.year, first.month), month_period(last.year, last.month)
    return a if a == b else Period(f"{a.label}..{b.label}", a.start, b.end)


def covered_month(records: pd.DataFrame, month: Period) -> Period:
    """The part of `month` the usage history covers: the whole month, or from the history's first day (midnight UTC of
    its first record; a day with a record is covered, as `qm meter` checks) when it begins inside the month, up to
    the history's end (the hour after its last record) when it ends inside it."""
    hours = records["hour"]
    if not len(hours):
        return month
    first = hours.min().to_pydatetime().replace(tzinfo=None)
    start = max(month.start, dt.datetime.combine(first.date(), dt.time()))
    end = min(month.end, hours.max().to_pydatetime().replace(tzinfo=None) + dt.timedelta(hours=1))
    return month if (start, end) == (month.start, month.end) else Period(month.label, start, end)


def coverage_label(month: Period, covered: Period) -> str:
    """How a view names a month the usage history covers in part: `2026-10` when whole, else the part and that it is
    only a part (`2026-10, 2026-10-15 00:00..2026-11-01 00:00 only (no usage records before)`)."""
    if (covered.start, covered.end) == (month.start, month.end):
        return month.label
    before, after = covered.start > month.start, covered.end < month.end
    missing = "before or after" if before and after else ("before" if before else "after")
    return (
        f"{month.label}, {covered.start:%Y-%m-%d %H:%M}..{covered.end:%Y-%m-%d %H:%M} only (no usage records {missing})"
    )


def read_usage(path: Path, inventory: Inventory, shown: str | None = None) -> tuple[pd.DataFrame, list[Issue]]:
    """Records as a frame with columns hour, team, flavor, used, requested, minutes (and pod when given); and every
    problem found (located in `shown`, default the path)."""
    shown = shown or str(path)
    wide = wide_header(path, shown)
    if wide is not None:
        return pd.DataFrame(), [wide]
    try:
        raw = _read_parquet(path) if path.suffix.lower() in (".parquet", ".pq") else _read_csv(path)
    except (OSError, ValueError, pa.ArrowException) as err:
        return pd.DataFrame(), [
            Issue(
                "usage-file",
                f"{shown}: cannot read usage records: {err}",
                "Give a CSV or Parquet file with the usage columns (see `qm meter --help`).",
            )
        ]
    return check_usage(raw, inventory, shown)


def wide_header(path: Path, shown: str) -> Issue | None:
    """A located issue when a CSV file's header has more than MAX_CSV_COLUMNS columns (read from its first
    megabyte only: a header of tens of thousands of columns took seconds and gigabytes to read), else None."""
    if path.suffix.lower() != ".csv":
        return None
    with open(path, "rb") as file:
        first = file.read(1 << 20).split(b"\n", 1)[0]
    columns = first.count(b",") + 1
    if columns <= MAX_CSV_COLUMNS:
        return None
    return Issue(
        "usage-columns",
        f"{shown}: the header has {columns:,} or more columns; a usage file has 6 (at most {MAX_CSV_COLUMNS} are read)",
        f"The header must have {', '.join(REQUIRED)} (or `minute` for `hour`) and `team` or `namespace`.",
        location=Location(shown, 1, "header"),
    )


def _read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file with its string name columns as categoricals."""
    schema = pq.read_schema(path)
    names = [
        c
        for c in NAMES
        if c in schema.names
        and (pa.types.is_string(schema.field(c).type) or pa.types.is_large_string(schema.field(c).type))
    ]
    table = pq.read_table(path, read_dictionary=names)
    frame: pd.DataFrame = table.to_pandas(split_blocks=True, self_destruct=True)
    return frame


def _read_csv(path: Path) -> pd.DataFrame:
    """A CSV file read by pyarrow with typed columns; when a value does not parse, the hour and numbers are
    read again as text so that `check_usage` can say which line is wrong."""
    name = pa.dictionary(pa.int32(), pa.string())
    typed = {"hour": pa.timestamp("us"), "minute": pa.timestamp("us"), **{c: pa.float64() for c in NUMERIC}}

    def options(types: dict[str, pa.DataType]) -> pacsv.ConvertOptions:
        return pacsv.ConvertOptions(column_types={**{c: name for c in NAMES}, **types})

    try:
        table = pacsv.read_csv(path, convert_options=options(typed))
    except pa.ArrowInvalid:  # a value that is no time or number
        table = pacsv.read_csv(path, convert_options=options({c: pa.string() for c in typed}))
    frame: pd.DataFrame = table.to_pandas(split_blocks=True, self_destruct=True)
    return frame


def inventory_records(inventory: Inventory) -> pd.DataFrame:
    """The inventory's own usage rows (usage.csv) as raw records for `check_usage`."""
    return pd.DataFrame(
        [r.model_dump() for r in inventory.usage], columns=["hour", "cluster", "team", "flavor", *NUMERIC]
    )


def check_usage(raw: pd.DataFrame, inventory: Inventory, shown: str = "<usage>") -> tuple[pd.DataFrame, list[Issue]]:
    """Validate raw usage columns against the inventory and normalise them."""
    issues: list[Issue] = []
    who = "team" if "team" in raw.columns else "namespace"
    when = "minute" if "minute" in raw.columns and "hour" not in raw.columns else "hour"
    missing = [c for c in (when, *REQUIRED[1:], who) if c not in raw.columns]
    if missing:
        return pd.DataFrame(), [
            Issue(
                "usage-columns",
                f"{shown}: missing column(s) {', '.join(missing)}",
                f"The header must have {', '.join(REQUIRED)} (or `minute` for `hour`) and `team` or `namespace`.",
                got=list(raw.columns),
                location=Location(shown, 1, "header"),
            )
        ]
    if raw.empty:
        return pd.DataFrame(), [
            Issue(
                "usage-empty",
                f"{shown}: no usage records",
                "Give a file with at least one row.",
                location=Location(shown, 2, ""),
            )
        ]
    hour = raw[when]
    if not pd.api.types.is_datetime64_dtype(hour):  # strings, or times with an offset: to naive UTC, row by row
        hour = pd.to_datetime(hour, errors="coerce", utc=True, format="ISO8601").dt.tz_localize(None)
    _flag(
        issues,
        shown,
        hour.isna().to_numpy(),
        raw[when],
        when,
        "is not an ISO 8601 time",
        "Write the start of the hour, e.g. 2026-10-01T13:00:00.",
    )
    first, last = (pd.Timestamp(d) for d in (FIRST_DAY, LAST_DAY))
    _flag(
        issues,
        shown,
        (hour.notna() & ((hour < first) | (hour > last))).to_numpy(),
        raw[when],
        when,
        f"is outside {FIRST_DAY.year}-{LAST_DAY.year}",
        "Fix the year; usage records are hours in UTC.",
    )
    numbers = {}
    for column in NUMERIC:
        values = (
            raw[column].to_numpy(dtype="float64")
            if pd.api.types.is_float_dtype(raw[column])
            else np.full(len(raw), np.nan)  # a boolean is no number of accelerators (true would count 1)
            if pd.api.types.is_bool_dtype(raw[column])
            else pd.to_numeric(raw[column], errors="coerce").to_numpy(dtype="float64")
        )
        _flag(
            issues,
            shown,
            ~np.isfinite(values) | (values < 0) | (values > MAX_ACCELERATORS),
            raw[column],
            column,
            f"must be a number of accelerators from 0 to {MAX_ACCELERATORS:,} (the inventory's bound)",
            "Fix the value or drop the row.",
        )
        numbers[column] = values
    team_names = sorted(inventory.team_by_name)
    pool_names = [p.name for p in inventory.pools]
    codes, uniques = _factorize(raw[who])
    if who == "namespace":
        owner = {ns: t.name for t in inventory.teams for ns in t.namespaces}
        known, what, fix = sorted(owner), "belongs to no team", "Add it to a team's `namespaces` or fix the name."
        team_of_unique = [owner.get(u) for u in uniques]
    else:
        known, what, fix = team_names, "is not a team of the inventory", "Fix the team name."
        team_of_unique = [u if u in inventory.team_by_name else None for u in uniques]
    team_codes = _lookup(codes, [team_names.index(t) if t else -1 for t in team_of_unique])
    _flag_unknown(issues, shown, raw[who], team_codes < 0, who, known, what, fix)
    codes, uniques = _factorize(raw["flavor"])
    pool_index = {p: i for i, p in enumerate(pool_names)}
    flavor_codes = _lookup(codes, [pool_index.get(u, -1) for u in uniques])
    _flag_unknown(
        issues,
        shown,
        raw["flavor"],
        flavor_codes < 0,
        "flavor",
        pool_names,
        "is not a pool (ResourceFlavor) of the inventory",
        "Fix the flavor name.",
    )
    cluster_names = [c.name for c in inventory.clusters]
    cluster_of_pool = np.array([cluster_names.index(inventory.cluster_of_pool[p].name) for p in pool_names] + [-1])
    codes, uniques = _factorize(raw["cluster"])
    cluster_codes = _lookup(codes, [cluster_names.index(u) if u in cluster_names else -2 for u in uniques])
    wrong = (flavor_codes >= 0) & (cluster_codes != cluster_of_pool[flavor_codes])
    if wrong.any():
        at = int(np.flatnonzero(wrong)[0])
        _flag(
            issues,
            shown,
            wrong,
            raw["cluster"],
            "cluster",
            "is not the cluster of the row's flavor",
            f"Flavor `{pool_names[flavor_codes[at]]}` is a pool of cluster "
            f"`{cluster_names[cluster_of_pool[flavor_codes[at]]]}`; fix the cluster or the flavor.",
        )
    team = pd.Categorical.from_codes(np.asarray(team_codes, dtype=np.int64), categories=pd.Index(team_names))
    flavor = pd.Categorical.from_codes(np.asarray(flavor_codes, dtype=np.int64), categories=pd.Index(pool_names))
    frame = pd.DataFrame(
        {
            "hour": hour.dt.floor("h") if when == "minute" else hour,
            "team": team,
            "flavor": flavor,
            "used": numbers["accelerators_used"],
            "requested": numbers["accelerators_requested"],
            "minutes": 1 if when == "minute" else 60,
            **({"pod": raw["pod"].astype(str).where(raw["pod"].notna())} if "pod" in raw.columns else {}),
        },
        copy=False,
    )
    return frame, issues


def _factorize(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Integer codes per row and the distinct values (missing values get code -1): a categorical's own codes,
    pyarrow's dictionary encoding for Arrow-backed strings (3x faster than pandas), else `pd.factorize`."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.cat.codes.to_numpy(), [str(u) for u in values.cat.categories]
    if hasattr(values.array, "__arrow_array__"):
        array = pa.array(values.array)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        encoded = pc.dictionary_encode(array)
        return (
            encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False),
            [str(u) for u in encoded.dictionary.to_pylist()],
        )
    try:
        codes, uniques = pd.factorize(values)
    except TypeError:  # values that are no text (a struct column read as dicts): named by their text
        codes, uniques = pd.factorize(values.astype(str))
    return codes, [str(u) for u in uniques]


def _lookup(codes: np.ndarray, table: list[int]) -> np.ndarray:
    """Map codes through a small table; code -1 (missing) maps to -1."""
    mapped: np.ndarray = np.append(np.array(table, dtype=np.int64), -1)[codes]
    return mapped


def _flag(
    issues: list[Issue], shown: str, bad: np.ndarray, values: pd.Series, column: str, what: str, fix: str
) -> None:
    """One issue for every row where `bad` holds: the first such line and the count."""
    rows = np.flatnonzero(bad)
    if rows.size == 0:
        return
    first = int(rows[0])
    more = f" ({rows.size} rows; the first is shown)" if rows.size > 1 else ""
    issues.append(
        Issue(
            f"usage-{column}",
            f"{column} {what}{more}",
            fix,
            got=values.iloc[first],
            location=Location(shown, first + 2, column),
        )
    )


def _flag_unknown(
    issues: list[Issue],
    shown: str,
    names: pd.Series,
    bad: np.ndarray,
    column: str,
    known: list[str],
    what: str,
    fix: str,
) -> None:
    rows = np.flatnonzero(bad)
    if rows.size == 0:
        return
    name = str(names.iloc[int(rows[0])])
    hint = f" {did_you_mean(name, known)}".rstrip()
    _flag(issues, shown, bad, names, column, f"`{name}` {what}", fix + hint)
