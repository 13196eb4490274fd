"""dflow's dialects: `df` (tensor dataflow ops, the graph level) and `dfrt` (a
device's host function as runtime calls), and the device names both use."""
