import sys

from rdtlab.cli import main

sys.exit(main())
