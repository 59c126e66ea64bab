"""``python -m verified_indexing``: the same command line as ``verified-indexing``."""

from verified_indexing.cli import main

main()
