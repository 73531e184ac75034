// mvnmf from C++17, against the installed library (README, "Installing the
// C/C++ library"): a joint NMF of a dense and a sparse view held in
// std::vector, then the encoding of new items.
//
// No copies: the view descriptors point into the vectors, and the solver
// writes the bases and the encoding straight into the caller's vectors.
// mvnmf.hpp (header-only) adds exceptions, a RAII workspace and a C++ lambda
// as the progress callback; the C functions of mvnmf.h remain callable.
//
// Build it either way (packaging/check.sh does both, then runs them):
//   cmake -S examples-cpp -B build/cpp -DCMAKE_PREFIX_PATH=<prefix> && cmake --build build/cpp
//   PKG_CONFIG_PATH=<prefix>/lib/pkgconfig make -C examples-cpp
// It checks what it prints and exits nonzero if anything is off.
#include <mvnmf.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr std::size_t M1 = 30, M2 = 20, N = 40, NNEW = 5, K = 3; // features, items, rank

int failures = 0;

void expect(bool ok, const std::string &what)
{
    if (!ok) {
        std::fprintf(stderr, "FAILED: %s\n", what.c_str());
        failures++;
    }
}

// A tiny deterministic generator: the same data everywhere.
struct rng {
    std::uint64_t state;
    double uniform()
    {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) / 9007199254740992.0; // [0, 1)
    }
};

// x (rows x n) = u (rows x K) v (K x n), column-major, times (1 + 1% noise).
std::vector<double> make_view(const std::vector<double> &u, const std::vector<double> &v,
                              std::size_t rows, std::size_t n, rng &r)
{
    std::vector<double> x(rows * n);
    for (std::size_t j = 0; j < n; j++)
        for (std::size_t i = 0; i < rows; i++) {
            double s = 0.0;
            for (std::size_t l = 0; l < K; l++)
                s += u[i + l * rows] * v[l + j * K];
            x[i + j * rows] = s * (1.0 + 0.01 * (2.0 * r.uniform() - 1.0));
        }
    return x;
}

// Compressed sparse columns of the first n columns of a dense rows x n matrix,
// keeping the entries >= cut (the rest are read as zeros).
struct csc_matrix {
    std::vector<std::size_t> col_ptr, row_idx;
    std::vector<double> values;
};

csc_matrix sparsify(const std::vector<double> &x, std::size_t rows, std::size_t n, double cut)
{
    csc_matrix m;
    m.col_ptr.push_back(0);
    for (std::size_t j = 0; j < n; j++) {
        for (std::size_t i = 0; i < rows; i++)
            if (x[i + j * rows] >= cut) {
                m.row_idx.push_back(i);
                m.values.push_back(x[i + j * rows]);
            }
        m.col_ptr.push_back(m.row_idx.size());
    }
    return m;
}

// ||X - U V||^2 of a view over its items, and ||X||^2 (through the C ABI's
// own view description, so dense and CSC views are read the same way).
void error_of(const mvnmf_view &x, const std::vector<double> &u, const std::vector<double> &v,
              double &err, double &norm)
{
    std::vector<double> col(x.rows);
    for (std::size_t j = 0; j < x.cols; j++) {
        std::fill(col.begin(), col.end(), 0.0);
        if (x.kind == MVNMF_VIEW_DENSE)
            std::memcpy(col.data(), x.values + j * x.col_stride, x.rows * sizeof(double));
        else
            for (std::size_t p = x.col_ptr[j]; p < x.col_ptr[j + 1]; p++)
                col[x.row_idx[p]] = x.values[p];
        for (std::size_t i = 0; i < x.rows; i++) {
            double e = col[i];
            for (std::size_t l = 0; l < K; l++)
                e -= u[i + l * x.rows] * v[l + j * K];
            err += e * e;
            norm += col[i] * col[i];
        }
    }
}

} // namespace

