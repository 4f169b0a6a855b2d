"""The quarterly finance report: ReportData from a plan, then renderers (HTML, XLSX, CSV, JSON, PDF)."""

from quartermaster.reports.finance.data import Amount, ReportData, Table, build_report, quarter_cost
from quartermaster.reports.finance.render import (
    RenderOptions,
    find_chromium,
    print_pdf,
    render_html,
    render_xlsx,
    write_report,
)

__all__ = [
    "Amount",
    "RenderOptions",
    "ReportData",
    "Table",
    "build_report",
    "find_chromium",
    "print_pdf",
    "quarter_cost",
    "render_html",
    "render_xlsx",
    "write_report",
]
