"""`python -m kcache`: the same command as the `kcache` script."""

import sys

from kcache.cli.main import command

sys.exit(command())
