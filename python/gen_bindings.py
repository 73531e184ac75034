#!/usr/bin/env python3
"""Generate the language bindings of mvnmf from its C header, include/mvnmf.h.

    python3 python/gen_bindings.py            # writes both files
    python3 python/gen_bindings.py --check    # exits 1 if either is stale

Writes
  * python/mvnmf/_bindings.py   ctypes: every MVNMF_ constant, every struct as a
    ctypes.Structure, the callback types, and `declare(lib)`, which sets
    argtypes/restype of every function the header declares;
  * julia/MVNMF/src/bindings.jl  the same for Julia: constants, `struct`s with
    the C layout, and one `ccall` wrapper per function.

The header is cbindgen's output (src/ffi/, never edited by hand), which is
regular: `#define MVNMF_X value`, the `mvnmf_status` enum, `typedef struct
name { type field; ... } name;`, `typedef int (*name)(args);` and function
prototypes, each possibly over several lines. Anything else in the header
that declares an mvnmf name makes this script fail, so a new construct cannot
be skipped silently. Standard library only; no C compiler needed.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "include", "mvnmf.h")
PY_OUT = os.path.join(ROOT, "python", "mvnmf", "_bindings.py")
JL_OUT = os.path.join(ROOT, "julia", "MVNMF", "src", "bindings.jl")

# C scalar types -> (ctypes, Julia).
SCALARS = {
    "uint8_t": ("C.c_uint8", "UInt8"),
    "uint32_t": ("C.c_uint32", "UInt32"),
    "uint64_t": ("C.c_uint64", "UInt64"),
    "int32_t": ("C.c_int32", "Int32"),
    "int": ("C.c_int", "Cint"),
    "size_t": ("C.c_size_t", "Csize_t"),
    "double": ("C.c_double", "Cdouble"),
    "float": ("C.c_float", "Cfloat"),
    "char": ("C.c_char", "Cchar"),
    "void": ("None", "Cvoid"),
    "mvnmf_status": ("C.c_uint32", "UInt32"),
}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


class Header:
    """The header's constants, structs, callbacks and functions, in order."""

    def __init__(self, text):
        self.defines = []   # (name, python value text)
        self.enum = []      # (name, int)
        self.structs = []   # (name, [(ctype, field, array_len or None)])
        self.callbacks = []  # (name, ret, [ctype])
        self.functions = []  # (name, ret, [(ctype, arg)])
        self._parse(strip_comments(text))

    def _parse(self, text):
        for m in re.finditer(r"^#define\s+(MVNMF_\w+)\s+(.+?)\s*$", text, flags=re.M):
            name, value = m.group(1), m.group(2)
            if name == "MVNMF_H":
                continue
            self.defines.append((name, value))
        body = text
        # Preprocessor lines and extern "C" braces out.
        body = "\n".join(l for l in body.split("\n") if not l.lstrip().startswith("#"))
        body = body.replace('extern "C" {', "").replace("}  // extern", "")
        pos = 0
        for stmt in self._statements(body):
            self._statement(stmt.strip())

    @staticmethod
    def _statements(body):
        """Split at top-level ';' (braces balanced)."""
        depth, cur = 0, []
        for ch in body:
            cur.append(ch)
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == ";" and depth == 0:
                yield "".join(cur)
                cur = []
        rest = "".join(cur).strip()
        if rest and rest != "}":
            raise SystemExit("gen_bindings: unparsed trailing text: %r" % rest[:80])

    def _statement(self, s):
        s = " ".join(s.split())
        if not s or s == ";":
            return
        m = re.match(r"^enum (mvnmf_\w+)(?: : uint32_t)? \{(.*)\};$", s)
        if m:
            for item in m.group(2).split(","):
                item = item.strip()
                if item:
                    k, v = [x.strip() for x in item.split("=")]
                    self.enum.append((k, int(v)))
            return
        if re.match(r"^typedef (enum mvnmf_status|uint32_t) mvnmf_status;$", s):
            return
        m = re.match(r"^typedef struct (mvnmf_\w+) \{(.*)\} (mvnmf_\w+);$", s)
        if m:
            fields = []
            for f in m.group(2).split(";"):
                f = f.strip()
                if not f:
                    continue
                fm = re.match(r"^(.*?)(\w+)(?:\[(\d+)\])?$", f)
                fields.append((self._ctype(fm.group(1)), fm.group(2),
                               int(fm.group(3)) if fm.group(3) else None))
            self.structs.append((m.group(1), fields))
            return
        m = re.match(r"^typedef (.+?) \(\*(mvnmf_\w+)\)\((.*)\);$", s)
        if m:
            args = [self._ctype(re.sub(r"\w+$", "", a.strip())) for a in m.group(3).split(",")]
            self.callbacks.append((m.group(2), self._ctype(m.group(1)), args))
            return
        m = re.match(r"^(.+?)\b(mvnmf_\w+)\((.*)\);$", s)
        if m:
            args = []
            if m.group(3).strip() != "void":
                for a in m.group(3).split(","):
                    am = re.match(r"^(.*?)(\w+)$", a.strip())
                    args.append((self._ctype(am.group(1)), am.group(2)))
            self.functions.append((m.group(2), self._ctype(m.group(1)), args))
            return
        raise SystemExit("gen_bindings: a declaration this script does not know: %r" % s[:120])

    @staticmethod
    def _ctype(t):
        """A C type as (base, pointer depth): 'const double *const *' -> ('double', 2)."""
        t = t.replace("const", " ").replace("struct", " ")
        depth = t.count("*")
        base = t.replace("*", " ").split()
        if len(base) != 1:
            raise SystemExit("gen_bindings: a type this script does not know: %r" % t)
        return (base[0], depth)


