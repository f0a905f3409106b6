"""Reports, comparisons and exports of run directories (SPEC §9)."""