int main()
{
    // 0. The library loaded at run time is the one mvnmf.h describes.
    mvnmf::check_abi();
    const std::string header_version = std::to_string(MVNMF_VERSION_MAJOR) + "." +
                                       std::to_string(MVNMF_VERSION_MINOR) + "." +
                                       std::to_string(MVNMF_VERSION_PATCH);
    expect(header_version == mvnmf_version(), "header version " + header_version +
                                                  " == library version " + mvnmf_version());
    std::printf("mvnmf %s (header %s, ABI %u)\n", mvnmf_version(), header_version.c_str(),
                mvnmf_abi_version());

    // 1. Data: two views of the same N + NNEW items from known nonnegative factors.
    rng r{ 42 };
    std::vector<double> u1_true(M1 * K), u2_true(M2 * K), v_true(K * (N + NNEW));
    for (double &e : u1_true) e = r.uniform();
    for (double &e : u2_true) e = r.uniform();
    for (double &e : v_true) e = r.uniform();
    const std::vector<double> x1 = make_view(u1_true, v_true, M1, N + NNEW, r);
    const std::vector<double> x2 = make_view(u2_true, v_true, M2, N + NNEW, r);
    const csc_matrix s2 = sparsify(x2, M2, N, 0.5); // view 2 of the training items, sparse

    // 2. Views over the vectors (no copy): view 1 dense, view 2 sparse, first N items.
    const std::vector<mvnmf_view> views = {
        mvnmf::dense(x1, M1, N),
        mvnmf::csc(M2, N, s2.col_ptr, s2.row_idx, s2.values),
    };
    expect(views[0].values == x1.data() && views[1].values == s2.values.data(),
           "the views point into the vectors");
    std::printf("views: %zux%zu dense, %zux%zu CSC with %zu nonzeros; K = %zu\n", M1, N, M2, N,
                s2.values.size(), K);

    // 3. Fit. The lambda sees every iterate's objective; it must never rise.
    mvnmf_nmf_params params = mvnmf_nmf_params_default();
    params.max_iter = 300;
    params.tol = 1e-10;
    params.seed = 7;
    std::vector<std::vector<double>> u;
    std::vector<double> v;
    mvnmf::workspace work;
    std::vector<double> trace;
    const mvnmf_report report =
        mvnmf::joint_nmf_fit(views, K, params, u, v, work, [&](const mvnmf_progress &p) {
            trace.push_back(p.objective.total);
        });
    std::size_t rises = 0;
    for (std::size_t i = 1; i < trace.size(); i++)
        rises += trace[i] > trace[i - 1] + 1e-10 * trace[0];
    std::printf("fit: %u iterations, objective %.6e -> %.6e, workspace %zu bytes\n",
                report.iterations, report.initial.total, report.objective.total, work.size());
    expect(trace.size() == report.iterations + 1u, "one callback per iterate and the start");
    expect(rises == 0, "the objective never rises (" + std::to_string(rises) + " rises)");
    expect(report.objective.total < 0.02 * report.initial.total, "the objective falls 50-fold");
    double err = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < views.size(); i++)
        error_of(views[i], u[i], v, err, norm);
    std::printf("training items: relative error %.4f\n", std::sqrt(err / norm));
    expect(std::sqrt(err / norm) < 0.2, "training items fit");

    // 4. Encode the NNEW new items (dense, both views) against the fixed bases.
    const std::vector<mvnmf_view> fresh = {
        mvnmf::dense(mvnmf::span<const double>(x1.data() + M1 * N, M1 * NNEW), M1, NNEW),
        mvnmf::dense(mvnmf::span<const double>(x2.data() + M2 * N, M2 * NNEW), M2, NNEW),
    };
    std::vector<double> v_new;
    mvnmf::joint_nmf_encode(fresh, K, params, u, v_new, work);
    err = norm = 0.0;
    for (std::size_t i = 0; i < fresh.size(); i++)
        error_of(fresh[i], u[i], v_new, err, norm);
    std::printf("new items: relative error %.4f\n", std::sqrt(err / norm));
    expect(v_new.size() == K * NNEW && std::sqrt(err / norm) < 0.2, "new items encode");

    // 5. Errors are exceptions: a bad rank, and an exception thrown by the
    //    callback, held while the solver returns and rethrown here.
    try {
        mvnmf::joint_nmf_fit(views, 0, params, u, v, work);
        expect(false, "K = 0 throws");
    } catch (const mvnmf::error &e) {
        expect(e.status() == MVNMF_STATUS_BAD_RANK, std::string("K = 0: ") + e.what());
    }
    try {
        mvnmf::joint_nmf_fit(views, K, params, u, v, work, [](const mvnmf_progress &p) {
            if (p.iter == 3)
                throw std::runtime_error("stop at 3");
        });
        expect(false, "the callback's exception reaches the caller");
    } catch (const std::runtime_error &e) {
        expect(std::string(e.what()) == "stop at 3", std::string("callback exception: ") + e.what());
    }
    // A callback returning false cancels: not an error, the report says so.
    const mvnmf_report stopped = mvnmf::joint_nmf_fit(
        views, K, params, u, v, work, [](const mvnmf_progress &p) { return p.iter < 5; });
    expect(stopped.stop == MVNMF_STOP_CANCELLED && stopped.iterations == 5,
           "returning false stops after 5 iterations");

    if (failures != 0) {
        std::fprintf(stderr, "examples-cpp: %d checks failed\n", failures);
        return 1;
    }
    std::printf("examples-cpp: all checks passed\n");
    return 0;
}
