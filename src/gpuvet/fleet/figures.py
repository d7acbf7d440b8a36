"""The part of a validate --json envelope the peer table reads, decoded straight from its JSON
bytes by msgspec (the ``fleet`` extra) into typed records: the node, the type, the schema and
each check's seven naming and value fields, typed as the run document types them (and the
modules' ids and models, and the node's own verdict). What the peers never read (evidence,
telemetry, expected figures: most of a real envelope's bytes) is skipped unparsed, and no dict
is made per check. Bytes this decoder does not take (malformed JSON, NaN, a check that is not
an object, a number where validate writes text, a verdict it never writes, bytes that are not
UTF-8) return None: the caller
reads them the ordinary way, whose typed checks (``fold.fold_envelope``) name the file and the
field. So everything this decoder takes is typed as that reader would have it, and no
check-by-check loop runs here (one cost 0.46 ms of a 1.5 ms file).
One difference is kept: an integer of more than 4,300 digits in a part the peers never read is
skipped here, where Python's json refuses it (its limit on converting digits to an int)."""

# No ``from __future__ import annotations`` here: msgspec reads the records' fields as real types.
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Literal

from gpuvet.fleet.peers import NodeChecks, node_identity
from gpuvet.fleet.roots import NodeRoot


@dataclass(frozen=True)
class Figures:
    node: tuple[str, str, int]  # as ``peers.envelope_node`` gives it
    simulated: bool
    checks: NodeChecks
    modules: list[tuple[str | None, str | None]] = field(default_factory=list)  # (id, model) as listed
    verdict: str | None = None  # the node's own
    roots: tuple[NodeRoot, ...] | None = None  # its validate's roots (None: an older envelope without them)


@cache
def _decoder() -> Any:
    """The msgspec decoder, built once; None without msgspec."""
    try:
        import msgspec
    except ImportError:
        return None
    unset: Any = msgspec.UnsetType

    # Text where validate --json writes text: anything else (a number, where orjson would read a
    # huge integer as a float and msgspec keeps it exact) is left to the ordinary reader.
    text = str | None
    integer = Annotated[int, msgspec.Meta(ge=-(2 ** 63), le=2 ** 63 - 1)]  # orjson reads these as ints too

    scalar = None | bool | integer | float | str  # the run document's Scalar; no NaN, no 1e400 (out of range)
    pair = Annotated[list[str], msgspec.Meta(min_length=2, max_length=2)]

    class Check(msgspec.Struct, gc=False):  # the fields in the order validate --json writes them: msgspec
        layer: text = None                  # looks for the next key where the last one was (6 % of a decode)
        name: text = None
        verdict: Literal["pass", "warn", "fail", "skip"] | None = None
        value: scalar = None
        unit: text = None
        module: text = None
        between: pair | None = None

    class Module(msgspec.Struct, gc=False):
        id: text = None
        model: text = None

    class Environment(msgspec.Struct, gc=False):
        node: str | unset = msgspec.UNSET  # absent: UNSET; anything else than text: the ordinary reader
        node_type: text = None
        modules: list[Module] = []

    class Root(msgspec.Struct, gc=False):  # validate's roots, read whole: a root missing a field is the ordinary
        key: str                           # reader's to judge (read_roots skips it)
        kind: str
        severity: str
        subject: str
        title: str
        explains: list[str] = []

    class Envelope(msgspec.Struct, gc=False):
        schema_version: integer | unset = msgspec.UNSET
        simulated: bool = False
        verdict: Literal["pass", "warn", "fail", "skip"] | None = None
        environment: Environment | unset = msgspec.UNSET
        checks: list[Check] = []
        roots: list[Root] | None = None

    return msgspec.json.Decoder(Envelope), msgspec.MsgspecError, msgspec.UNSET


def decode(data: bytes) -> Figures | None:
    """The figures of one envelope, or None where the ordinary reader must decide."""
    made = _decoder()
    if made is None:
        return None
    decoder, refused, unset = made
    if not data.isascii():
        try:  # msgspec checks the text it keeps, not the parts it skips: JSON is UTF-8 throughout
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        env = decoder.decode(data)
    except (refused, RecursionError):
        return None
    where = env.environment
    if env.schema_version is unset or where is unset or where.node is unset:
        return None
    ch = env.checks
    checks = NodeChecks([c.layer for c in ch], [c.name for c in ch], [c.unit for c in ch], [c.module for c in ch],
                        [c.between for c in ch], [c.value for c in ch], [c.verdict for c in ch])
    return Figures(node_identity(where.node, where.node_type, env.schema_version), env.simulated, checks,
                   [(m.id, m.model) for m in where.modules], env.verdict,
                   None if env.roots is None else tuple(NodeRoot(r.key, r.kind, r.severity, r.subject, r.title,
                                                                 tuple(r.explains)) for r in env.roots))
