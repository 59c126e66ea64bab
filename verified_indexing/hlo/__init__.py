"""HLO indexing analysis: text parser, per-op indexing maps, fusion composition."""
