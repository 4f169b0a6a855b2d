"""Usage metering as `qm meter` runs it, around the metering function of the core (`quartermaster.metering`):
usage files read where they lie (`source`) and the exports (`export`)."""
