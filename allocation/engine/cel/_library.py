"""The adapter over cel-expr-python: the only module that imports the CEL library.

Notes on the library (0.1.3): declaring any ``_==_`` or ``_!=_`` overload replaces the
built-in equality at run time for every type, so equality is declared here for each kind and
implemented in Python (:func:`cel_equal`). Ordering overloads add to the built-ins. A missing
map key yields an ERROR value, not an exception; comprehensions past the iteration budget raise
RuntimeError. Declaring an overload whose argument kinds a built-in already has fails with
ALREADY_EXISTS, so ``int < double`` type-checks only through ``dyn`` (the run time has it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import product

from cel_expr_python import cel

from allocation.engine.cel import (
    _checked,
    _dynamic,
    _format,
    _includes,
    _k8s,
    _lists,
    _literals,
    _net,
    _qform,
    _regex,
    _url,
)
from allocation.engine.cel import _semantics as sem
from allocation.engine.cel._dispatch import dispatcher
from allocation.engine.cel._errors import CelCompileError
from allocation.engine.cel._messages import clean, go_message, library_compile_error
from allocation.engine.cel._opaque import (
    OPAQUE_NAMES,
    descriptor_pool_of_opaque_types,
    opaque_text,
)

__all__ = [
    "Program", "compile_program", "SELECTOR_VARIABLES", "compile_device_program",
    "DEVICE_VARIABLES",
]

_T = cel.Type
_TAGGED = _T.Map(_T.STRING, _T.STRING)
_KINDS = {
    "dyn": _T.DYN, "bool": _T.BOOL, "int": _T.INT, "uint": _T.UINT, "double": _T.DOUBLE,
    "string": _T.STRING, "bytes": _T.BYTES, "list": _T.List(_T.DYN),
    "map": _T.Map(_T.STRING, _T.DYN), "tagged": _TAGGED,
}
SELECTOR_VARIABLES = {
    "attributes": _T.Map(_T.STRING, _T.DYN),
    "quantities": _T.Map(_T.STRING, _TAGGED),
    "versions": _T.Map(_T.STRING, _TAGGED),
    "ints": _T.Map(_T.STRING, _T.INT),
    "bools": _T.Map(_T.STRING, _T.BOOL),
    "strings": _T.Map(_T.STRING, _T.STRING),
    "intSlices": _T.Map(_T.STRING, _T.List(_T.INT)),
    "stringSlices": _T.Map(_T.STRING, _T.List(_T.STRING)),
}


@dataclass(frozen=True, slots=True)
class Program:
    """A checked expression: ``run`` gives (True, plain value) or (False, error message)."""

    result_type: str
    _expression: cel.Expression
    #: whether quantities carry their form (``_qform``): the activation's must too
    quantity_forms: bool = False
    #: whether it calls ``_dynamic``'s set lookup, whose Go panic ends the evaluation
    may_panic: bool = False

    def run(self, data: Mapping[str, object]) -> tuple[bool, object]:
        """Evaluate against ``data``; never raises for run-time errors."""
        failure = None
        try:
            value = self._expression.eval(data=data)
        except RuntimeError as error:
            failure = clean(str(error))
        except MemoryError:  # the cost budget should prevent this; never let it escape
            failure = "evaluation ran out of memory"
        if self.may_panic and (panic := _dynamic.take_panic()) is not None:
            return False, panic  # it ended the evaluation, whatever came after it
        if failure is not None:
            return False, failure
        try:
            if value.type() == _T.ERROR:
                return False, clean(str(value.value()))
            return True, value.plain_value()
        except TypeError:  # an optional (format.named("x") through dyn): no Python value
            return False, "the result is an optional value, not a plain one"

    def run_bool(self, data: Mapping[str, object]) -> tuple[bool, object]:
        """As :meth:`run`, with the run-time error messages of cel-go ("no such key: x") and a
        non-bool result an error too."""
        ok, value = self.run(data)
        if not ok:
            return False, go_message(str(value))
        if type(value) is not bool:
            return False, f"selector gave {_result_name(value)}, not bool"
        return True, value


def compile_program(source: str, variables: Mapping[str, str] | None = None) -> Program:
    """Check ``source`` in the selector environment, or with ``variables`` (name -> kind such
    as "dyn") when given; raise CelCompileError with the first error's position."""
    env = _selector_env() if variables is None else _env(tuple(sorted(variables.items())))
    try:
        expression = env.compile(source)
    except RuntimeError as error:
        raise library_compile_error(str(error)) from None
    return Program(_result_type(expression), expression)


