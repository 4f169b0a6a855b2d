"""Everything a person reads: finance report, PR quota diff, FOCUS export, metering."""

# Installed as `quartermaster.reports`; the bare folder name is importable only by accident (the repo root on sys.path).
if __name__ != "quartermaster.reports":
    raise ImportError(f"`{__name__}` is not a package of its own: import `quartermaster.reports` instead")
