"""`python -m dflow` runs the command line."""

import sys

from dflow.driver.cli import main

sys.exit(main())
