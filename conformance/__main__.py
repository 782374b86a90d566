"""``python -m jmspy.conformance``: the same as the ``jmspy-conformance`` command."""

import sys

from .cli import main

sys.exit(main())
