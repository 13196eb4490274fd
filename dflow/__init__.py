"""dflow: the command line, pipeline definitions and the xdsl-opt plugin."""
