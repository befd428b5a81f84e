"""`python -m strata` is `strata-bench`."""

import sys

from .cli import main

sys.exit(main())
