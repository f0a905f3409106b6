"""Utilities every stage shares: diagnostics, user files and paths, files, JSON Lines, IDs,
process lifetime, terminal tables and progress."""