def compile_device_program(source: str, consumable_capacity: bool,
                           compatibility: tuple[int, int] | None = None,
                           list_type_attributes: bool = False,
                           unknown_attributes: bool = False) -> Program:
    """Check ``source`` in the resource.k8s.io/v1 device-selector environment (variables
    :data:`DEVICE_VARIABLES`, the quantity, semver, IP, CIDR, lists and regex libraries, the
    standard extensions; ``device.allowMultipleAllocations`` only with
    ``consumable_capacity``, ``includes`` only with ``list_type_attributes``); raise
    CelCompileError with the first error's position.

    ``compatibility`` (major, minor) compiles in the API server's new-expressions
    environment of that version: only the extensions Kubernetes had by then. Its error is
    the first, in cel-go's order (by position), at a call: the function a missing extension
    would declare. None: every extension, the stored-expressions environment.

    ``unknown_attributes`` declares an attribute value as the unknown type
    (``google.protobuf.Any``, upstream's type without list-type attributes) instead of
    ``dyn``: a program for the type check only, which cannot run (the library then wants
    an Any message for each value)."""
    # The format library's optional results are maps here, read with [?""] (``_format``).
    text, inserted = _format.optional_calls(source)
    forms = _qform.uses_forms(source)
    env = _device_env(consumable_capacity, compatibility, forms, list_type_attributes,
                      unknown_attributes)
    try:
        expression = env.compile(text)
    except RuntimeError as error:
        problem = library_compile_error(str(error), None if compatibility is None else text)
        if inserted and problem.line is not None and problem.column is not None:
            problem = CelCompileError(problem.message, *_format.original_position(
                text, inserted, problem.line, problem.column))
        raise problem from None
    serialized = cache(expression.serialize)  # the checked expression, for up to three reads
    # The lists library's calls, in the checked expression (_checked.review).
    retargeted, found = _checked.review(text, serialized)
    if found is None and _literals.may_mix(text):  # after the checker's, as cel-go's validators
        found = _literals.mixed_literal(serialized())
    if found is not None:
        problem = CelCompileError.at(found[1], text, found[0])
        raise CelCompileError(problem.message, *_format.original_position(
            text, inserted, problem.line or 1, problem.column or 1)) if inserted else problem
    # upstream's errors on opaque values, renamed on top of the lists' renames; read back once
    dynamic = _dynamic.retarget(text, serialized if retargeted is None else lambda: retargeted)
    renamed = retargeted if dynamic is None else dynamic
    if renamed is not None:
        expression = env.deserialize(renamed)
    return Program(_result_type(expression), expression, forms,
                   dynamic is not None and _dynamic.MAY_PANIC in dynamic)


def _result_type(expression: cel.Expression) -> str:
    """The name of ``expression``'s checked result type. cel-cpp cannot represent a map
    type keyed by double (``{1.5: 1}``), which cel-go's checker accepts: such a result is
    named by its shape (never bool, so a selector giving it is refused as cel-go refuses
    it); inside a larger expression it is no result type and needs no name."""
    try:
        return _type_name(expression.return_type())
    except RuntimeError as error:
        if "map key type" not in str(error):
            raise
        return "a map or list holding a map with double keys"


def _type_name(value_type: cel.Type) -> str:
    for name, kind in (("bool", _T.BOOL), ("dyn", _T.DYN), ("int", _T.INT),
                       ("double", _T.DOUBLE), ("string", _T.STRING), ("uint", _T.UINT)):
        if value_type == kind:
            return name
    if value_type == _T.ERROR:  # how the library names a checked google.protobuf.Any
        return "any"
    return value_type.name().lower()


@lru_cache(maxsize=1)
def _selector_env() -> cel.Env:
    return cel.NewEnv(variables=SELECTOR_VARIABLES, extensions=[_extension()])


@lru_cache(maxsize=32)
def _env(variables: tuple[tuple[str, str], ...]) -> cel.Env:
    declared = {}
    for name, kind in variables:
        if kind not in _KINDS:
            raise CelCompileError(f"unknown variable type {kind!r} for {name!r}")
        declared[name] = _KINDS[kind]
    return cel.NewEnv(variables=declared, extensions=[_extension()])


def _overload(name: str, result: cel.Type, params: list[cel.Type],
              impl: Callable[..., object] | None = None, member: bool = False) -> cel.Overload:
    oid = name + "_" + "_".join(p.name().lower().replace("<", "").replace(">", "")
                                .replace(", ", "_") for p in params)
    if impl is None:
        return cel.Overload(oid, result, params, is_member=member)
    return cel.Overload(oid, result, params, is_member=member, impl=impl)


