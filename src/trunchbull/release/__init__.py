"""The release (SPEC §5): its format, its manifest, and the one reader of a built release."""
