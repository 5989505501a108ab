"""``python -m topicmatch``: the same as the ``topicmatch`` command."""

import sys

from topicmatch.cli import main

sys.exit(main())