def _equality() -> list[cel.FunctionDecl]:
    same = [_T.STRING, _T.BYTES, _T.BOOL, _T.List(_T.DYN), _T.DURATION, _T.TIMESTAMP, _TAGGED]
    pairs = [(t, t) for t in same]
    pairs += list(product([_T.INT, _T.UINT, _T.DOUBLE], repeat=2))
    pairs += [(_TAGGED, _T.STRING), (_T.STRING, _TAGGED)]

    def not_equal(a: object, b: object) -> bool:
        return not sem.cel_equal(a, b)

    return [
        cel.FunctionDecl("_==_", [_overload("eq", _T.BOOL, list(p), sem.cel_equal) for p in pairs]),
        cel.FunctionDecl("_!=_", [_overload("ne", _T.BOOL, list(p), not_equal) for p in pairs]),
    ]


def _ordering() -> list[cel.FunctionDecl]:
    tests: dict[str, Callable[[int], bool]] = {
        "_<_": lambda c: c < 0, "_<=_": lambda c: c <= 0,
        "_>_": lambda c: c > 0, "_>=_": lambda c: c >= 0,
    }
    decls = []
    for op, test in tests.items():
        def impl(a: object, b: object, test: Callable[[int], bool] = test) -> bool:
            return test(sem.cel_compare(a, b))

        overloads = [_overload("cmp" + op.strip("_"), _T.BOOL, list(p), impl)
                     for p in ((_TAGGED, _T.STRING), (_T.STRING, _TAGGED), (_TAGGED, _TAGGED))]
        decls.append(cel.FunctionDecl(op, overloads))
    return decls


def _functions() -> list[cel.FunctionDecl]:
    decls = [
        cel.FunctionDecl("quantity", [_overload("quantity", _TAGGED, [_T.STRING],
                                                sem.make_quantity)]),
        cel.FunctionDecl("isQuantity", [_overload("isQuantity", _T.BOOL, [_T.STRING],
                                                  sem.is_quantity_text)]),
        cel.FunctionDecl("semver", [_overload("semver", _TAGGED, [_T.STRING], sem.make_version)]),
        cel.FunctionDecl("isSemver", [_overload("isSemver", _T.BOOL, [_T.STRING],
                                                sem.is_version_text)]),
        cel.FunctionDecl("compareTo", [_overload("compareTo", _T.INT, [_TAGGED, _TAGGED],
                                                 sem.cel_compare, member=True)]),
        cel.FunctionDecl("isGreaterThan", [_overload(
            "isGreaterThan", _T.BOOL, [_TAGGED, _TAGGED],
            lambda a, b: sem.cel_compare(a, b) > 0, member=True)]),
        cel.FunctionDecl("isLessThan", [_overload(
            "isLessThan", _T.BOOL, [_TAGGED, _TAGGED],
            lambda a, b: sem.cel_compare(a, b) < 0, member=True)]),
    ]
    for name, (impl, args, result) in {**sem.QUANTITY_MEMBERS, **sem.VERSION_MEMBERS}.items():
        variants = [args] if "tagged" not in args else [args, ("int",)]
        overloads = [_overload(name, _KINDS[result], [_TAGGED, *(_KINDS[a] for a in variant)],
                               impl, member=True) for variant in variants]
        decls.append(cel.FunctionDecl(name, overloads))
    return decls


def _extension() -> cel.CelExtension:
    return cel.CelExtension("draplanner", [*_equality(), *_ordering(), *_functions()])


# resource.k8s.io/v1 device selectors ------------------------------------------------------
#
# ``device`` is declared as qualified variables (``device.driver`` ...): CEL resolves the
# dotted name to them, so an unknown field is "undeclared reference" at compile time, as
# upstream's object type makes it. Kubernetes' opaque types are protobuf messages holding the
# canonical text (``_opaque``): messages have no ordering operators, so ``q < q2`` and
# ``q >= "8Gi"`` fail to type-check with cel-go's message, and message equality is equality of
# that text, i.e. of the values.

def _extensions_yaml(compatibility: tuple[int, int] | None) -> str:
    """The standard extensions (Kubernetes' base environment, as far as the library has
    them, ``_k8s.EXTENSIONS``) as the library's YAML: all (None), or those Kubernetes had by
    ``compatibility``."""
    lines = ["stdlib:", "  exclude_functions:", *(f"    - name: {name}" for name in _STANDARD),
             "extensions:"]
    for name, version, introduced, _names in _k8s.EXTENSIONS:
        if compatibility is None or (introduced is not None and introduced <= compatibility):
            lines.append(f"  - name: {name}")
            if version is not None:
                lines.append(f"    version: {version}")
    return "\n".join(lines) + "\n"


#: Standard functions the libraries add to (``string(ip)``) with their standard overloads:
#: the library refuses a second declaration, so the device environment declares them whole
#: (the run time keeps the standard implementations; docs/cel.md "IP and CIDR").
_STANDARD = {"string": [cel.Overload(f"{name}_to_string", _T.STRING, [kind]) for name, kind in (
    ("string", _T.STRING), ("int64", _T.INT), ("uint64", _T.UINT), ("double", _T.DOUBLE),
    ("bool", _T.BOOL), ("bytes", _T.BYTES), ("timestamp", _T.TIMESTAMP),
    ("duration", _T.DURATION))]}


