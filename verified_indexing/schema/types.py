"""The types of every JSON object the command line prints (``verified-indexing COMMAND --json``), written
once as ``msgspec`` structs: the JSON Schema ``verified-indexing-1.json`` beside this file is generated from
them (:func:`verified_indexing.schema.generate.schema`, ``python -m verified_indexing.schema``) and a test checks
the shipped file is the generated one; the tests check every output they see against both the schema
(``jsonschema``) and these types (``msgspec.convert``).

A field without a default is required; a field whose default is ``UNSET`` may be absent (``seconds``-like
fields, absent under ``--no-timing``, and the fields only some outputs carry). ``Any`` is any JSON value.
Unknown fields are allowed (a newer version may add fields). This module needs ``msgspec`` (the ``test`` and
``dev`` extras); the command line does not import it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType, field

__all__ = ["COMMANDS", "Error", "ErrorObject", "Record", "Verdict", "IndexingMapJson"]


class _S(Struct, kw_only=True):
    """Base: fields by keyword, unknown fields allowed."""


Status = Literal["proved", "refuted", "unknown", "error"]
Positive = Annotated[int, Meta(ge=1)]


# -- shared pieces ---------------------------------------------------------------------------------------------


class Position(_S, kw_only=True):
    """Where in the input an error is (1-based line and column)."""

    source: str
    line: Positive
    column: Positive
    text: str | UnsetType | None = UNSET


class Error(_S, kw_only=True):
    """What went wrong: bad-input (exit 3), internal (exit 4), timeout (exit 2: the --timeout budget ran out
    where the command could not say what it had finished), or not-modelled (exit 2: a well-formed construct of
    the input the project does not model, named in the message: the answer is unknown); the position when the
    error has one."""

    kind: Literal["bad-input", "internal", "timeout", "not-modelled"]
    message: str
    position: Position | None


class SubExpression(_S, kw_only=True):
    """The value of one subexpression of a side at the counterexample."""

    side: str
    expr: str
    value: int


class Counterexample(_S, kw_only=True):
    """Concrete values for every variable, inside the domain, with both sides' values."""

    kind: str
    values: dict[str, int]
    source: list[int]
    target: list[int]
    subexpressions: list[SubExpression]
    in_domain: Any
    other_values: dict[str, int]
    note: str


class Verdict(_S, kw_only=True):
    """A verdict: status, engine, the question, the reason (null when none), a counterexample (null unless
    refuted), vacuous."""

    status: Status
    engine: str
    seconds: float | UnsetType = UNSET
    question: str
    reason: str | None
    counterexample: Counterexample | None
    cached: bool | UnsetType = UNSET
    vacuous: bool


class Bound(_S, kw_only=True):
    """A variable and its inclusive bounds."""

    name: str
    lo: int
    hi: int


class IndexingMapJson(_S, kw_only=True):
    """An indexing map: its one-line text, variables with bounds, results and constraints."""

    kind: str
    state: str
    text: str
    dims: list[Bound]
    range_vars: list[Bound]
    rt_vars: list[Bound]
    results: list[str]
    constraints: list[Any]


class Inverse(_S, kw_only=True):
    """A map's inverse: injectivity proved (or the collision), both compositions proved the identity."""

    status: str
    map: str
    inverse: str
    injectivity: Verdict
    inverse_after_map_is_identity: Verdict
    map_after_inverse_is_identity: Verdict
    collision: Any
    reason: Any


class NamedProof(_S, kw_only=True):
    """A named proof obligation, its verdict and its witness."""

    name: str
    verdict: Verdict
    witness: Any


# -- analyze ---------------------------------------------------------------------------------------------------


class RtOrigin(_S, kw_only=True):
    """Where a runtime variable comes from."""

    operand_index: int
    operand_name: str
    via: list[str]
    map: str


class AccessMapJson(_S, kw_only=True):
    """One indexing map of a target, its proof, and what it over-approximates."""

    map: str
    json: IndexingMapJson
    paths: int
    verdict: Annotated[Verdict | None, Meta(description="The proof; null with --no-verify.")]
    merge_proofs: list[Verdict]
    rt_origins: list[RtOrigin]
    exact: bool
    over_approximation: list[Any]


