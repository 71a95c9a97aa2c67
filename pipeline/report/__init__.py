"""The per-job HTML report."""
