"""Renderers of the finance report, one per format, all reading the same ReportData:
`render_html`, `render_json`, `render_csv` (one table), `render_xlsx` (bytes) and `print_pdf` (headless Chromium).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from quartermaster.reports.filters import register
from quartermaster.reports.finance.build import ReportData
from quartermaster.reports.finance.charts import render_svg
from quartermaster.reports.finance.table import Table
from quartermaster.textsafety import spreadsheet_cell

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
XLSX_FORMATS = {
    "money": '"$"#,##0.00',
    "rate": '"$"#,##0.0000',
    "delta": '+"$"#,##0.00;-"$"#,##0.00;"$"0.00',
    "pct": "0.0%",
    "pct_change": "+0.0%;-0.0%;0.0%",
    "number": "#,##0.0",
    "int": "#,##0",
}


@dataclass(frozen=True)
class RenderOptions:
    """What to write: formats and the Chromium binary (None = look on PATH)."""

    formats: tuple[str, ...] = ("html", "json", "csv", "xlsx", "pdf")
    chromium: str | None = None
    generated: dt.date | None = None
    """generated: the day the report was written, shown in its header and on every PDF page; None leaves it out
    (golden files)."""


def nobreak(text: str) -> markupsafe.Markup:
    """Text for a table cell whose words never break inside: a word with a hyphen (`onprem-sjc`, `H100-80GB`) in a
    `nowrap` span, so a column is never narrower than its longest word; lines break at spaces only."""
    words = (markupsafe.escape(w) for w in str(text).split(" "))
    return markupsafe.Markup(" ").join(
        markupsafe.Markup('<span class="nw">{}</span>').format(w) if "-" in w else w for w in words
    )


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["nobreak"] = nobreak
    return register(env)


def render_html(data: ReportData, options: RenderOptions | None = None) -> str:
    """The self-contained page: inline CSS and inline SVG charts."""
    svg = {chart.name: render_svg(chart) for chart in data.charts}
    generated = options.generated if options is not None else None
    return _env().get_template("finance_report.html.j2").render(data=data, svg=svg, generated=generated)


def render_json(data: ReportData, options: RenderOptions | None = None) -> str:
    return data.to_json(options.generated if options is not None else None)


def render_csv(table: Table, options: RenderOptions | None = None) -> str:
    """One table as CSV: plain numbers (no currency signs), empty for unknown, a total row last."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c.key for c in table.columns])
    for row in [*table.rows, *([table.total] if table.total else [])]:
        writer.writerow(["" if row[c.key] is None else spreadsheet_cell(row[c.key]) for c in table.columns])
    return buffer.getvalue()


def render_xlsx(data: ReportData, options: RenderOptions | None = None) -> bytes:
    """A workbook: a summary sheet, then a sheet per table; numbers as numbers with currency and percentage
    formats; header rows frozen."""
    book = Workbook()
    summary = book.active
    summary.title = "Summary"
    s = data.summary
    generated = options.generated if options is not None else None
    lines = [
        ("Generated", str(generated) if generated else "not recorded", "text"),
        ("What-ifs", ", ".join(data.what_if) or "none", "text"),
        *(
            ()
            if s.in_progress is None
            else (
                ("Quarter in progress", s.in_progress.quarter, "text"),
                (
                    f"Spend {s.in_progress.quarter} (metered to {s.in_progress.metered_until}, planned after)",
                    s.in_progress.spend,
                    "money",
                ),
            )
        ),
        ("Quarter", s.quarter, "text"),
        (f"Spend {s.quarter}", s.spend_quarter.current, "money"),
        ("Spend next four quarters", s.spend_next_four.current, "money"),
        ("Savings vs all on-demand", s.savings_quarter.current, "money"),
        ("Savings next four quarters", s.savings_next_four.current, "money"),
        ("Effective savings rate", s.savings_rate.current, "pct"),
        ("Coverage", s.coverage.current, "pct"),
        ("Utilisation", s.utilisation.current, "pct"),
        ("Commitments to approve", len(s.approve), "int"),
        ("Their total liability", s.approve_liability, "money"),
        ("Of which paid upfront, when bought", s.approve_upfront, "money"),
        ("Then paid monthly, a month", s.approve_monthly, "money"),
        ("Their liability in the plan's horizon", s.approve_in_horizon, "money"),
        ("Of which capital (on-prem purchases)", s.approve_capital, "money"),
        ("Its depreciation a month", s.approve_depreciation, "money"),
        ("All new purchases: total liability", s.purchases.liability, "money"),
        ("All new purchases: in the plan's horizon", s.purchases.in_horizon, "money"),
        ("All new purchases: post-horizon credit", "not recorded", "text")
        if s.purchases.post_horizon_credit is None
        else ("All new purchases: post-horizon credit", s.purchases.post_horizon_credit, "money"),
        ("p90 cost", s.p90_cost, "money"),
        ("Unmet accelerator-hours", s.unmet_hours, "number"),
    ]
    summary.append(["Figure", "Value"])
    for label, value, kind in lines:
        summary.append([label, value])
        if kind in XLSX_FORMATS:
            summary.cell(summary.max_row, 2).number_format = XLSX_FORMATS[kind]
    _style(summary, 2)
    for table in data.tables:
        sheet = book.create_sheet(_sheet_name(table.name))
        sheet.append([c.label for c in table.columns])
        for row in [*table.rows, *([table.total] if table.total else [])]:
            sheet.append([spreadsheet_cell(row[c.key]) for c in table.columns])
            for i, c in enumerate(table.columns, start=1):
                if c.kind in XLSX_FORMATS:
                    sheet.cell(sheet.max_row, i).number_format = XLSX_FORMATS[c.kind]
        if table.total:
            for cell in sheet[sheet.max_row]:
                cell.font = Font(bold=True)
        _style(sheet, len(table.columns))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _sheet_name(name: str) -> str:
    return name.replace("_", " ").capitalize()[:31]


