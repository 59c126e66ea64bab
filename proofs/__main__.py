"""``python -m proofs``: prove the rule catalogue, print the table."""

import sys

from proofs import main

sys.exit(main())
