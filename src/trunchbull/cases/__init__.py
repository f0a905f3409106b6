"""Case sources: inline arrays, CSV and JSONL files, transformers."""
