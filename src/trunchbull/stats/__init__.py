"""Statistics of results: intervals, paired differences, power, multiple comparisons, pass@k.
Pure functions of counts and moments, standard library only (no scipy at import or run time)."""
