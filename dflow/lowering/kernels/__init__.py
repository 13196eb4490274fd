"""Kernel bodies for `df-bufferize`: each fusion group or computing op as a
`func.func` over memrefs (`builder`), its loop nests (`loops`), one element of
each elementwise op as `arith`/`math` (`scalar_ops`), and kernel names (`names`)."""
