"""``verified-indexing verify-cache``: re-prove the proof cache's stored proofs."""

from __future__ import annotations

import argparse
from collections import Counter

from verified_indexing.cli._common import add_timeout, count, print_json

EXAMPLES = """examples:
  verified-indexing verify-cache --sample 50
  verified-indexing verify-cache --cache proofs.sqlite --dry-run --json

exit codes: 0 every re-proved row confirmed (unknown and skipped rows are reported, kept),
1 a stored proof was refuted or errored now (removed unless --dry-run), 3 bad input.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify-cache",
        help="re-prove a sample (or all) of the proof cache's stored proofs; remove the ones that fail",
        description="Rebuild each sampled 'proved' row of the proof cache from its stored text, ask the same "
        "engine again without the cache, and report (and remove) the rows whose proof does not hold any more.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--cache", metavar="PATH", help="proof cache file (default: $VERIFIED_INDEXING_CACHE or ~/.cache)")
    p.add_argument("--sample", metavar="N", type=count, help="re-prove N rows chosen at random (default: all)")
    p.add_argument("--seed", metavar="N", type=count, default=0, help="seed of the sample (default 0)")
    p.add_argument("--dry-run", action="store_true", help="report mismatches without removing them")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(p, 600.0)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verified_indexing.engines.cache import ProofCache, default_cache
    from verified_indexing.engines.verify_cache import verify_cache

    cache = ProofCache(args.cache) if args.cache else default_cache()
    checks = verify_cache(cache, sample=args.sample, seed=args.seed, remove=not args.dry_run,
                          timeout=min(10.0, args.timeout))
    tally = Counter(c.outcome for c in checks)
    if args.json:
        from verified_indexing.serialize import verify_cache_json

        print_json(verify_cache_json(cache.path, checks))
    else:
        for c in checks:
            if c.outcome != "confirmed":
                print(f"{c.outcome}: {c.question}\n  {c.detail}")
        summary = ", ".join(f"{tally.get(k, 0)} {k}" for k in ("confirmed", "mismatch", "unconfirmed", "skipped"))
        removed = " (removed)" if tally.get("mismatch") and not args.dry_run else ""
        print(f"{cache.path}: {len(checks)} proved rows re-checked: {summary}{removed}")
    if tally.get("mismatch"):
        return 1
    from verified_indexing.engines.verify_cache import NOT_REACHED

    return 2 if any(c.detail == NOT_REACHED for c in checks) else 0  # the budget ran out: unknown
