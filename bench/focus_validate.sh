#!/usr/bin/env bash
# The FinOps Foundation's focus-validator 2.2.1 (FOCUS 1.2 rules, default applicability) on both FOCUS exports of
# the example: metered (2026-10) and planned (2027Q1, from the stored plan). The validator needs Python 3.12 and
# pyarrow<21, so it gets an environment of its own; it opens data files of its own by relative path, so it runs
# from its site-packages folder; it exits 0 even when rules fail, so this script prints the failing rules.
#
#     bash bench/focus_validate.sh        (PY312=/path/to/python3.12 to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
py312=${PY312:-python3.12}
env=${FOCUS_VALIDATOR_ENV:-.focus-validator}
if [ ! -x "$env/bin/focus-validator" ]; then
  "$py312" -m venv "$env"
  "$env/bin/pip" install -q --no-compile focus-validator==2.2.1 "pyarrow<21"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
.venv/bin/qm export focus inventory --period 2026-10 --out "$out/metered.csv"
.venv/bin/qm export focus inventory --quarter 2027Q1 --plan tests/data/reports/plan --out "$out/planned.csv"
site=$("$env/bin/python" -c 'import focus_validator, pathlib; print(pathlib.Path(focus_validator.__file__).parents[1])')
# What the exports themselves imply: commitments, capacity reservations, zones, regions, tags, sub-accounts,
# published list prices, unit pricing, usage measurement, account names, resource types, several pricing categories.
criteria=COMMITMENT_DISCOUNT_SUPPORTED,CAPACITY_RESERVATION_SUPPORTED,AVAILABILITY_ZONE_SUPPORTED,REGION_SUPPORTED
criteria+=,TAGGING_SUPPORTED,SUB_ACCOUNT_SUPPORTED,PUBLIC_PRICE_LIST_SUPPORTED,UNIT_PRICING_SUPPORTED
criteria+=,USAGE_MEASUREMENT_SUPPORTED,ACCOUNT_NAMING_SUPPORTED,RESOURCE_TYPE_ASSIGNMENT_SUPPORTED
criteria+=,MULTIPLE_PRICING_CATEGORIES_SUPPORTED
for export in metered planned; do
  for applicability in default "$criteria"; do
    extra=()
    [ "$applicability" = default ] || extra=(--applicability-criteria "$applicability")
    report=$(cd "$site" && "$env/bin/focus-validator" --data-file "$out/$export.csv" --validate-version 1.2 \
      --block-download "${extra[@]}")
    failed=$(grep '^❌' <<<"$report" | cut -d' ' -f2 | tr -d ':' || true)
    label=$([ "$applicability" = default ] && echo "default applicability" || echo "the export's criteria")
    echo "$export, $label: $(grep -c '^✅' <<<"$report" || true) rules pass, $(grep -c '^❌' <<<"$report" || true) fail"
    [ -z "$failed" ] || echo "  failing, by column: $(cut -d- -f1 <<<"$failed" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' | sed 's/, $//')"
  done
done