def define_value(value):
    """A #define's value as Python / Julia literal text."""
    v = value.strip()
    if v == "SIZE_MAX":
        return ("C.c_size_t(-1).value", "typemax(Csize_t)")
    if v == "UINT32_MAX":
        return ("0xFFFFFFFF", "typemax(UInt32)")
    if re.fullmatch(r"\(?-?\d+\)?", v):
        n = v.strip("()")
        return (n, n)
    if re.fullmatch(r"-?[\d.]+(e-?\d+)?", v):
        return (v, v)
    if re.fullmatch(r'"[^"]*"', v):
        return (v, v)
    m = re.fullmatch(r"\(?\(?uint32_t\)\s*(\d+)\)?", v)
    if m:
        return (m.group(1), m.group(1))
    raise SystemExit("gen_bindings: a #define value this script does not know: %r" % v)


# ---------------------------------------------------------------- Python


def py_type(ct, structs, callbacks):
    base, depth = ct
    if base in SCALARS:
        name = SCALARS[base][0]
        if base == "void" and depth > 0:
            name, depth = "C.c_void_p", depth - 1
        elif base == "char" and depth == 1:
            name, depth = "C.c_char_p", 0
    elif base in structs:
        name = base
    elif base in callbacks:
        name = base
    else:
        raise SystemExit("gen_bindings: unknown type %r" % base)
    for _ in range(depth):
        name = "C.POINTER(%s)" % name
    return name


def python(h):
    structs = {n for n, _ in h.structs}
    callbacks = {n for n, _, _ in h.callbacks}
    out = [
        '"""ctypes bindings of include/mvnmf.h: GENERATED by python/gen_bindings.py, do not edit.',
        "",
        "Regenerate with `python3 python/gen_bindings.py`; python/tests/test_bindings.py fails",
        'when this file and the header disagree."""',
        "# fmt: off",
        "import ctypes as C",
        "",
        "# ---- constants (#define MVNMF_*)",
    ]
    for name, value in h.defines:
        out.append("%s = %s" % (name, define_value(value)[0]))
    out.append("")
    out.append("# ---- mvnmf_status")
    for name, value in h.enum:
        out.append("%s = %d" % (name, value))
    out.append("STATUS_NAMES = {%s}" % ", ".join("%d: %r" % (v, n) for n, v in h.enum))
    out.append("")
    out.append("# ---- structs (the header's order: each after the structs it holds)")
    for name, _ in h.structs:
        out.append("class %s(C.Structure):\n    pass\n" % name)
    out.append("")
    out.append("# ---- callbacks")
    for name, ret, args in h.callbacks:
        out.append("%s = C.CFUNCTYPE(%s)" % (
            name, ", ".join([py_type(ret, structs, callbacks)] + [py_type(a, structs, callbacks) for a in args])))
    out.append("")
    for name, fields in h.structs:
        items = []
        for ct, fname, n in fields:
            t = py_type(ct, structs, callbacks)
            items.append("(%r, %s)" % (fname, t if n is None else "%s * %d" % (t, n)))
        out.append("%s._fields_ = [%s]" % (name, ", ".join(items)))
    out.append("")
    out.append("# The structs whose size mvnmf_struct_size reports: MVNMF_STRUCT_<NAME> -> class.")
    codes = [n for n, _ in h.defines if n.startswith("MVNMF_STRUCT_")]
    pairs = []
    for code in codes:
        cls = "mvnmf_" + code[len("MVNMF_STRUCT_"):].lower()
        if cls not in structs:
            raise SystemExit("gen_bindings: %s names no struct %s" % (code, cls))
        pairs.append("%s: %s" % (code, cls))
    out.append("STRUCT_CODES = {%s}" % ", ".join(pairs))
    out.append("")
    out.append("# Every function of the header: name -> (restype, argtypes).")
    out.append("SIGNATURES = {")
    for name, ret, args in h.functions:
        out.append("    %r: (%s, [%s])," % (
            name, py_type(ret, structs, callbacks), ", ".join(py_type(a, structs, callbacks) for a, _ in args)))
    out.append("}")
    out.append("")
    out.append("# Argument names, for messages: name -> [arg, ...].")
    out.append("ARG_NAMES = {")
    for name, _, args in h.functions:
        out.append("    %r: [%s]," % (name, ", ".join(repr(a) for _, a in args)))
    out.append("}")
    out.append("")
    out.append("")
    out.append("def declare(lib):")
    out.append('    """Sets restype and argtypes of every function of the header on `lib` (a ctypes.CDLL)."""')
    out.append("    for name, (restype, argtypes) in SIGNATURES.items():")
    out.append("        f = getattr(lib, name)")
    out.append("        f.restype = restype")
    out.append("        f.argtypes = argtypes")
    out.append("    return lib")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------- Julia


