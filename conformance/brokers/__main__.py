"""``python -m jmspy.conformance.brokers`` is the same as the ``jmspy-broker`` command."""

import sys

from .cli import main

sys.exit(main())
