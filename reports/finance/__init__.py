"""The quarterly finance report: ReportData from a plan, then renderers (HTML, XLSX, CSV, JSON, PDF)."""

from quartermaster.plan_figures import quarter_cost
from quartermaster.reports.finance.build import ReportData, build_report
from quartermaster.reports.finance.report_formats import (
    RenderOptions,
    find_chromium,
    print_pdf,
    render_html,
    render_xlsx,
    write_report,
)
from quartermaster.reports.finance.table import Amount, Table

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
