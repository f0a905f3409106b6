"""The run directory's one owner (SPEC §8.3): layout, run.json, the record schema, the
append-only record log and its reader."""
