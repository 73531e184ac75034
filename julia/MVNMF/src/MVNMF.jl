# MVNMF: Julia bindings of mvnmf's C ABI (include/mvnmf.h).
#
# bindings.jl is GENERATED from the header by python/gen_bindings.py (constants,
# structs with the C layout, one `ccall` wrapper per function, same names and
# argument order as in C); CI checks that it matches the header. UNTESTED: no
# Julia runtime can be installed on the machines this is built on, so nothing
# here has been run. The library is `ENV["MVNMF_LIBRARY"]` if set, else
# `libmvnmf` on the loader path (install it with the README's "Installing the
# C/C++ library").
#
#     using MVNMF
#     MVNMF.check_abi()                       # the header these bindings are from = the library?
#     p = Ref(MVNMF.mvnmf_nmf_params_default())
#     # X: M x N Matrix{Float64} (column-major, items are columns, as in C)
#     view = Ref(MVNMF.MvnmfView(MVNMF.MVNMF_VIEW_DENSE, size(X, 1), size(X, 2), pointer(X),
#                                size(X, 1), C_NULL, C_NULL))
#     bytes = Ref{Csize_t}(0)
#     MVNMF.mvnmf_nmf_fit_workspace(view, k, p, bytes)
#     U, V, work = zeros(size(X, 1), k), zeros(k, size(X, 2)), zeros(UInt8, bytes[])
#     rep = Ref{MVNMF.MvnmfReport}()
#     GC.@preserve X U V work MVNMF.mvnmf_nmf_fit(view, k, p, U, V, work, bytes[], C_NULL, C_NULL, rep)
module MVNMF

const libmvnmf = get(ENV, "MVNMF_LIBRARY", "libmvnmf")

include("bindings.jl")

"""
    check_abi()

Throws unless the loaded library has the ABI version and struct sizes of the
header the bindings were generated from.
"""
function check_abi()
    v = ccall((:mvnmf_abi_version, libmvnmf), UInt32, ())
    v == MVNMF_ABI_VERSION || error("libmvnmf has ABI version $v, the bindings $(MVNMF_ABI_VERSION)")
    for (code, T) in STRUCT_CODES
        n = ccall((:mvnmf_struct_size, libmvnmf), Csize_t, (UInt32,), code)
        n == sizeof(T) || error("sizeof($T): library $n, bindings $(sizeof(T))")
    end
    return true
end

end
