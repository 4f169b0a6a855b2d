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
for export in metered planned; do
  report=$(cd "$site" && "$env/bin/focus-validator" --data-file "$out/$export.csv" --validate-version 1.2 --block-download)
  passed=$(grep -c '^✅' <<<"$report" || true)
  failed=$(grep '^❌' <<<"$report" || true)
  echo "$export: $passed rules pass, $(grep -c '^❌' <<<"$report" || true) fail"
  [ -z "$failed" ] || sed 's/^/  /' <<<"$failed"
done
