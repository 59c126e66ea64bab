"""``python -m verified_indexing.proofs``: prove the rule catalogue, print the table."""

import sys

from verified_indexing.proofs import main

sys.exit(main())
