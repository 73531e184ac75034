# Tests of the Julia bindings, as a Julia CI would run them (`julia --project=julia/MVNMF -e
# 'using Pkg; Pkg.test()'` with MVNMF_LIBRARY pointing at a built libmvnmf.so). NOT RUN on the
# machines mvnmf is built on: no Julia runtime can be installed there (README, "Using it from
# Python, Julia or R").
using Test, Random, MVNMF

@testset "MVNMF" begin
    @test MVNMF.check_abi()

    # Parameters are immutable C-layout values, edited field by field with `with`.
    p0 = MVNMF.mvnmf_nmf_params_default()
    p = Ref(MVNMF.with(p0; max_iter = 50, tol = 0.0))
    @test p[].max_iter == 50 && p[].tol == 0.0 && p[].seed == p0.seed
    @test_throws ArgumentError MVNMF.with(p0; no_such_field = 1)

    rng = MersenneTwister(1)
    M, N, k = 20, 30, 4
    X = rand(rng, M, N)
    view = Ref(MVNMF.MvnmfView(MVNMF.MVNMF_VIEW_DENSE, M, N, pointer(X), M, C_NULL, C_NULL))
    bytes = Ref{Csize_t}(0)
    GC.@preserve X begin
        @test MVNMF.mvnmf_nmf_fit_workspace(view, k, p, bytes) == MVNMF.MVNMF_STATUS_OK
        U, V, work = zeros(M, k), zeros(k, N), zeros(UInt8, bytes[])
        rep = Ref{MVNMF.MvnmfReport}()
        @test MVNMF.mvnmf_nmf_fit(view, k, p, U, V, work, bytes[], C_NULL, C_NULL, rep) ==
              MVNMF.MVNMF_STATUS_OK
        @test rep[].iterations == 50
        @test rep[].objective.total < rep[].initial.total
        # The reported objective is ½‖X − UV‖² (no penalties in plain NMF).
        @test isapprox(rep[].objective.total, 0.5 * sum(abs2, X - U * V); rtol = 1e-8)
        @test all(>=(0), U) && all(>=(0), V)

        # A bad rank: its status, and the outputs untouched.
        U2 = fill(-1.0, M, k)
        @test MVNMF.mvnmf_nmf_fit(view, 0, p, U2, V, work, bytes[], C_NULL, C_NULL, rep) ==
              MVNMF.MVNMF_STATUS_BAD_RANK
        @test all(==(-1.0), U2)
    end
    @test !isempty(unsafe_string(MVNMF.mvnmf_status_message(MVNMF.MVNMF_STATUS_BAD_RANK)))

    # The library is opened at run time: another path takes effect at once.
    @test_throws Exception MVNMF.load!("/nonexistent/libmvnmf.so")
end