class TargetJson(_S, kw_only=True):
    """An operand (or output) of a computation and its maps."""

    index: int
    name: str
    shape: str
    maps: list[AccessMapJson]
    unsupported: list[Any]
    element: Any


class ComputationJson(_S, kw_only=True):
    """The indexing of one computation (a fusion's or the entry's)."""

    computation: str
    fusion: str | None
    direction: str
    source: int
    verified: bool
    targets: list[TargetJson]
    unsupported: list[Any]
    merge_proofs: int
    seconds: float | UnsetType = UNSET
    module: Annotated[
        str | None,
        Meta(description="The HloModule's name, when the input names its modules (a dump directory, a file of "
             "several modules)."),
    ] | UnsetType = UNSET
    file: Annotated[
        str | None,
        Meta(description="The file the module was read from (with module)."),
    ] | UnsetType = UNSET


class EpilogueJson(_S, kw_only=True):
    """Where ``analyze --epilogue HERO`` found its hero."""

    hero: str
    opcode: str
    computation: str
    module: str


class AnalyzeSummary(_S, kw_only=True):
    """Totals of an analysis."""

    fusions: int
    computations: int
    maps: int
    proofs: int
    proof_status: dict[str, int]
    unsupported_ops: list[Any]
    over_approximations: int
    seconds: float | UnsetType = UNSET


class Analyze(_S, kw_only=True):
    """The JSON of 'verified-indexing analyze --json' (without the schema and command keys)."""

    results: list[ComputationJson]
    summary: AnalyzeSummary
    not_reached: Annotated[
        list[str],
        Meta(description="Only when --timeout ran out (exit 2): every analysis not finished (a computation, "
             "computation/instruction, or fusion; prefixed index:module: for several modules); the results hold "
             "the ones finished."),
    ] | UnsetType = UNSET
    epilogue: Annotated[
        list[EpilogueJson],
        Meta(description="Only with --epilogue HERO: the hero of each module holding it; the results are then the "
             "maps from the hero's output to the root's (direction input-to-output)."),
    ] | UnsetType = UNSET


# -- audit, audit-kernels, verify-cache ------------------------------------------------------------------------


class AuditStep(_S, kw_only=True):
    """One step of a claim's audit."""

    step: str
    result: str


class AuditClaim(_S, kw_only=True):
    """One claim of XLA's printed maps, proved, over-approximating, refuted, unknown or an error."""

    claim: str
    line: int
    status: Literal["proved", "over-approximates", "refuted", "unknown", "error"]
    steps: list[AuditStep]
    witness: list[Any]
    counterexample: Any
    ours: list[str]
    kind: Literal["map", "unknown"] | UnsetType = UNSET


class Audit(_S, kw_only=True):
    """The JSON of 'verified-indexing audit --json' (without the schema and command keys)."""

    results: list[AuditClaim]


class KernelJson(_S, kw_only=True):
    """One kernel of XLA's dump: its index arithmetic proved, refuted or unknown."""

    kernel: str
    file: str
    status: Literal["proved", "refuted", "unknown"]
    reason: str | None
    witness: list[str]
    seconds: float | UnsetType = UNSET
    parameters: int | UnsetType = UNSET


class AuditKernels(_S, kw_only=True):
    """The JSON of 'verified-indexing audit-kernels --json' (without the schema and command keys)."""

    kernels: list[KernelJson]


class VerifyCache(_S, kw_only=True):
    """The JSON of 'verified-indexing verify-cache --json' (without the schema and command keys)."""

    cache: str
    tally: dict[str, Any]
    rows: list[Any]


# -- utilization, tile, coalescing -----------------------------------------------------------------------------


class UtilizationEntry(_S, kw_only=True):
    """The exact number of elements (and bytes) a fusion reads of one operand."""

    fusion: str | None
    computation: str
    operand: int
    name: str
    element: Any
    shape: str
    status: str
    elements_read: int
    elements_read_min: Any
    operand_elements: int
    accesses: int
    bytes_read: int
    ratio: float
    exact: bool
    method: str
    cross_check: str | None
    runtime: str | None
    approximation: Any
    reason: Any


