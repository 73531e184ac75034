/* mvnmf.hpp: a small header-only C++17 layer over the C ABI of mvnmf.h.
 *
 *  - mvnmf::error (a std::runtime_error with the status) and mvnmf::check;
 *  - mvnmf::check_abi(): the loaded library is the one this header describes;
 *  - mvnmf::span<T>: pointer + length (std::span is C++20), from std::vector,
 *    std::array or a C array, never copying;
 *  - mvnmf::dense / mvnmf::csc: view descriptors over the caller's buffers;
 *  - mvnmf::workspace: scratch memory owned by RAII and reused across calls;
 *  - mvnmf::with_progress: any solver of mvnmf.h with a C++ callable as its
 *    progress callback; an exception thrown by the callable stops the solver,
 *    is held while the Rust frames return, and is rethrown afterwards;
 *  - mvnmf::joint_nmf_fit / joint_nmf_encode as examples of a full wrapper.
 *
 * Everything else: call the C functions of mvnmf.h directly (wrap their
 * status in mvnmf::check). Header-only, no exceptions cross the C ABI. */
#ifndef MVNMF_HPP
#define MVNMF_HPP

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mvnmf.h"

namespace mvnmf {

/// A call of the C ABI failed: `what()` is `mvnmf_status_message(status())`.
class error : public std::runtime_error {
public:
    explicit error(mvnmf_status s) : std::runtime_error(mvnmf_status_message(s)), status_(s) {}
    mvnmf_status status() const noexcept { return status_; }

private:
    mvnmf_status status_;
};

/// Throws mvnmf::error unless `s` is MVNMF_STATUS_OK.
inline void check(mvnmf_status s)
{
    if (s != MVNMF_STATUS_OK)
        throw error(s);
}

/// Throws std::runtime_error when the library loaded at run time is not the
/// one this header describes: another ABI version, or another size of a
/// struct this header passes by address.
inline void check_abi()
{
    if (mvnmf_abi_version() != MVNMF_ABI_VERSION)
        throw std::runtime_error("mvnmf: the library's ABI version is " +
                                 std::to_string(mvnmf_abi_version()) + ", mvnmf.h's is " +
                                 std::to_string(MVNMF_ABI_VERSION));
    struct entry {
        std::uint32_t code;
        std::size_t size;
        const char *name;
    };
    static const entry structs[] = {
        { MVNMF_STRUCT_VIEW, sizeof(mvnmf_view), "mvnmf_view" },
        { MVNMF_STRUCT_TERM, sizeof(mvnmf_term), "mvnmf_term" },
        { MVNMF_STRUCT_OBJECTIVE, sizeof(mvnmf_objective), "mvnmf_objective" },
        { MVNMF_STRUCT_PROGRESS, sizeof(mvnmf_progress), "mvnmf_progress" },
        { MVNMF_STRUCT_REPORT, sizeof(mvnmf_report), "mvnmf_report" },
        { MVNMF_STRUCT_NMF_PARAMS, sizeof(mvnmf_nmf_params), "mvnmf_nmf_params" },
        { MVNMF_STRUCT_MVSL_PARAMS, sizeof(mvnmf_mvsl_params), "mvnmf_mvsl_params" },
        { MVNMF_STRUCT_GRAPH, sizeof(mvnmf_graph), "mvnmf_graph" },
        { MVNMF_STRUCT_DEEP_PARAMS, sizeof(mvnmf_deep_params), "mvnmf_deep_params" },
        { MVNMF_STRUCT_PIPELINE_PARAMS, sizeof(mvnmf_pipeline_params), "mvnmf_pipeline_params" },
        { MVNMF_STRUCT_KERNEL, sizeof(mvnmf_kernel), "mvnmf_kernel" },
    };
    for (const entry &e : structs)
        if (mvnmf_struct_size(e.code) != e.size)
            throw std::runtime_error(std::string("mvnmf: sizeof(") + e.name + ") is " +
                                     std::to_string(e.size) + " here, " +
                                     std::to_string(mvnmf_struct_size(e.code)) +
                                     " in the library");
}

/// A pointer and a length over memory the caller owns (std::span is C++20).
template <class T>
class span {
public:
    constexpr span() noexcept = default;
    constexpr span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    /// Any contiguous container with data() and size(): std::vector, std::array, ...
    template <class C, class = std::enable_if_t<std::is_convertible_v<
                           std::remove_pointer_t<decltype(std::declval<C &>().data())> (*)[],
                           T (*)[]>>>
    constexpr span(C &c) noexcept : data_(c.data()), size_(c.size())
    {
    }
    template <std::size_t N>
    constexpr span(T (&a)[N]) noexcept : data_(a), size_(N)
    {
    }
    constexpr T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr T *begin() const noexcept { return data_; }
    constexpr T *end() const noexcept { return data_ + size_; }
    constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }

private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

/// A dense view of `rows × cols` column-major values, column `j` at
/// `values[j * col_stride]` (`col_stride` 0 means `rows`). No copy: the view
/// points into `values`, which must outlive it.
inline mvnmf_view dense(span<const double> values, std::size_t rows, std::size_t cols,
                        std::size_t col_stride = 0)
{
    mvnmf_view v{};
    v.kind = MVNMF_VIEW_DENSE;
    v.rows = rows;
    v.cols = cols;
    v.values = values.data();
    v.col_stride = col_stride != 0 ? col_stride : rows;
    if (cols != 0 && values.size() < (cols - 1) * v.col_stride + rows)
        throw error(MVNMF_STATUS_BUFFER_TOO_SHORT);
    return v;
}

/// A compressed-sparse-column view (`col_ptr` has `cols + 1` entries, rows
/// strictly increasing within a column). No copy, as for dense().
inline mvnmf_view csc(std::size_t rows, std::size_t cols, span<const std::size_t> col_ptr,
                      span<const std::size_t> row_idx, span<const double> values)
{
    if (col_ptr.size() != cols + 1 || row_idx.size() < col_ptr[cols] ||
        values.size() < col_ptr[cols])
        throw error(MVNMF_STATUS_BUFFER_TOO_SHORT);
    mvnmf_view v{};
    v.kind = MVNMF_VIEW_CSC;
    v.rows = rows;
    v.cols = cols;
    v.values = values.data();
    v.col_ptr = col_ptr.data();
    v.row_idx = row_idx.data();
    return v;
}

/// Scratch memory for the solvers, owned here and reused: `reserve(bytes)`
/// grows it when a call needs more (any alignment works) and never shrinks it.
class workspace {
public:
    void *reserve(std::size_t bytes)
    {
        if (bytes > size_) {
            data_.reset(new unsigned char[bytes]);
            size_ = bytes;
        }
        return data_.get();
    }
    void *data() noexcept { return data_.get(); }
    std::size_t size() const noexcept { return size_; }

private:
    std::unique_ptr<unsigned char[]> data_;
    std::size_t size_ = 0;
};

namespace detail {
template <class F>
struct progress {
    F *f;
    std::exception_ptr thrown;

