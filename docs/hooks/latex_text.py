r"""LaTeX math as readable Unicode text, for docs built without a math renderer.

``inline(r"\dot x = A x + B u")`` gives ``"ẋ = A x + B u"``; ``display(...)`` gives the
lines of a display equation, ``\\`` starting a new line and ``&`` aligning the lines.
Covered: Greek letters and the usual relations and operators, ``\frac``/``\tfrac``,
``\sqrt``, accents (``\dot``, ``\ddot``, ``\hat``, ``\bar``, ``\tilde``, ``\vec``),
``\mathrm``/``\text``-like commands, sub- and superscripts (as Unicode sub- and
superscript characters where every character has one, else ``x_(k+1)`` and ``e^(A T)``;
a word index stays ``t_off``), spacing commands, ``\big``-like sizes (dropped),
``cases`` and matrix environments.  Unknown commands keep their name without the
backslash, so nothing is silently lost.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["display", "inline"]

_GREEK = dict(
    alpha="α", beta="β", gamma="γ", delta="δ", epsilon="ϵ", varepsilon="ε", zeta="ζ",
    eta="η", theta="θ", vartheta="ϑ", iota="ι", kappa="κ", lambda_="λ", mu="μ", nu="ν",
    xi="ξ", pi="π", varpi="ϖ", rho="ρ", varrho="ϱ", sigma="σ", varsigma="ς", tau="τ",
    upsilon="υ", phi="ϕ", varphi="φ", chi="χ", psi="ψ", omega="ω", Gamma="Γ", Delta="Δ",
    Theta="Θ", Lambda="Λ", Xi="Ξ", Pi="Π", Sigma="Σ", Upsilon="Υ", Phi="Φ", Psi="Ψ",
    Omega="Ω")
_GREEK["lambda"] = _GREEK.pop("lambda_")

_SYMBOLS = {
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈",
    "equiv": "≡", "sim": "∼", "propto": "∝", "ll": "≪", "gg": "≫", "cdot": "·", "times": "×",
    "pm": "±", "mp": "∓", "div": "÷", "infty": "∞", "sum": "Σ", "prod": "Π", "int": "∫",
    "oint": "∮", "partial": "∂", "nabla": "∇", "dots": "…", "ldots": "…", "cdots": "⋯",
    "vdots": "⋮", "leftarrow": "←", "rightarrow": "→", "to": "→", "gets": "←",
    "Leftarrow": "⇐", "Rightarrow": "⇒", "implies": "⇒", "Leftrightarrow": "⇔",
    "iff": "⇔", "mapsto": "↦", "emptyset": "∅", "varnothing": "∅", "in": "∈",
    "notin": "∉", "subset": "⊂", "subseteq": "⊆", "cup": "∪", "cap": "∩", "forall": "∀",
    "exists": "∃", "neg": "¬", "land": "∧", "lor": "∨", "wedge": "∧", "vee": "∨",
    "circ": "∘", "ell": "ℓ", "hbar": "ℏ", "prime": "′", "lfloor": "⌊", "rfloor": "⌋",
    "lceil": "⌈", "rceil": "⌉", "langle": "⟨", "rangle": "⟩", "vert": "|", "Vert": "‖",
    "lvert": "|", "rvert": "|", "lVert": "‖", "rVert": "‖", "bmod": " mod ", "mod": " mod ",
    "degree": "°", "star": "⋆", "ast": "∗", "perp": "⊥", "parallel": "∥", "angle": "∠",
    "top": "ᵀ", "dagger": "†", "checkmark": "✓",
}
_FUNCTIONS = {"sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan",
              "sinh", "cosh", "tanh", "exp", "log", "ln", "lg", "max", "min", "sup", "inf",
              "det", "dim", "arg", "lim", "liminf", "limsup", "gcd", "deg", "ker", "Pr",
              "sgn", "sign"}
_SPACES = {",": " ", ":": " ", ";": " ", " ": " ", "!": "", "quad": "  ", "qquad": "    ",
           "enspace": " ", "thinspace": " "}
_DROPPED = {"big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr",
            "left", "right", "displaystyle", "textstyle", "scriptstyle", "limits",
            "nolimits", "middle"}
_TEXT = {"mathrm", "text", "textrm", "operatorname", "mathit", "mathbf", "mathsf",
         "mathtt", "textit", "textbf", "texttt", "boldsymbol", "bm", "mathcal", "mathbb",
         "mbox", "emph"}
_ACCENTS = {"dot": "\u0307", "ddot": "\u0308", "hat": "\u0302", "widehat": "\u0302",
            "bar": "\u0304", "overline": "\u0305", "tilde": "\u0303", "widetilde": "\u0303",
            "vec": "\u20d7"}
_ESCAPED = {"{": "{", "}": "}", "_": "_", "%": "%", "&": "&", "#": "#", "$": "$",
            "|": "‖"}

_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvxβγρφχ",
                "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ", strict=True))
_SUP = dict(zip("0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWβγδθφχ",
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵝᵞᵟᶿᵠᵡ",
                strict=True))
_SOFT = "\x00"  # a space of the source: collapsed, and dropped beside explicit spacing


def _script(text: str, table: dict, mark: str) -> str:
    """``text`` as sub/superscript characters, else ``mark`` + text (parenthesized)."""
    text = text.strip()
    if re.fullmatch(r"[A-Za-z]{2,}", text):  # a word index: t_off, u_on
        return mark + text
    if text and all(c in table for c in text):
        return "".join(table[c] for c in text)
    if re.fullmatch(r"[A-Za-z]+|[A-Za-z0-9]", text) or (mark == "^" and len(text) == 1):
        return mark + text
    return f"{mark}({text})"


def _wrap(text: str) -> str:
    """Parenthesize an operand of ``/`` unless it is one token."""
    text = text.strip()
    if re.fullmatch(r"[\w.′\u0300-\u036f\u2080-\u209c\u2070-\u207f\u1d00-\u1dbf]+", text) \
            or (text.startswith("(") and text.endswith(")") and _balanced(text[1:-1])):
        return text
    return f"({text})"


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def _split_top(src: str, sep: str) -> list[str]:
    """``src`` split at ``sep`` (``"\\\\"`` or ``"&"``) outside braces and environments."""
    parts, depth, env, i, start = [], 0, 0, 0, 0
    while i < len(src):
        if src.startswith("\\begin{", i):
            env += 1
        elif src.startswith("\\end{", i):
            env -= 1
        c = src[i]
        if c == "\\" and not src.startswith(sep, i):
            i += 2  # an escaped character or the start of a command
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and env == 0 and src.startswith(sep, i):
            parts.append(src[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(src[start:])
    return parts


class _Parser:
    """One pass over a LaTeX math string, emitting text."""

    def __init__(self, src: str) -> None:
        self.s, self.i = src, 0

    def run(self, stop: str | None = None) -> str:
        out = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if stop is not None and c == stop:
                self.i += 1
                return "".join(out)
            out.append(self.token())
        return "".join(out)

    def token(self) -> str:
        c = self.s[self.i]
        if c == "\\":
            return self.command()
        self.i += 1
        if c == "{":
            return self.run("}")
        if c.isspace():
            return _SOFT
        if c in "_^":
            arg = self.argument()
            return _script(arg, _SUB if c == "_" else _SUP, c)
        if c == "~":
            return " "
        if c == "&":
            return " "
        return c

    def argument(self) -> str:
        """The text of the next argument: a braced group, a command or one character."""
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1
        if self.i >= len(self.s):
            return ""
        return self.token().replace(_SOFT, " ")

    def raw_group(self) -> str:
        """The source of the next braced group (for text commands and environments)."""
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1
        if self.i >= len(self.s) or self.s[self.i] != "{":
            start = self.i
            self.i += 1
            return self.s[start:self.i]
        depth, start = 0, self.i
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "\\":
                self.i += 2
                continue
            depth += {"{": 1, "}": -1}.get(ch, 0)
            self.i += 1
            if depth == 0:
                break
        return self.s[start + 1:self.i - 1]

    def command(self) -> str:
        m = re.compile(r"\\([A-Za-z]+)\*?|\\(.)").match(self.s, self.i)
        if m is None:  # a lone backslash at the end
            self.i += 1
            return ""
        self.i = m.end()
        name = m.group(1) or m.group(2)
        if m.group(2) is not None:
            if name == "\\":
                return "; "
            return _SPACES.get(name, _ESCAPED.get(name, name))
        if name in _SPACES:
            return _SPACES[name]
        if name in _DROPPED:
            return ""
        if name in _GREEK:
            return _GREEK[name]
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        if name in _FUNCTIONS:
            return name
        if name in _TEXT:
            text = self.raw_group()
            text = re.sub(r"\\([_%&#${} ])", r"\1", text)
            return text if name.startswith("text") or name == "mbox" else inline(text)
        if name in _ACCENTS:
            base = self.argument()
            return base[:1] + _ACCENTS[name] + base[1:] if base else ""
        if name in ("frac", "tfrac", "dfrac", "cfrac"):
            num, den = self.argument(), self.argument()
            return f"{_wrap(num)}/{_wrap(den)}{_SOFT}"  # 2/T (z-1), not 2/T(z-1)
        if name == "sqrt":
            if self.i < len(self.s) and self.s[self.i] == "[":
                end = self.s.index("]", self.i)
                self.i = end + 1
            return "√" + _wrap(self.argument())
        if name == "begin":
            return self.environment(self.raw_group())
        if name == "end":
            self.raw_group()
            return ""
        if name in ("label", "tag", "nonumber", "notag"):
            if name in ("label", "tag"):
                self.raw_group()
            return ""
        return name

    def environment(self, env: str) -> str:
        """A whole ``\\begin{env} ... \\end{env}`` as one line."""
        end = f"\\end{{{env}}}"
        depth, j = 1, self.i
        while depth:
            nb, ne = self.s.find(f"\\begin{{{env}}}", j), self.s.find(end, j)
            if ne < 0:
                ne = len(self.s)
                break
            if 0 <= nb < ne:
                depth, j = depth + 1, nb + 1
            else:
                depth, j = depth - 1, ne + 1
        body, self.i = self.s[self.i:ne], min(ne + len(end), len(self.s))
        rows = [[inline(c) for c in _split_top(r, "&")] for r in _split_top(body, "\\\\")
                if r.strip()]
        if env.startswith("cases"):
            cells = [r[0] + (f" {_condition(r[1])}" if len(r) > 1 and r[1] else "")
                     for r in rows]
            return "{ " + "; ".join(cells) + " }"
        if "matrix" in env or env == "array":
            text = "; ".join(" ".join(r) for r in rows)
            brackets = {"pmatrix": "()", "bmatrix": "[]", "Bmatrix": "{}", "vmatrix": "||",
                        "Vmatrix": "‖‖"}.get(env, "[]")
            return brackets[0] + text + brackets[1]
        return "; ".join(" ".join(r) for r in rows)  # aligned, gathered, split


def _condition(text: str) -> str:
    text = text.strip()
    if re.match(r"(if|for|otherwise|else|when|where)\b", text):
        return text
    return "if " + text


def _tidy(text: str) -> str:
    text = re.sub(_SOFT + r"*( +)" + _SOFT + "*", r"\1", text)
    text = re.sub(_SOFT + "+", " ", text)
    text = re.sub(r" +([,;)\]])", r"\1", text)
    text = re.sub(r"([(\[]) +", r"\1", text)
    return text.strip()


def inline(latex: str) -> str:
    """``latex`` (inline math) as one line of text."""
    return _tidy(_Parser(latex.replace("\n", " ")).run())


def _width(text: str) -> int:
    return sum(1 for c in text if not unicodedata.combining(c))


def display(latex: str) -> list[str]:
    """The lines of a display equation, columns (``&``) aligned: the first right-aligned,
    the others left-aligned, as in ``align``."""
    rows = [[inline(c) for c in _split_top(r, "&")]
            for r in _split_top(latex.strip(), "\\\\") if r.strip()]
    ncol = max((len(r) for r in rows), default=0)
    widths = [max((_width(r[k]) for r in rows if len(r) > k), default=0) for k in range(ncol)]
    lines = []
    for r in rows:
        cells = []
        for k, cell in enumerate(r):
            pad = " " * (widths[k] - _width(cell))
            if len(r) == 1:
                cells.append(cell)
            elif k == 0:
                cells.append(pad + cell)
            elif k < len(r) - 1:
                cells.append(cell + pad)
            else:
                cells.append(cell)
        lines.append(" ".join(cells).rstrip())
    return lines