def jl_type(ct, structs, callbacks, field=False):
    base, depth = ct
    if base in SCALARS:
        name = SCALARS[base][1]
    elif base in structs:
        name = jl_struct(base)
    elif base in callbacks:
        name, depth = "Ptr{Cvoid}", depth  # a C function pointer
    else:
        raise SystemExit("gen_bindings: unknown type %r" % base)
    for _ in range(depth):
        name = "Ptr{%s}" % name
    return name


def jl_struct(c_name):
    """mvnmf_nmf_params -> MvnmfNmfParams."""
    return "".join(p.capitalize() for p in c_name.split("_"))


def julia(h):
    structs = {n for n, _ in h.structs}
    callbacks = {n for n, _, _ in h.callbacks}
    out = [
        "# Julia bindings of include/mvnmf.h: GENERATED by python/gen_bindings.py, do not edit.",
        "# Regenerate with `python3 python/gen_bindings.py`; python/tests/test_bindings.py fails",
        "# when this file and the header disagree. Untested: no Julia runtime on the build machines.",
        "",
        "# ---- constants (#define MVNMF_*) and mvnmf_status",
    ]
    for name, value in h.defines:
        out.append("const %s = %s" % (name, define_value(value)[1]))
    for name, value in h.enum:
        out.append("const %s = UInt32(%d)" % (name, value))
    out.append("")
    out.append("# ---- structs: the C layout (isbits, so Ref/Vector of them pass as pointers)")
    for name, fields in h.structs:
        out.append("struct %s  # %s" % (jl_struct(name), name))
        for ct, fname, n in fields:
            t = jl_type(ct, structs, callbacks, field=True)
            out.append("    %s::%s" % (fname, t if n is None else "NTuple{%d,%s}" % (n, t)))
        out.append("end")
    out.append("")
    out.append("# The structs whose size mvnmf_struct_size reports.")
    codes = [n for n, _ in h.defines if n.startswith("MVNMF_STRUCT_")]
    out.append("const STRUCT_CODES = Dict{UInt32,DataType}(%s)" % ", ".join(
        "%s => %s" % (c, jl_struct("mvnmf_" + c[len("MVNMF_STRUCT_"):].lower())) for c in codes))
    out.append("")
    out.append("# ---- functions: one ccall wrapper each, same name and argument order as in C;")
    out.append("# `_fn` (MVNMF.jl) resolves the entry point in the library opened at run time")
    for name, ret, args in h.functions:
        params = ", ".join(a for _, a in args)
        types = ", ".join(jl_type(a, structs, callbacks) for a, _ in args)
        out.append("%s(%s) = ccall(_fn(:%s), %s, (%s%s)%s)" % (
            name, params, name, jl_type(ret, structs, callbacks), types, "," if len(args) == 1 else "",
            "".join(", " + a for _, a in args)))
    return "\n".join(out) + "\n"


def main():
    h = Header(open(HEADER, encoding="utf-8").read())
    if not h.functions or not h.structs:
        raise SystemExit("gen_bindings: nothing parsed from %s" % HEADER)
    outputs = [(PY_OUT, python(h)), (JL_OUT, julia(h))]
    check = "--check" in sys.argv[1:]
    stale = []
    for path, text in outputs:
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale.append(os.path.relpath(path, ROOT))
            if not check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    if check and stale:
        print("stale (run python3 python/gen_bindings.py): " + ", ".join(stale))
        return 1
    print("%d functions, %d structs, %d callbacks, %d constants%s" % (
        len(h.functions), len(h.structs), len(h.callbacks), len(h.defines) + len(h.enum),
        "" if check else "; wrote " + (", ".join(stale) if stale else "nothing (up to date)")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
