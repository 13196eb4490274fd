"""`python -m dflow` runs the command line."""

import sys

from dflow.cli import main

sys.exit(main())
