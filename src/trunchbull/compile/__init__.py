"""The compile pipeline (SPEC §3): config → discovery → bundle → inspect → expand →
validate → freeze."""
