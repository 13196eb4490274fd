"""What every pass shares, apart from the analyses it uses: its failures, one line
named for the pass (`failures.py`: `df-fuse: max-ops must be at least 1, got 0`),
and its statistics lines (`statistics.py`: what `stats=true` prints to stderr).

Analyses (`dflow/analysis/`) sit beside this package, not above it: they raise
their own errors, and each pass wraps them with its own name.
"""
