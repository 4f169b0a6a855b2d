"""Write a metering result: `meter.json` (everything), its ledger and CSVs for spreadsheets."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, fields
from pathlib import Path

from quartermaster.metering.meter import ChargeLine, MeterResult, TeamCharge
from quartermaster.pricing import PricedLine
from quartermaster.textsafety import spreadsheet_cell


def write_meter(result: MeterResult, out: Path) -> list[Path]:
    """meter.json, meter_teams.csv, meter_cost_centers.csv, meter_lines.csv (usage, idle, idle shares) and
    ledger.csv (`MeterResult.ledger`: the priced lines every metered table groups)."""
    out.mkdir(parents=True, exist_ok=True)
    written = [
        out / "meter.json",
        out / "meter_teams.csv",
        out / "meter_cost_centers.csv",
        out / "meter_lines.csv",
        out / "ledger.csv",
    ]
    written[0].write_text(json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _csv(written[1], [f.name for f in fields(TeamCharge)], [asdict(t) for t in result.teams])
    _csv(
        written[2],
        ["cost_center", "total"],
        [{"cost_center": cc, "total": v} for cc, v in sorted(result.cost_centers.items())],
    )
    _csv(
        written[3],
        [f.name for f in fields(ChargeLine)],
        [asdict(x) for x in (*result.lines, *result.idle, *result.idle_shares)],
    )
    _csv(written[4], [f.name for f in fields(PricedLine)], [asdict(x) for x in result.ledger])
    return written


def _csv(path: Path, header: list[str], rows: list[dict[str, object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else spreadsheet_cell(v) for k, v in row.items()})
