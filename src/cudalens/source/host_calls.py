"""Small pure host functions run on known arguments (``largestPowerOfTwoLessOrEqual(block_size)``):
integer locals, ``if``/``else``, ``while``/``for``/``do`` loops, ``return``, under a step budget
(:func:`run_call`). Anything else (a load, an unknown call, a pointer, a budget run out) gives None."""

from __future__ import annotations

from typing import Any, Callable

from cudalens.source import expr as E

MAX_STEPS = 20_000
MAX_DEPTH = 4
_COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "<<=": "<<", ">>=": ">>", "&=": "&",
             "|=": "|", "^=": "^"}


class _Stop(Exception):
    pass


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_text = E.node_text


class _Run:
    def __init__(self, env: dict[str, int | float], consts: Callable[[str], E.Expr],
                 call: Callable[[Any, Callable[[str], E.Expr]], E.Expr], values: dict[str, Any]) -> None:
        self.env = env
        self.consts = consts
        self.call = call
        self.values = values
        self.steps = 0

    def resolve(self, name: str) -> E.Expr:
        if name in self.env:
            return E.num(self.env[name])
        return self.consts(name)

    def eval(self, node: Any) -> int | float:
        self.tick()
        if node is not None and node.type == "assignment_expression":
            return self.assign(node)
        if node is not None and node.type == "update_expression":
            return self.update(node)
        e = E.from_node(node, self.resolve, on_call=lambda n: self.call(n, self.resolve))
        try:
            v = E.eval_scalar(e, self.values)
        except E.Unknown:
            raise _Stop() from None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _Stop()
        return v

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Stop()

    def assign(self, node: Any) -> int | float:
        left = node.child_by_field_name("left")
        if left is None or left.type != "identifier" or _text(left) not in self.env:
            raise _Stop()
        op = _text(node.child_by_field_name("operator"))
        v = self.eval(node.child_by_field_name("right"))
        if op != "=":
            if op not in _COMPOUND:
                raise _Stop()
            try:
                v = E.apply_binary(_COMPOUND[op], self.env[_text(left)], v)
            except E.Unknown:
                raise _Stop() from None
        self.env[_text(left)] = v
        return v

    def update(self, node: Any) -> int | float:
        arg = node.child_by_field_name("argument")
        if arg is None or arg.type != "identifier" or _text(arg) not in self.env:
            raise _Stop()
        old = self.env[_text(arg)]
        new = E.apply_binary("+" if "++" in _text(node) else "-", old, 1)
        self.env[_text(arg)] = new
        return new if _text(node).lstrip().startswith(("++", "--")) else old

    def stmt(self, node: Any) -> None:
        self.tick()
        t = node.type
        if t in ("comment",):
            return
        if t == "compound_statement":
            for c in node.named_children:
                self.stmt(c)
        elif t == "expression_statement":
            for c in node.named_children:
                if c.type == "call_expression" and _text(c.child_by_field_name("function")) == "assert":
                    continue  # a check, no value
                self.eval(c)
        elif t == "declaration":
            for d in node.children_by_field_name("declarator"):
                if d.type != "init_declarator" or d.child_by_field_name("declarator").type != "identifier":
                    raise _Stop()
                self.env[_text(d.child_by_field_name("declarator"))] = self.eval(d.child_by_field_name("value"))
        elif t == "return_statement":
            vals = [c for c in node.named_children if c.type != "comment"]
            raise _Return(self.eval(vals[0]) if vals else None)
        elif t == "if_statement":
            if self.eval(_cond(node)):
                self.stmt(node.child_by_field_name("consequence"))
            else:
                alt = node.child_by_field_name("alternative")
                if alt is not None:
                    self.stmt(alt.named_children[-1] if alt.type == "else_clause" else alt)
        elif t == "while_statement":
            while self.eval(_cond(node)):
                if self.body(node.child_by_field_name("body")):
                    break
        elif t == "do_statement":
            while True:
                if self.body(node.child_by_field_name("body")) or not self.eval(_cond(node)):
                    break
        elif t == "for_statement":
            init = node.child_by_field_name("initializer")
            if init is not None:
                self.stmt(init) if init.type == "declaration" else self.eval(init)
            cond, upd = node.child_by_field_name("condition"), node.child_by_field_name("update")
            while cond is None or self.eval(cond):
                if self.body(node.child_by_field_name("body")):
                    break
                if upd is not None:
                    self.eval(upd)
        elif t == "break_statement":
            raise _Break()
        elif t == "continue_statement":
            raise _Continue()
        else:
            raise _Stop()

    def body(self, node: Any) -> bool:
        """Runs a loop body; True on ``break``."""
        try:
            self.stmt(node)
        except _Break:
            return True
        except _Continue:
            pass
        return False


def _cond(node: Any) -> Any:
    c = node.child_by_field_name("condition")
    if c is not None and c.type == "condition_clause":
        c = c.child_by_field_name("value") or (c.named_children[0] if c.named_children else None)
    if c is not None and c.type == "parenthesized_expression" and c.named_children:
        c = c.named_children[-1]
    return c


def run_call(body: Any, params: tuple[str, ...], args: list[int | float], consts: Callable[[str], E.Expr],
             call: Callable[[Any, Callable[[str], E.Expr]], E.Expr], values: dict[str, Any]) -> int | float | None:
    """The value a host function with ``body`` returns for ``args`` (its ``params`` by position), or
    None where it does not follow (see the module docstring). ``consts`` resolves the file's names,
    ``call`` a nested call, ``values`` are the macros' values."""
    if len(params) != len(args):
        return None
    run = _Run(dict(zip(params, args)), consts, call, values)
    try:
        run.stmt(body)
    except _Return as r:
        return r.value if isinstance(r.value, (int, float)) and not isinstance(r.value, bool) else None
    except (_Stop, _Break, _Continue, RecursionError, AttributeError):
        return None
    return None
