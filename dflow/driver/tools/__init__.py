"""What a compiler developer uses to see what dflow did: `dflow opt` (`opt`),
`bisect`, `reduce` (with `reductions`), `viz`, `dflow plan`'s figures and picture
(`memory_report`, `memory_plot`), and `--trace`/`--profile` (`profiling`)."""
