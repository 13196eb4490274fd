"""A program in, checked: its text read once (`program_text`) and parsed with file,
line and column (`source`), its well-formedness beyond xDSL's verifier
(`wellformed`, `partitioned`), an ONNX model imported (`onnx_input`), the `-p`
pipeline (`pipeline`), the checked module (`checked`), the options of a run
(`run_options`), and its feeds and results as plain arrays (`arrays`, `feeds`)."""
