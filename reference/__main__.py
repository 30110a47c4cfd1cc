"""``python3 -m reference send|recv ...``: see reference/cli.py."""

import sys

from reference.cli import main

sys.exit(main())