    // Called by the solver: never lets an exception into the Rust frames.
    static int call(const mvnmf_progress *p, void *user) noexcept
    {
        auto *self = static_cast<progress *>(user);
        try {
            if constexpr (std::is_void_v<decltype((*self->f)(*p))>) {
                (*self->f)(*p);
                return 0;
            } else {
                return (*self->f)(*p) ? 0 : 1;
            }
        } catch (...) {
            self->thrown = std::current_exception();
            return 1;
        }
    }
};
} // namespace detail

/// Calls `solve(progress_fn, user)` — a lambda that calls a solver of
/// mvnmf.h with those two arguments — with `on_progress(const mvnmf_progress&)`
/// as the progress callback. `on_progress` returns void, or bool: `false`
/// stops the solver (MVNMF_STATUS_CANCELLED, the outputs hold the last
/// iterate). An exception it throws stops the solver too and is rethrown here.
/// Returns the solver's status (MVNMF_STATUS_OK or _CANCELLED); throws
/// mvnmf::error for the others.
template <class F, class Solve>
mvnmf_status with_progress(F &&on_progress, Solve &&solve)
{
    using G = std::remove_reference_t<F>;
    detail::progress<G> adapter{ &on_progress, nullptr };
    mvnmf_status s = solve(&detail::progress<G>::call, static_cast<void *>(&adapter));
    if (adapter.thrown)
        std::rethrow_exception(adapter.thrown);
    if (s != MVNMF_STATUS_CANCELLED)
        check(s);
    return s;
}

/// Joint NMF of views of the same items (`mvnmf_joint_nmf_fit`): sizes
/// `u[i]` to `rows_i × k` and `v` to `k × items`, fits into them in place
/// (column-major), and returns the report (`report.stop` says whether
/// `on_progress` stopped it).
template <class F>
mvnmf_report joint_nmf_fit(span<const mvnmf_view> views, std::size_t k,
                           const mvnmf_nmf_params &params, std::vector<std::vector<double>> &u,
                           std::vector<double> &v, workspace &work, F &&on_progress)
{
    if (views.size() == 0)
        throw error(MVNMF_STATUS_ZERO_DIMENSION);
    std::size_t bytes = 0;
    check(mvnmf_joint_nmf_fit_workspace(views.data(), views.size(), k, &params, &bytes));
    u.resize(views.size());
    std::vector<double *> out(views.size());
    for (std::size_t i = 0; i < views.size(); i++) {
        u[i].resize(views[i].rows * k);
        out[i] = u[i].data();
    }
    v.resize(k * views[0].cols);
    void *w = work.reserve(bytes);
    mvnmf_report report{};
    with_progress(std::forward<F>(on_progress), [&](mvnmf_progress_fn fn, void *user) {
        return mvnmf_joint_nmf_fit(views.data(), views.size(), k, &params, out.data(), v.data(),
                                   w, bytes, fn, user, &report);
    });
    return report;
}

/// joint_nmf_fit without a progress callback.
inline mvnmf_report joint_nmf_fit(span<const mvnmf_view> views, std::size_t k,
                                  const mvnmf_nmf_params &params,
                                  std::vector<std::vector<double>> &u, std::vector<double> &v,
                                  workspace &work)
{
    return joint_nmf_fit(views, k, params, u, v, work, [](const mvnmf_progress &) {});
}

/// Encodes new items (`views`, same features as the fit) against fixed bases
/// `u` (`mvnmf_joint_nmf_encode`): sizes `v` to `k × items` and writes it.
inline mvnmf_report joint_nmf_encode(span<const mvnmf_view> views, std::size_t k,
                                     const mvnmf_nmf_params &params,
                                     const std::vector<std::vector<double>> &u,
                                     std::vector<double> &v, workspace &work)
{
    if (views.size() == 0)
        throw error(MVNMF_STATUS_ZERO_DIMENSION);
    if (u.size() != views.size())
        throw error(MVNMF_STATUS_DIMENSION_MISMATCH);
    std::vector<const double *> bases(u.size());
    for (std::size_t i = 0; i < u.size(); i++) {
        if (u[i].size() != views[i].rows * k)
            throw error(MVNMF_STATUS_BUFFER_TOO_SHORT);
        bases[i] = u[i].data();
    }
    std::size_t bytes = 0;
    check(mvnmf_joint_nmf_encode_workspace(views.data(), views.size(), k, &params, &bytes));
    v.resize(k * views[0].cols);
    void *w = work.reserve(bytes);
    mvnmf_report report{};
    check(mvnmf_joint_nmf_encode(views.data(), views.size(), k, &params, bases.data(), v.data(),
                                 w, bytes, nullptr, nullptr, &report));
    return report;
}

} // namespace mvnmf

#endif /* MVNMF_HPP */
