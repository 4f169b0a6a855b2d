"""Everything a person reads: finance report, PR quota diff, FOCUS export, metering."""
