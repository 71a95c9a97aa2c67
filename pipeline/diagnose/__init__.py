"""Diagnosis: one verdict per job attempt (root cause, first failing rank, evidence)."""