class Utilization(_S, kw_only=True):
    """The JSON of 'verified-indexing utilization --json' (without the schema and command keys)."""

    operands: list[UtilizationEntry]


class TileSpec(_S, kw_only=True):
    """The output tile asked for."""

    offsets: list[int]
    sizes: list[int]
    strides: Any


class TileRead(_S, kw_only=True):
    """The box of one operand the tile reads, proven, and whether it is exact."""

    operand: int
    name: str
    element: Any
    read: str
    offsets: list[int]
    sizes: list[int]
    strides: list[int]
    containment: list[Verdict]
    exact: bool
    approximation: Any
    reason: Any


class Tile(_S, kw_only=True):
    """The JSON of 'verified-indexing tile --json' (without the schema and command keys)."""

    tile: TileSpec
    operands: list[TileRead]


class CoalescingWitness(_S, kw_only=True):
    """Lanes of one warp that break coalescing."""

    warp: int
    thread: int
    lanes: list[list[list[int] | int]]
    note: str


class CoalescingEntry(_S, kw_only=True):
    """Whether one operand's reads are coalesced under XLA's loop emitter."""

    computation: str
    operand: int
    name: str
    status: str
    lanes: Verdict | None
    same_address: Any
    vector: Any
    witness: CoalescingWitness | None
    reason: Any


class Coalescing(_S, kw_only=True):
    """The JSON of 'verified-indexing coalescing --json' (without the schema and command keys)."""

    vector_size: int
    warp_size: int
    operands: list[CoalescingEntry]


# -- fuse ------------------------------------------------------------------------------------------------------


class MlirCheck(_S, kw_only=True):
    """One of MLIR's checks of a producer-consumer pair."""

    check: str
    ok: bool
    detail: str | None


class PassDecision(_S, kw_only=True):
    """The pass's whole decision in the context of the function (linalg-fuse-elementwise-ops: the generic
    canonicalization dropping an unread input, fill folding, areElementwiseOpsFusable, the one-use control
    function)."""

    fuses: bool | None
    decided_by: Literal["canonicalization", "FoldFillWithGenericOp", "areElementwiseOpsFusable", "control function",
                        "reshape propagation", "EraseIdentityLinalgOp", "folding", "RemoveOutsDependency",
                        "trivially dead"]
    why: str
    producer_uses: int | None


class MlirVerdict(_S, kw_only=True):
    """MLIR's verdict on the pair (areElementwiseOpsFusable and its checks)."""

    fusable: bool
    rejected_by: str | None
    checks: list[MlirCheck]
    fused_producer_maps: list[str] | None
    pass_: PassDecision | UnsetType | None = field(default=UNSET, name="pass")


class FuseWitness(_S, kw_only=True):
    """A consumer iteration and an element where the fused op and the pair differ."""

    consumer_iteration: list[int] | UnsetType = UNSET
    sizes: dict[str, Any] | UnsetType = UNSET
    producer_iterations: list[list[int]] | UnsetType = UNSET
    element: list[int]
    note: str


class FuseObligation(_S, kw_only=True):
    """A proof obligation of the fusion and its witness."""

    name: str
    verdict: Verdict
    witness: FuseWitness | None


class FusedOperand(_S, kw_only=True):
    """An operand of the fused op: its map, proven."""

    value: str
    type: str
    map: str
    origin: str
    input: bool
    proof: Verdict | None


class FusedOp(_S, kw_only=True):
    """The fused op the project builds."""

    iterator_types: list[str]
    operands: list[FusedOperand]
    mlir: str