def _style(sheet: Any, columns: int) -> None:
    sheet.freeze_panes = "A2"
    for cell in sheet[1]:
        cell.font = Font(bold=True)
        cell.fill = PatternFill("solid", fgColor="EEF2F7")
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    for i in range(1, columns + 1):
        width = max((len(str(c.value)) for c in sheet[get_column_letter(i)] if c.value is not None), default=8)
        sheet.column_dimensions[get_column_letter(i)].width = min(48, max(10, width + 2))


def find_chromium(explicit: str | None = None) -> str | None:
    """The headless browser that prints the PDF: `explicit`, else the first of CHROMIUM_NAMES on PATH."""
    if explicit:
        return shutil.which(explicit) or (explicit if Path(explicit).exists() else None)
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def chromium_command(chromium: str, profile: Path, *flags: str) -> list[str]:
    """Headless Chromium that touches no network and no user profile."""
    return [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={profile}",
        *flags,
    ]


def print_pdf(html: Path, pdf: Path, chromium: str | None = None, timeout_s: float = 120) -> str | None:
    """Print a page to PDF with headless Chromium; None on success, else why not (the caller goes on)."""
    binary = find_chromium(chromium)
    if binary is None:
        return (
            "no PDF: Chromium is not installed (Debian/Ubuntu: `apt-get install chromium`); "
            "the HTML, XLSX, CSV and JSON files were written"
        )
    with tempfile.TemporaryDirectory(prefix="qm-chromium-") as profile:
        command = chromium_command(
            binary, Path(profile), "--no-pdf-header-footer", f"--print-to-pdf={pdf.resolve()}", html.resolve().as_uri()
        )
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"no PDF: Chromium failed ({err})"
    if done.returncode != 0 or not pdf.exists() or pdf.stat().st_size == 0:
        return f"no PDF: Chromium exited {done.returncode}: {done.stderr.strip()[-300:]}"
    return None


def write_report(data: ReportData, out: Path, options: RenderOptions | None = None) -> tuple[list[Path], list[str]]:
    """Write every requested format to `out`; return the files written and messages about those that were not."""
    options = options or RenderOptions()
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    messages: list[str] = []
    html = out / "report.html"
    if "html" in options.formats or "pdf" in options.formats:
        html.write_text(render_html(data, options), encoding="utf-8")
        written.append(html)
    if "json" in options.formats:
        (out / "report.json").write_text(render_json(data, options), encoding="utf-8")
        written.append(out / "report.json")
    if "csv" in options.formats:
        for table in data.tables:
            path = out / f"{table.name}.csv"
            path.write_text(render_csv(table, options), encoding="utf-8")
            written.append(path)
    if "xlsx" in options.formats:
        (out / "report.xlsx").write_bytes(render_xlsx(data, options))
        written.append(out / "report.xlsx")
    if "pdf" in options.formats:
        problem = print_pdf(html, out / "report.pdf", options.chromium)
        if problem:
            messages.append(problem)
        else:
            written.append(out / "report.pdf")
    return written, messages
