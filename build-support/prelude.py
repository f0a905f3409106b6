# Symbols every BUILD file of this repository can use ([GLOBAL].build_file_prelude_globs).

# The version of both distributions built here (`trunchbull` and `trunchbull-pants`), which are
# versioned together. It must equal `trunchbull.__version__` and `trunchbull_pants.version.VERSION`
# (tests/test_distributions.py checks that).
TRUNCHBULL_VERSION = "0.1.0"

# Wheels are byte-reproducible: every file in them gets this timestamp (1980-01-01, the earliest
# a zip file can hold) instead of the build sandbox's.
REPRODUCIBLE_BUILD_ENV = ("SOURCE_DATE_EPOCH=315532800",)