class FuseReport(_S, kw_only=True):
    """The verdict on one producer-consumer pair: MLIR's and the project's, with proofs."""

    producer: str
    producer_op: str
    consumer: str
    consumer_op: str
    scope: Annotated[
        str | None,
        Meta(description="The function or isolated region holding the pair (@f, or 'flow.dispatch.workgroups "
             "at line 12')."),
    ] | UnsetType = UNSET
    through_reshape: Annotated[
        str | None,
        Meta(description="The reshape the consumer reads the producer's result through ('tensor.expand_shape %e' "
             "or 'tensor.collapse_shape %c'; the pair is decided with the consumer reading the result through the "
             "reassociation's map), or null."),
    ] | UnsetType = UNSET
    fused_operand: int
    mlir: MlirVerdict
    status: str
    reason: str
    sizes: list[Any]
    condition: Any
    illegal_otherwise: Any
    warnings: list[Any]
    obligations: list[FuseObligation]
    whole_op_proof: NamedProof | None
    second_check: Annotated[
        NamedProof | None,
        Meta(description="The second, independent check of a legal fused op: the pair and the fused op run by "
             "the Linalg interpreter at several sizes (unknown when it did not run: no numpy, an operation it does "
             "not evaluate, over its budget)."),
    ] | UnsetType = UNSET
    write_map_inverse: Inverse | None
    fused: FusedOp | None


class Fuse(_S, kw_only=True):
    """The JSON of 'verified-indexing fuse --json' (without the schema and command keys): one pair's report,
    or several under "results"."""

    producer: str | UnsetType = UNSET
    producer_op: str | UnsetType = UNSET
    consumer: str | UnsetType = UNSET
    consumer_op: str | UnsetType = UNSET
    scope: str | UnsetType | None = UNSET
    through_reshape: str | UnsetType | None = UNSET
    fused_operand: int | UnsetType = UNSET
    mlir: MlirVerdict | UnsetType = UNSET
    status: str | UnsetType = UNSET
    reason: str | UnsetType = UNSET
    sizes: list[Any] | UnsetType = UNSET
    condition: Any = UNSET
    illegal_otherwise: Any = UNSET
    warnings: list[Any] | UnsetType = UNSET
    obligations: list[FuseObligation] | UnsetType = UNSET
    whole_op_proof: NamedProof | UnsetType | None = UNSET
    second_check: NamedProof | UnsetType | None = UNSET
    write_map_inverse: Inverse | UnsetType | None = UNSET
    fused: FusedOp | UnsetType | None = UNSET
    results: list[FuseReport] | UnsetType = UNSET
    note: Annotated[
        str, Meta(description="With no producer-consumer pair in the input: the line saying so (results is empty).")
    ] | UnsetType = UNSET


# -- inline, fuse-epilogue, reverse-inline, invert -------------------------------------------------------------


class InlineWitness(_S, kw_only=True):
    """Iterations and an element where the program and the inlined one differ."""

    iterations: list[dict[str, int]]
    element: list[int]
    note: str


class BlockCheck(_S, kw_only=True):
    """One legality check of a block transformation."""

    check: str
    status: str
    detail: str | None
    engine: str
    witness: Any


class InlineCheck(BlockCheck, kw_only=True):
    """One legality check of an inlining, with its witness."""

    witness: InlineWitness | None


class InlineStep(_S, kw_only=True):
    """The inlining of one block."""

    block: str
    status: str
    reason: str
    consumers: list[str]
    checks: list[BlockCheck]
    store_inverse: Inverse | None
    legal_when: Any
    program: str | None


class Inline(_S, kw_only=True):
    """The JSON of 'verified-indexing inline --json' (without the schema and command keys)."""

    block: str | UnsetType = UNSET
    status: str | UnsetType = UNSET
    reason: str | UnsetType = UNSET
    consumers: list[str] | UnsetType = UNSET
    checks: list[InlineCheck] | UnsetType = UNSET
    store_inverse: Inverse | UnsetType | None = UNSET
    legal_when: Any = UNSET
    program: str | None
    inlined: list[str] | UnsetType = UNSET
    steps: list[InlineStep] | UnsetType = UNSET


class EpilogueWitness(_S, kw_only=True):
    """An element, the sizes and the inputs where the original and fused programs differ."""

    element: list[int]
    original: str
    fused: str
    sizes: dict[str, int]
    inputs: str
    seed: int
    note: str


class EpilogueCheck(BlockCheck, kw_only=True):
    """One check of an epilogue fusion, with its witness."""

    witness: EpilogueWitness | None


