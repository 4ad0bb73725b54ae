"""``python -m urn8141``: the command line of ``urn8141.cli`` (also installed as ``urn8141``)."""

import sys

from urn8141.cli import main

if __name__ == "__main__":
    sys.exit(main())
