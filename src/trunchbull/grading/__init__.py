"""Grading recorded responses against a release (SPEC §4): responses files,
the grader shared by `grade` and `run`, results files, summaries."""
