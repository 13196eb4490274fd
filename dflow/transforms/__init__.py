"""Graph-level passes over `df` programs, one module (or package) per pass:
`df-fold-constants`, `df-simplify-arith`, `df-prune`, `df-optimize` (the three to
a fixed point), `df-autodiff`, `df-recompute`, `df-schedule`, `df-place-devices`; and
the canonicalization patterns the `df` ops offer to upstream `canonicalize`."""
