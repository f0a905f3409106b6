"""`trunchbull run` (SPEC §8): send a release's cases to a model through the
AI SDK, execute the release's tools, record every sample as it finishes
(resumable, cached), then grade with the shared grader.

release → samples (samples.py) → records (workers.py, recording.py, cache.py)
→ grades and summary (trunchbull.grading) → the run directory."""