class FuseEpilogue(_S, kw_only=True):
    """The JSON of 'verified-indexing fuse-epilogue --json' (without the schema and command keys)."""

    block: str
    reduction: str
    status: str
    reason: str
    form: str | None
    laws_assumed: list[str]
    checks: list[EpilogueCheck]
    program: str | None


class ReverseInline(_S, kw_only=True):
    """The JSON of 'verified-indexing reverse-inline --json' (without the schema and command keys)."""

    block: str
    status: str
    reason: str
    consumers: list[str]
    checks: list[BlockCheck]
    store_inverse: Inverse
    legal_when: Any
    program: str


class Collision(_S, kw_only=True):
    """Two points with one image."""

    first: list[int]
    second: list[int]
    image: list[int]


class MlirPermutation(_S, kw_only=True):
    """MLIR's view: is the map a permutation, and its inverse permutation."""

    is_permutation: bool
    inverse_permutation: str | None


class Invert(_S, kw_only=True):
    """The JSON of 'verified-indexing invert --json' (without the schema and command keys)."""

    status: str | UnsetType = UNSET
    map: str
    inverse: str | UnsetType | None = UNSET
    injectivity: Verdict | UnsetType = UNSET
    inverse_after_map_is_identity: Verdict | UnsetType | None = UNSET
    map_after_inverse_is_identity: Verdict | UnsetType | None = UNSET
    collision: Collision | UnsetType | None = UNSET
    reason: str | UnsetType | None = UNSET
    mlir: MlirPermutation


# -- show, simplify --------------------------------------------------------------------------------------------


class Show(_S, kw_only=True):
    """The JSON of 'verified-indexing show --json' (without the schema and command keys): an indexing map, or
    an MLIR affine map (num_dims, num_symbols)."""

    kind: str
    state: str | UnsetType = UNSET
    text: str
    dims: list[Bound] | UnsetType = UNSET
    range_vars: list[Bound] | UnsetType = UNSET
    rt_vars: list[Bound] | UnsetType = UNSET
    results: list[str]
    constraints: list[Any] | UnsetType = UNSET
    num_dims: int | UnsetType = UNSET
    num_symbols: int | UnsetType = UNSET


class SimplifyStep(_S, kw_only=True):
    """One rewrite the simplifier applied."""

    rule: str
    where: str
    before: str
    after: str
    verdict: Any


class Simplify(_S, kw_only=True):
    """The JSON of 'verified-indexing simplify --json' (without the schema and command keys)."""

    input: IndexingMapJson
    map: IndexingMapJson
    verified: bool
    mode: str
    verdict: Verdict | None
    cost_before: int
    cost_after: int
    steps: list[SimplifyStep]
    rejected: list[Any]
    seconds_rewrite: float | UnsetType = UNSET
    seconds_proof: float | UnsetType = UNSET
    rounds: int
    note: Any


# -- validate-mlir ---------------------------------------------------------------------------------------------


class MlirWitness(_S, kw_only=True):
    """The interpreter's run where MLIR's fused op and what it replaced differ."""

    seed: int
    value: str
    after_value: str | UnsetType = UNSET
    shape: list[int]
    element: list[int]
    before: Any
    after: Any


class MlirFused(_S, kw_only=True):
    """One op MLIR's pass fused: proved equal to what it replaced, refuted, or unknown."""

    op: str
    line: int | UnsetType | None = UNSET
    replaced: list[str]
    status: Literal["proved", "refuted", "unknown"]
    reason: str
    witness: MlirWitness | None
    project: str | UnsetType | None = UNSET


class MlirRefusal(_S, kw_only=True):
    """A pair the pass refused that the project proves legal."""

    producer: str
    consumer: str
    why_refused: str | None
    project: str


class MlirDecision(_S, kw_only=True):
    """The pass's decision as modelled, next to what it did."""

    producer: str
    consumer: str
    predicted: bool | None
    fused: bool
    why: str
    decided_by: str | UnsetType = UNSET


