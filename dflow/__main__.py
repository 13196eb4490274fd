"""`python -m dflow` runs the command line."""

import sys

from dflow.driver.frontdoors.cli import console_main

sys.exit(console_main())
