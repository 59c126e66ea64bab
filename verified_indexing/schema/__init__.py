"""The JSON Schema of the command line's output: the types (:mod:`.types`, ``msgspec`` structs), the
generator (:mod:`.generate`) and the generated file ``verified-indexing-1.json`` (package data)."""
