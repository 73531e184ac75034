# MVNMF: Julia bindings of mvnmf's C ABI (include/mvnmf.h).
#
# bindings.jl is GENERATED from the header by python/gen_bindings.py (constants,
# structs with the C layout, one `ccall` wrapper per function, same names and
# argument order as in C); CI checks that it matches the header. UNTESTED: no
# Julia runtime can be installed on the machines this is built on, so nothing
# here has been run. The library is opened at the first call, at run time (not
# at precompile time): `MVNMF.load!(path)` if called, else `ENV["MVNMF_LIBRARY"]`
# if set, else `libmvnmf` on the loader path (install it with the README's
# "Installing the C/C++ library").
#
#     using MVNMF
#     MVNMF.check_abi()                       # the header these bindings are from = the library?
#     p = Ref(MVNMF.with(MVNMF.mvnmf_nmf_params_default(); max_iter = 500, tol = 1e-6))
#     # X: M x N Matrix{Float64} (column-major, items are columns, as in C)
#     view = Ref(MVNMF.MvnmfView(MVNMF.MVNMF_VIEW_DENSE, size(X, 1), size(X, 2), pointer(X),
#                                size(X, 1), C_NULL, C_NULL))
#     bytes = Ref{Csize_t}(0)
#     MVNMF.mvnmf_nmf_fit_workspace(view, k, p, bytes)
#     U, V, work = zeros(size(X, 1), k), zeros(k, size(X, 2)), zeros(UInt8, bytes[])
#     rep = Ref{MVNMF.MvnmfReport}()
#     GC.@preserve X U V work MVNMF.mvnmf_nmf_fit(view, k, p, U, V, work, bytes[], C_NULL, C_NULL, rep)
module MVNMF

using Libdl

# The library handle and the entry points looked up so far. Every generated
# wrapper calls through `_fn(:name)`, a function pointer resolved on first use,
# so the path is read when the program runs, never baked in at precompile time.
const _handle = Ref{Ptr{Cvoid}}(C_NULL)
const _symbols = Dict{Symbol,Ptr{Cvoid}}()
const _lock = ReentrantLock()

"""
    load!(path = get(ENV, "MVNMF_LIBRARY", "libmvnmf"))

Opens the C library at `path` (a file or a name on the loader path) for every
later call; called on first use with the default when not called before.
"""
function load!(path::AbstractString = get(ENV, "MVNMF_LIBRARY", "libmvnmf"))
    lock(_lock) do
        h = Libdl.dlopen(path)
        empty!(_symbols)
        _handle[] = h
    end
    return nothing
end

function _fn(name::Symbol)
    lock(_lock) do
        get!(_symbols, name) do
            _handle[] == C_NULL && (_handle[] = Libdl.dlopen(get(ENV, "MVNMF_LIBRARY", "libmvnmf")))
            Libdl.dlsym(_handle[], name)
        end
    end
end

# A precompiled module must not keep a handle from the session that built it.
__init__() = (empty!(_symbols); _handle[] = C_NULL; nothing)

"""
    with(p; field = value, ...)

A copy of the C struct `p` (a parameters struct such as
`mvnmf_nmf_params_default()`) with the named fields replaced, each converted to
the field's C type. The structs are immutable `isbits` values so that they pass
to C by `Ref`; this is how one field is changed.
"""
function with(p::T; kw...) where {T}
    for k in keys(kw)
        hasfield(T, k) || throw(ArgumentError("$T has no field $k"))
    end
    return T((haskey(kw, f) ? convert(fieldtype(T, f), kw[f]) : getfield(p, f) for f in fieldnames(T))...)
end

include("bindings.jl")

"""
    check_abi()

Throws unless the loaded library has the ABI version and struct sizes of the
header the bindings were generated from.
"""
function check_abi()
    v = ccall(_fn(:mvnmf_abi_version), UInt32, ())
    v == MVNMF_ABI_VERSION || error("libmvnmf has ABI version $v, the bindings $(MVNMF_ABI_VERSION)")
    for (code, T) in STRUCT_CODES
        n = ccall(_fn(:mvnmf_struct_size), Csize_t, (UInt32,), code)
        n == sizeof(T) || error("sizeof($T): library $n, bindings $(sizeof(T))")
    end
    return true
end

end
