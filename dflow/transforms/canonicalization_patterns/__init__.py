"""Canonicalization patterns, one module per dialect (as in xDSL): `df`."""
