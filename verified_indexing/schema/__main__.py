"""``python -m verified_indexing.schema [--write]``: print the generated JSON Schema, or write it to the
shipped file (see :mod:`verified_indexing.schema.generate`)."""

from __future__ import annotations

import sys

from verified_indexing.schema.generate import SCHEMA_FILE, schema_text


def main(argv: list[str]) -> int:
    """Print the schema (``--write``: write it to the shipped file instead)."""
    if argv == ["--write"]:
        SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
        return 0
    if argv:
        print("usage: python -m verified_indexing.schema [--write]", file=sys.stderr)
        return 3
    sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
