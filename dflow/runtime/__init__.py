"""dflow's runtime: loads emitted device modules and runs them.

It knows only the ABI the emitted modules call (`runtime.context`), never the
compiler: `load_program(directory)` imports the modules `dflow compile` wrote,
and `LoadedProgram.run(arguments)` runs the entry with one thread per device.
"""

from dflow.runtime.program import LoadedProgram, ProgramError, load_program

__all__ = ["LoadedProgram", "ProgramError", "load_program"]
