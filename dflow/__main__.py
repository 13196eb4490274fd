"""`python -m dflow` runs the command line."""

import sys

from dflow.driver.frontdoors.cli import main

sys.exit(main())