class ValidateMlir(_S, kw_only=True):
    """The JSON of 'verified-indexing validate-mlir --json' (without the schema and command keys): each op
    MLIR's pass fused, proved equal to what it replaced, refuted by the interpreter with the witness, or
    unknown; the pass's refusals the project proves legal; the pass's decision as modelled, next to what it
    did."""

    pass_: str = field(name="pass")
    pairs: int
    fused: list[MlirFused]
    refusals: list[MlirRefusal]
    notes: list[Any]
    decisions: list[MlirDecision]
    interpreter_runs: int | UnsetType = UNSET


# -- validate-tvm ----------------------------------------------------------------------------------------------


class TvmApplied(_S, kw_only=True):
    """What TVM did with the primitive: applied it (its result printed by TVM's script()), refused it (a
    ScheduleError, its message) or failed inside it (another exception)."""

    status: Literal["applied", "refused", "crashed"]
    error: str | None
    result: str | None


class TvmValidation(_S, kw_only=True):
    """TVM's result against the original: proved (every output element, same value, every size), refuted
    (witness: the sizes, the element and both values, re-run by the interpreter), unknown (the reason)."""

    status: Status
    reason: str | None
    outputs: list[str]
    laws_assumed: list[str]
    witness: dict[str, Any] | None
    checks: list[BlockCheck]


class TvmProjectAnswer(_S, kw_only=True):
    """The project's own answer for the primitive (legal: it proves the primitive legal)."""

    status: str
    reason: str | None
    legal: bool
    laws_assumed: list[str] | UnsetType = UNSET
    when: str | UnsetType = UNSET


class ValidateTvm(_S, kw_only=True):
    """The JSON of 'verified-indexing validate-tvm --json' (without the schema and command keys): TVM's
    primitive applied by TVM, its result validated; the project's own answer side by side; TVM's compiled
    code's re-check of a refutation (null when not run)."""

    primitive: str
    blocks: list[str]
    outcome: Literal["proved", "refuted", "unknown", "error", "refused", "tvm-too-conservative", "tvm-crashed"]
    tvm: TvmApplied
    validation: TvmValidation | None
    project: TvmProjectAnswer
    tvm_recheck: dict[str, Any] | None
    notes: list[str]


# -- the envelope ----------------------------------------------------------------------------------------------


class ErrorObject(_S, kw_only=True):
    """An error under --json: printed on stdout, the exit code unchanged."""

    schema: str
    command: str | None
    error: Error


class Record(_S, kw_only=True):
    """One line of --batch (line: the JSONL line) or --split-input-file (chunk: its number, line: its first
    line) output: the exit code of that question and its result or error."""

    schema: str
    command: str | None
    line: Positive
    chunk: Positive | UnsetType = UNSET
    exit_code: Annotated[int, Meta(ge=0)]
    result: dict[str, Any] | UnsetType = UNSET
    error: Error | UnsetType = UNSET


COMMANDS: dict[str, type[Struct]] = {
    "analyze": Analyze,
    "audit": Audit,
    "audit-kernels": AuditKernels,
    "check-rule": Verdict,
    "coalescing": Coalescing,
    "fuse": Fuse,
    "fuse-epilogue": FuseEpilogue,
    "inline": Inline,
    "invert": Invert,
    "prove-equal": Verdict,
    "reverse-inline": ReverseInline,
    "show": Show,
    "simplify": Simplify,
    "tile": Tile,
    "utilization": Utilization,
    "validate-mlir": ValidateMlir,
    "validate-tvm": ValidateTvm,
    "verify-cache": VerifyCache,
}
"""The result type of each command with ``--json`` (the object's fields besides ``schema`` and ``command``)."""


def check(obj: dict[str, Any]) -> None:
    """Raise ``msgspec.ValidationError`` unless ``obj`` (one printed JSON object: a result, an error or a
    record) has the type its command's result has (strict: no int for a string, no string for a number)."""
    if "exit_code" in obj:
        msgspec.convert(obj, Record)
        result = obj.get("result")
        if result is not None and obj.get("command") in COMMANDS:
            msgspec.convert(result, COMMANDS[obj["command"]])
        return
    if "error" in obj:
        msgspec.convert(obj, ErrorObject)
        return
    body = {k: v for k, v in obj.items() if k not in ("schema", "command")}
    msgspec.convert(body, COMMANDS[obj["command"]])