_LIBRARY_KINDS = {"duration": _T.DURATION, "timestamp": _T.TIMESTAMP, "error": _T.ERROR}


def _cel_type(kind: str) -> cel.Type:
    if kind in OPAQUE_NAMES:
        return _T(OPAQUE_NAMES[kind])
    if kind.startswith(("map:", "list:")):  # "map:list:string": map(string, list(string))
        outer, inner = kind.split(":", 1)
        return _T.Map(_T.STRING, _cel_type(inner)) if outer == "map" else _T.List(
            _cel_type(inner))
    return _LIBRARY_KINDS.get(kind) or _KINDS[kind]


_UNKNOWN = _T("google.protobuf.Any")


def _device_variables(consumable_capacity: bool, unknown_attributes: bool = False
                      ) -> dict[str, cel.Type]:
    value = _UNKNOWN if unknown_attributes else _T.DYN
    variables = {
        "device.driver": _T.STRING,
        "device.attributes": _T.Map(_T.STRING, _T.Map(_T.STRING, value)),
        "device.capacity": _T.Map(_T.STRING, _T.Map(_T.STRING, _cel_type(_k8s.QUANTITY))),
    }
    if consumable_capacity:
        variables["device.allowMultipleAllocations"] = _T.BOOL
    return variables


#: The variables of the device environment (with consumable capacity), by name.
DEVICE_VARIABLES = tuple(_device_variables(True))


@lru_cache(maxsize=32)
def _device_env(consumable_capacity: bool, compatibility: tuple[int, int] | None,
                forms: bool = False, list_type_attributes: bool = False,
                unknown_attributes: bool = False) -> cel.Env:
    pool = descriptor_pool_of_opaque_types()
    declarations = {name: list(overloads) for name, overloads in _STANDARD.items()}
    groups: dict[tuple[str, bool, tuple[str, ...]], list[_k8s.Overload]] = {}
    for overload in (*_k8s.FUNCTIONS, *_net.FUNCTIONS, *_url.FUNCTIONS, *_format.FUNCTIONS,
                     *_lists.FUNCTIONS, *_regex.FUNCTIONS):
        declarations.setdefault(overload.function, []).append(_declared(overload))
        # The run time tells overloads apart by kind only (both opaque types are messages),
        # so one implementation per kind signature dispatches on the values' types.
        # (Likewise every list is a list: the lists library's typed overloads share one.)
        runtime = tuple("message" if kind in OPAQUE_NAMES else kind.split(":")[0]
                        for kind in overload.params)
        groups.setdefault((overload.function, overload.member, runtime), []).append(overload)
    impls = {group[0].overload_id: dispatcher(group, forms) for group in groups.values()}
    extending: dict[str, list[cel.Overload]] = {}  # the strings extension's indexOf: it is
    for overload in _lists.EXTENDING:  # declared already, so only an extension may add to it
        extending.setdefault(overload.function, []).append(_declared(overload, overload.impl))
    return cel.NewEnv(
        config=cel.NewEnvConfigFromYaml(_extensions_yaml(compatibility)),
        descriptor_pool=pool,
        variables=_device_variables(consumable_capacity, unknown_attributes),
        functions=[cel.FunctionDecl(name, overloads) for name, overloads in declarations.items()],
        function_impls=impls,
        extensions=[cel.CelExtension("kubernetes.lists", [
            cel.FunctionDecl(name, overloads) for name, overloads in extending.items()]),
            # the library runs an implementation of dyn parameters only from an extension
            cel.CelExtension("draplanner.dynamic", [
                cel.FunctionDecl(o.function, [_declared(o, o.impl)]) for o in _dynamic.FUNCTIONS]),
            *([cel.CelExtension("kubernetes.dra.lists", [  # gate DRAListTypeAttributes
                cel.FunctionDecl(o.function, [_declared(o, o.impl)])
                for o in _includes.FUNCTIONS])] if list_type_attributes else [])],
    )


def _declared(overload: _k8s.Overload, impl: Callable[..., object] | None = None
              ) -> cel.Overload:
    return cel.Overload(overload.overload_id, _cel_type(overload.result),
                        [_cel_type(kind) for kind in overload.params],
                        is_member=overload.member, impl=impl)


def _result_name(value: object) -> str:
    opaque = opaque_text(value)
    if opaque is not None:
        return OPAQUE_NAMES[opaque[0]]
    names = {int: "int", float: "double", str: "string", bytes: "bytes", list: "list",
             dict: "map", type(None): "null"}
    return names.get(type(value), type(value).__name__)
