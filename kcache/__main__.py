"""`python -m kcache`: the same command as the `kcache` script."""

import sys

from kcache.cli import main

sys.exit(main())
