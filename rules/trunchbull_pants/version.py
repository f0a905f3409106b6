"""The version of the plugin, which is also the version of the `trunchbull` core it runs by
default (the two distributions are built and versioned together; see rules/BUILD)."""

VERSION = "0.1.0"
