"""Correlation: jobs, attempts from gang events, progress, stalls and stragglers."""
