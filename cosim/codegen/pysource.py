"""The source of a Python function, for its translation into C
(:mod:`cosim.codegen.pyfunc`): its ``def`` or ``lambda`` node found in its file, checked to
compile to the function's own code (a file edited after the import is not the code that
runs), and the current value of a free name (a closure cell, a global, a builtin)."""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import types
from typing import Any

from .pyfunc_calls import Refused

__all__ = ["MISSING", "NOT_PLAIN", "find_node", "lookup", "what_node"]

#: code flags of *args, **kwargs, generators and coroutines
NOT_PLAIN = (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR
              | inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE | inspect.CO_ASYNC_GENERATOR)


@functools.lru_cache(maxsize=512)
def find_node(code: types.CodeType) -> ast.AST:
    """The ``FunctionDef`` or ``Lambda`` of ``code`` in its source file."""
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise Refused(f"its source is not available (file {code.co_filename!r}: defined by "
                      "exec or at an interactive prompt?)")
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError as exc:
        raise Refused(f"its source file {code.co_filename!r} does not parse: {exc}") from None
    args = list(code.co_varnames[:code.co_argcount])
    first = code.co_firstlineno
    lam = code.co_name == "<lambda>"
    found = []
    for node in ast.walk(tree):
        if lam and isinstance(node, ast.Lambda) and node.lineno == first:
            found.append(node)
        elif not lam and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.name == code.co_name and first in (
                    node.lineno, *(d.lineno for d in node.decorator_list)):
            found.append(node)
    found = [n for n in found if [a.arg for a in n.args.args] == args]
    if len(found) > 1:  # several lambdas on a line: the one whose body the code covers
        pos = {(p[0], p[2]) for p in code.co_positions() if p[0] is not None}
        found = [n for n in found if (n.body.lineno, n.body.col_offset) in pos] or found
    if len(found) != 1:
        raise Refused(f"its source was not found in {code.co_filename!r} line {first} "
                      f"({'several candidates' if found else 'the file changed?'})")
    if not _same_code(code, "".join(lines)):
        raise Refused(f"its source in {code.co_filename!r} line {first} does not compile to "
                      "the function's code (the file changed since it was imported?)")
    return found[0]


def _same_code(code: types.CodeType, text: str) -> bool:
    """Whether the source ``text`` of ``code``'s file compiles to ``code`` (bytecode and
    constants): the source read is the source that runs."""
    todo = list(_compiled(code.co_filename, text))
    while todo:
        c = todo.pop()
        if c.co_name == code.co_name and c.co_firstlineno == code.co_firstlineno:
            if c.co_code == code.co_code and _consts(c) == _consts(code):
                return True
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return False


@functools.lru_cache(maxsize=64)
def _compiled(filename: str, text: str) -> tuple:
    try:
        return (compile(text, filename, "exec", dont_inherit=True),)
    except (SyntaxError, ValueError):
        return ()


def _consts(code: types.CodeType) -> list:
    return [repr(c) for c in code.co_consts if not isinstance(c, types.CodeType)]


MISSING = object()


def lookup(fn: Any, name: str) -> Any:
    """The value of a free name of ``fn`` now: a closure cell, a global or a builtin."""
    free = fn.__code__.co_freevars
    if name in free:
        try:
            return fn.__closure__[free.index(name)].cell_contents
        except ValueError:
            return MISSING
    if name in fn.__globals__:
        return fn.__globals__[name]
    return getattr(builtins, name, MISSING)


def what_node(node: ast.AST) -> str:
    """What a statement or expression the translation does not take is."""
    names = {ast.For: "a for loop", ast.While: "a while loop", ast.ListComp:
             "a list comprehension", ast.GeneratorExp: "a generator expression",
             ast.Lambda: "a lambda", ast.FunctionDef: "a nested function", ast.Try:
             "a try statement", ast.With: "a with statement", ast.Raise: "a raise statement",
             ast.Global: "a global statement", ast.Nonlocal: "a nonlocal statement",
             ast.Import: "an import", ast.ImportFrom: "an import", ast.Tuple: "a tuple",
             ast.List: "a list", ast.Dict: "a dict", ast.JoinedStr: "an f-string",
             ast.Expr: "an expression statement (a call for its effect?)",
             ast.Assert: "an assert statement"}
    return names.get(type(node), f"a {type(node).__name__} node")
