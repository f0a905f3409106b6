"""Case sources: inline arrays, CSV and JSONL files (SPEC §3.5-3.6)."""
