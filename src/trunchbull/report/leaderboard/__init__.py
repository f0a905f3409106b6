"""`trunchbull leaderboard`: many runs as one model × eval table (SPEC §9)."""
