//! The C ABI of kernels, MKL, fused kNN and graph builders, called from Rust: same results as
//! the Rust API, NULL / bad-argument handling, outputs untouched on error.

#[path = "graph_reference.rs"]
mod reference;

use core::ffi::c_void;
use core::ptr::{null, null_mut};
use mvnmf::data::ViewSet;
use mvnmf::ffi::*;
use mvnmf::graph::{self, CsrOut, GraphParams, Penalty};
use mvnmf::similarity::{self, Bandwidth, Kernel, KnnParams, MklParams, Scope};
use mvnmf::View;
use reference::*;

const OK: mvnmf_status = mvnmf_status::Ok;

fn cview(t: &TestView, sparse: bool) -> mvnmf_view {
    if sparse {
        mvnmf_view {
            kind: MVNMF_VIEW_CSC,
            rows: t.m,
            cols: t.n,
            values: t.values.as_ptr(),
            col_stride: 0,
            col_ptr: t.col_ptr.as_ptr(),
            row_idx: t.row_idx.as_ptr(),
        }
    } else {
        mvnmf_view {
            kind: MVNMF_VIEW_DENSE,
            rows: t.m,
            cols: t.n,
            values: t.x.as_ptr(),
            col_stride: t.m,
            col_ptr: null(),
            row_idx: null(),
        }
    }
}

struct Data {
    tv: Vec<TestView>,
    labels: Vec<u32>,
}

fn data() -> Data {
    let n = 48;
    let tv = vec![
        random_view(9, n, 0.8, 1),
        random_view(30, n, 0.2, 2),
        random_view(5, n, 1.0, 3),
    ];
    let mut g = Lcg(4);
    let labels = (0..n)
        .map(|j| if j % 4 == 3 { U } else { g.below(3) as u32 })
        .collect();
    Data { tv, labels }
}

const CK: [mvnmf_kernel; 3] = [
    mvnmf_kernel {
        kind: MVNMF_KERNEL_RBF,
        gamma: 0.0,
    },
    mvnmf_kernel {
        kind: MVNMF_KERNEL_CHI_SQUARED,
        gamma: 0.0,
    },
    mvnmf_kernel {
        kind: MVNMF_KERNEL_LINEAR,
        gamma: 0.0,
    },
];
const RK: [Kernel; 3] = [
    Kernel::Rbf(Bandwidth::Median),
    Kernel::ChiSquared,
    Kernel::Linear,
];

#[test]
fn fused_knn_and_class_pairs_through_the_c_abi_equal_the_rust_api() {
    let d = data();
    let n = d.labels.len();
    let cv: Vec<mvnmf_view> =
        d.tv.iter()
            .enumerate()
            .map(|(v, t)| cview(t, v == 1))
            .collect();
    let rv: Vec<View<'_, f64>> =
        d.tv.iter()
            .enumerate()
            .map(|(v, t)| if v == 1 { t.csc() } else { t.dense() })
            .collect();
    let eta = [0.5, 0.3, 0.2];
    let qm: Vec<u8> = (0..n).map(|j| (j % 3 != 0) as u8).collect();
    let cm: Vec<u8> = (0..n).map(|j| (j % 2 == 0) as u8).collect();
    for (scope, k) in [
        (MVNMF_SCOPE_ALL, 5),
        (MVNMF_SCOPE_LABELED, 3),
        (MVNMF_SCOPE_SAME_CLASS, 2),
        (MVNMF_SCOPE_OTHER_CLASS, 4),
        (MVNMF_SCOPE_MASKED, 3),
    ] {
        let p = mvnmf_fused_knn_params {
            k,
            scope,
            block: 7,
            ..mvnmf_fused_knn_params_default()
        };
        let mut bytes = 0;
        unsafe {
            assert_eq!(
                mvnmf_fused_knn_workspace(cv.as_ptr(), 3, CK.as_ptr(), 3, &p, &mut bytes),
                OK
            );
        }
        let mut w = vec![0u8; bytes];
        let (mut nb, mut s) = (vec![0usize; n * k], vec![0.0; n * k]);
        let st = unsafe {
            mvnmf_fused_knn(
                cv.as_ptr(),
                3,
                CK.as_ptr(),
                eta.as_ptr(),
                d.labels.as_ptr(),
                3,
                &p,
                qm.as_ptr(),
                cm.as_ptr(),
                nb.as_mut_ptr(),
                s.as_mut_ptr(),
                w.as_mut_ptr().cast::<c_void>(),
                w.len(),
            )
        };
        assert_eq!(st, OK, "scope {scope}");
        let (qb, cb): (Vec<bool>, Vec<bool>) = (
            qm.iter().map(|&b| b == 1).collect(),
            cm.iter().map(|&b| b == 1).collect(),
        );
        let rs = match scope {
            MVNMF_SCOPE_ALL => Scope::All,
            MVNMF_SCOPE_LABELED => Scope::Labeled,
            MVNMF_SCOPE_SAME_CLASS => Scope::SameClass,
            MVNMF_SCOPE_OTHER_CLASS => Scope::OtherClass,
            _ => Scope::Masked {
                query: &qb,
                candidate: &cb,
            },
        };
        let rp = KnnParams {
            k,
            block: 7,
            ..KnnParams::default()
        };
        let mut w2 =
            vec![
                0u8;
                similarity::fused_knn_workspace::<f64>((0..3).map(|v| rv.shape(v)), &RK, 3, &rp)
                    .unwrap()
            ];
        assert_eq!(w2.len(), bytes);
        let (mut nb2, mut s2) = (vec![0usize; n * k], vec![0.0; n * k]);
        similarity::fused_knn(
            &rv[..],
            &RK,
            &eta,
            &d.labels,
            3,
            rs,
            &rp,
            &mut nb2,
            &mut s2,
            &mut w2,
        )
        .unwrap();
        assert_eq!(nb, nb2);
        assert_eq!(s, s2);
        if scope != MVNMF_SCOPE_ALL && scope != MVNMF_SCOPE_MASKED {
            for i in (0..n).filter(|&i| d.labels[i] == U) {
                assert!(nb[i * k..(i + 1) * k]
                    .iter()
                    .all(|&j| j == MVNMF_NO_NEIGHBOR));
            }
        }
    }
    // Class pairs.
    let p = mvnmf_fused_knn_params {
        k: 3,
        scope: MVNMF_SCOPE_ALL,
        block: 0,
        ..mvnmf_fused_knn_params_default()
    };
    let mut bytes = 0;
    unsafe {
        assert_eq!(
            mvnmf_class_pairs_workspace(cv.as_ptr(), 3, CK.as_ptr(), 3, &p, &mut bytes),
            OK
        );
    }
    let mut w = vec![0u8; bytes];
    let (mut pr, mut s) = (vec![0usize; 2 * 3 * 3], vec![0.0; 9]);
    let st = unsafe {
        mvnmf_class_pairs(
            cv.as_ptr(),
            3,
            CK.as_ptr(),
            eta.as_ptr(),
            d.labels.as_ptr(),
            3,
            &p,
            pr.as_mut_ptr(),
            s.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(st, OK);
    let (mut pr2, mut s2) = (vec![0usize; 18], vec![0.0; 9]);
    let rp = KnnParams {
        k: 3,
        block: 0,
        ..KnnParams::default()
    };
    similarity::class_pairs(
        &rv[..],
        &RK,
        &eta,
        &d.labels,
        3,
        &rp,
        &mut pr2,
        &mut s2,
        &mut w,
    )
    .unwrap();
    assert_eq!((pr, s), (pr2, s2));
}

#[test]
fn knn_argument_errors() {
    let d = data();
    let n = d.labels.len();
    let cv: Vec<mvnmf_view> = d.tv.iter().map(|t| cview(t, false)).collect();
    let eta = [1.0; 3];
    let k = 3;
    let mut w = vec![0u8; 1 << 22];
    let (mut nb, mut s) = (vec![7usize; n * k], vec![7.0; n * k]);
    let call = |kern: &[mvnmf_kernel],
                eta: *const f64,
                labels: *const u32,
                p: &mvnmf_fused_knn_params,
                qm: *const u8,
                nb: *mut usize,
                s: *mut f64,
                w: &mut [u8]| unsafe {
        mvnmf_fused_knn(
            cv.as_ptr(),
            3,
            kern.as_ptr(),
            eta,
            labels,
            3,
            p,
            qm,
            qm,
            nb,
            s,
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    let p = mvnmf_fused_knn_params {
        k,
        scope: MVNMF_SCOPE_ALL,
        block: 0,
        ..mvnmf_fused_knn_params_default()
    };
    // NULL eta, NULL outputs, NULL kernels.
    assert_eq!(
        call(
            &CK,
            null(),
            d.labels.as_ptr(),
            &p,
            null(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::NullPointer
    );
    assert_eq!(
        call(
            &CK,
            eta.as_ptr(),
            d.labels.as_ptr(),
            &p,
            null(),
            null_mut(),
            s.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::NullPointer
    );
    let st = unsafe {
        mvnmf_fused_knn(
            cv.as_ptr(),
            3,
            null(),
            eta.as_ptr(),
            null(),
            0,
            &p,
            null(),
            null(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(st, mvnmf_status::NullPointer);
    // Unknown kernel kind, negative gamma.
    let mut bad = CK;
    bad[2].kind = 9;
    assert_eq!(
        call(
            &bad,
            eta.as_ptr(),
            d.labels.as_ptr(),
            &p,
            null(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::BadParameter
    );
    let mut bad = CK;
    bad[0].gamma = -1.0;
    assert_eq!(
        call(
            &bad,
            eta.as_ptr(),
            d.labels.as_ptr(),
            &p,
            null(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::BadParameter
    );
    // Median kernel without labels: labels needed, NULL (issue 15: one rule).
    assert_eq!(
        call(
            &CK,
            eta.as_ptr(),
            null(),
            &p,
            null(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::NullPointer
    );
    // Unknown scope; masked scope without masks; a mask byte that is not 0/1.
    let ps = mvnmf_fused_knn_params { scope: 17, ..p };
    assert_eq!(
        call(
            &CK,
            eta.as_ptr(),
            d.labels.as_ptr(),
            &ps,
            null(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::BadParameter
    );
    let pm = mvnmf_fused_knn_params {
        scope: MVNMF_SCOPE_MASKED,
        ..p
    };
    assert_eq!(
        call(
            &CK,
            eta.as_ptr(),
            d.labels.as_ptr(),
            &pm,
            null(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::NullPointer
    );
    let mut m = vec![1u8; n];
    m[5] = 2;
    assert_eq!(
        call(
            &CK,
            eta.as_ptr(),
            d.labels.as_ptr(),
            &pm,
            m.as_ptr(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::BadLabel
    );
    // k >= N, bad label, workspace too small.
    let pk = mvnmf_fused_knn_params { k: n, ..p };
    let (mut nbk, mut sk) = (vec![7usize; n * n], vec![7.0; n * n]);
    assert_eq!(
        call(
            &CK,
            eta.as_ptr(),
            d.labels.as_ptr(),
            &pk,
            null(),
            nbk.as_mut_ptr(),
            sk.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::BadParameter
    );
    let mut lab = d.labels.clone();
    lab[0] = 3;
    assert_eq!(
        call(
            &CK,
            eta.as_ptr(),
            lab.as_ptr(),
            &p,
            null(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::BadLabel
    );
    assert_eq!(
        call(
            &CK,
            eta.as_ptr(),
            d.labels.as_ptr(),
            &p,
            null(),
            nb.as_mut_ptr(),
            s.as_mut_ptr(),
            &mut w[..100]
        ),
        mvnmf_status::WorkspaceTooSmall
    );
    assert!(nb.iter().all(|&x| x == 7) && s.iter().all(|&x| x == 7.0));
    // Too few labeled items in a class for the same-class scope.
    let pc = mvnmf_fused_knn_params {
        k: 30,
        scope: MVNMF_SCOPE_SAME_CLASS,
        block: 0,
        ..mvnmf_fused_knn_params_default()
    };
    let (mut nbc, mut sc) = (vec![7usize; n * 30], vec![7.0; n * 30]);
    assert_eq!(
        call(
            &CK,
            eta.as_ptr(),
            d.labels.as_ptr(),
            &pc,
            null(),
            nbc.as_mut_ptr(),
            sc.as_mut_ptr(),
            &mut w
        ),
        mvnmf_status::TooFewLabeled
    );
    // Workspace query needs its output pointer.
    unsafe {
        assert_eq!(
            mvnmf_fused_knn_workspace(cv.as_ptr(), 3, CK.as_ptr(), 3, &p, null_mut()),
            mvnmf_status::NullPointer
        );
    }
}

#[test]
fn mkl_alignment_and_qp_through_the_c_abi() {
    let d = data();
    let cv: Vec<mvnmf_view> = d.tv.iter().map(|t| cview(t, true)).collect();
    let rv: Vec<View<'_, f64>> = d.tv.iter().map(|t| t.csc()).collect();
    let p = mvnmf_mkl_params_default();
    assert_eq!(p.lambda, MklParams::default().lambda);
    let mut bytes = 0;
    unsafe {
        assert_eq!(
            mvnmf_mkl_weights_workspace(cv.as_ptr(), 3, CK.as_ptr(), 3, &p, &mut bytes),
            OK
        );
    }
    let mut w = vec![0u8; bytes];
    let mut eta = [0.0; 3];
    let mut rep = mvnmf_mkl_report::default();
    let st = unsafe {
        mvnmf_mkl_weights(
            cv.as_ptr(),
            3,
            CK.as_ptr(),
            d.labels.as_ptr(),
            3,
            null(),
            eta.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            &mut rep,
        )
    };
    assert_eq!(st, OK);
    let mut eta2 = [0.0; 3];
    let r2 = similarity::mkl_weights(
        &rv[..],
        &RK,
        &d.labels,
        3,
        &MklParams::default(),
        &mut eta2,
        &mut w,
    )
    .unwrap();
    assert_eq!(eta, eta2);
    assert_eq!(
        (rep.loss, rep.support, rep.kkt_residual),
        (r2.loss, r2.support, r2.kkt_residual)
    );
    assert!((eta.iter().sum::<f64>() - 1.0).abs() < 1e-14);
    // NULL labels: MKL needs them.
    let st = unsafe {
        mvnmf_mkl_weights(
            cv.as_ptr(),
            3,
            CK.as_ptr(),
            null(),
            3,
            null(),
            eta.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            null_mut(),
        )
    };
    assert_eq!(st, mvnmf_status::NullPointer);
    let bad = mvnmf_mkl_params {
        lambda: f64::NAN,
        block: 0,
    };
    let st = unsafe {
        mvnmf_mkl_weights(
            cv.as_ptr(),
            3,
            CK.as_ptr(),
            d.labels.as_ptr(),
            3,
            &bad,
            eta.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            null_mut(),
        )
    };
    assert_eq!(st, mvnmf_status::BadParameter);
    // The alignment system, then the QP on it, reproduce the weights.
    unsafe {
        assert_eq!(
            mvnmf_alignment_system_workspace(cv.as_ptr(), 3, CK.as_ptr(), 3, 0, &mut bytes),
            OK
        );
    }
    let mut w = vec![0u8; bytes];
    let (mut g, mut b, mut c) = ([0.0; 9], [0.0; 3], 0.0);
    let st = unsafe {
        mvnmf_alignment_system(
            cv.as_ptr(),
            3,
            CK.as_ptr(),
            d.labels.as_ptr(),
            3,
            0,
            g.as_mut_ptr(),
            b.as_mut_ptr(),
            &mut c,
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(st, OK);
    assert_eq!(c, 3.0);
    let mean = (g[0] + g[4] + g[8]) / 3.0;
    for v in 0..3 {
        g[v * 4] += p.lambda * mean;
    }
    unsafe {
        assert_eq!(mvnmf_simplex_qp_workspace(3, &mut bytes), OK);
    }
    let mut w = vec![0u8; bytes];
    let mut e3 = [0.0; 3];
    let mut qr = mvnmf_qp_report::default();
    let st = unsafe {
        mvnmf_simplex_qp(
            g.as_ptr(),
            b.as_ptr(),
            3,
            e3.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            &mut qr,
        )
    };
    assert_eq!(st, OK);
    for v in 0..3 {
        assert!((e3[v] - eta[v]).abs() < 1e-12);
    }
    assert!((qr.objective + c - rep.loss).abs() < 1e-12);
    let st = unsafe {
        mvnmf_simplex_qp(
            g.as_ptr(),
            b.as_ptr(),
            0,
            e3.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
            null_mut(),
        )
    };
    assert_eq!(st, mvnmf_status::ZeroDimension);
    // Bandwidths.
    unsafe {
        assert_eq!(
            mvnmf_kernel_bandwidths_workspace(cv.as_ptr(), 3, CK.as_ptr(), 3, 0, &mut bytes),
            OK
        );
    }
    let mut w = vec![0u8; bytes];
    let mut gam = [9.0; 3];
    let st = unsafe {
        mvnmf_kernel_bandwidths(
            cv.as_ptr(),
            3,
            CK.as_ptr(),
            d.labels.as_ptr(),
            3,
            0,
            gam.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            w.len(),
        )
    };
    assert_eq!(st, OK);
    assert!((gam[0] * median_sqdist(&d.tv[0], &d.labels) - 1.0).abs() < 1e-12);
    assert_eq!(&gam[1..], &[0.0, 0.0]);
}

#[test]
fn ldge_and_tge_through_the_c_abi() {
    let d = data();
    let n = d.labels.len();
    let cv: Vec<mvnmf_view> =
        d.tv.iter()
            .enumerate()
            .map(|(v, t)| cview(t, v != 0))
            .collect();
    let rv: Vec<View<'_, f64>> =
        d.tv.iter()
            .enumerate()
            .map(|(v, t)| if v != 0 { t.csc() } else { t.dense() })
            .collect();
    let eta = [0.2, 0.3, 0.5];
    for tge in [false, true] {
        for penalty in [MVNMF_PENALTY_CLASS_PAIRS, MVNMF_PENALTY_ITEM_NEIGHBORS] {
            let p = mvnmf_graph_params {
                ka: 3,
                kp: 2,
                penalty,
                sigma: 2.5,
                block: 11,
            };
            let (mut ca, mut cp, mut bytes) = (0, 0, 0);
            unsafe {
                let st = if tge {
                    mvnmf_tge_capacity(n, 3, &p, &mut ca, &mut cp)
                } else {
                    mvnmf_ldge_capacity(n, 3, &p, &mut ca, &mut cp)
                };
                assert_eq!(st, OK);
                let st = if tge {
                    mvnmf_tge_workspace(cv.as_ptr(), 3, CK.as_ptr(), 3, &p, &mut bytes)
                } else {
                    mvnmf_ldge_workspace(cv.as_ptr(), 3, CK.as_ptr(), 3, &p, &mut bytes)
                };
                assert_eq!(st, OK);
            }
            let mut w = vec![0u8; bytes];
            let (mut arp, mut aci, mut aw) = (vec![0usize; n + 1], vec![0usize; ca], vec![0.0; ca]);
            let (mut prp, mut pci, mut pw) = (vec![0usize; n + 1], vec![0usize; cp], vec![0.0; cp]);
            let ab = mvnmf_csr_buffers {
                row_ptr: arp.as_mut_ptr(),
                col_idx: aci.as_mut_ptr(),
                weights: aw.as_mut_ptr(),
                capacity: ca,
            };
            let pb = mvnmf_csr_buffers {
                row_ptr: prp.as_mut_ptr(),
                col_idx: pci.as_mut_ptr(),
                weights: pw.as_mut_ptr(),
                capacity: cp,
            };
            let (mut an, mut pn) = (0, 0);
            let f = if tge { mvnmf_tge } else { mvnmf_ldge };
            let st = unsafe {
                f(
                    cv.as_ptr(),
                    3,
                    CK.as_ptr(),
                    eta.as_ptr(),
                    d.labels.as_ptr(),
                    3,
                    &p,
                    &ab,
                    &pb,
                    &mut an,
                    &mut pn,
                    w.as_mut_ptr().cast(),
                    w.len(),
                )
            };
            assert_eq!(st, OK);
            // The same through the Rust API.
            let rp = GraphParams {
                ka: 3,
                kp: 2,
                penalty: if penalty == MVNMF_PENALTY_CLASS_PAIRS {
                    Penalty::ClassPairs
                } else {
                    Penalty::ItemNeighbors
                },
                sigma: 2.5,
                block: 11,
            };
            let (mut a2, mut a2c, mut a2w) = (vec![0usize; n + 1], vec![0usize; ca], vec![0.0; ca]);
            let (mut p2, mut p2c, mut p2w) = (vec![0usize; n + 1], vec![0usize; cp], vec![0.0; cp]);
            let ao = CsrOut {
                row_ptr: &mut a2,
                col_idx: &mut a2c,
                weights: &mut a2w,
            };
            let po = CsrOut {
                row_ptr: &mut p2,
                col_idx: &mut p2c,
                weights: &mut p2w,
            };
            let nnz = if tge {
                graph::tge(&rv[..], &RK, &eta, &d.labels, 3, &rp, ao, po, &mut w).unwrap()
            } else {
                graph::ldge(&rv[..], &RK, &eta, &d.labels, 3, &rp, ao, po, &mut w).unwrap()
            };
            assert_eq!((an, pn), (nnz.affinity, nnz.penalty));
            assert_eq!((&arp, &aci[..an], &aw[..an]), (&a2, &a2c[..an], &a2w[..an]));
            assert_eq!((&prp, &pci[..pn], &pw[..pn]), (&p2, &p2c[..pn], &p2w[..pn]));
            // Degrees.
            let mut deg = vec![0.0; n];
            let st = unsafe {
                mvnmf_graph_degrees(n, arp.as_ptr(), aci.as_ptr(), aw.as_ptr(), deg.as_mut_ptr())
            };
            assert_eq!(st, OK);
            for j in 0..n {
                let want: f64 = aw[arp[j]..arp[j + 1]].iter().sum();
                assert_eq!(deg[j], want);
            }
            // Capacity one short of the graph: BUFFER_TOO_SHORT, nothing written.
            let mut rp9 = vec![9usize; n + 1];
            let short = mvnmf_csr_buffers {
                row_ptr: rp9.as_mut_ptr(),
                col_idx: aci.as_mut_ptr(),
                weights: aw.as_mut_ptr(),
                capacity: an - 1,
            };
            let st = unsafe {
                f(
                    cv.as_ptr(),
                    3,
                    CK.as_ptr(),
                    eta.as_ptr(),
                    d.labels.as_ptr(),
                    3,
                    &p,
                    &short,
                    &pb,
                    &mut an,
                    &mut pn,
                    w.as_mut_ptr().cast(),
                    w.len(),
                )
            };
            assert_eq!(st, mvnmf_status::BufferTooShort);
            assert!(rp9.iter().all(|&x| x == 9));
            // Unknown penalty, ka = 0, ka >= N, too few in a class, NULL buffers.
            for (bad, code) in [
                (
                    mvnmf_graph_params { penalty: 5, ..p },
                    mvnmf_status::BadParameter,
                ),
                (
                    mvnmf_graph_params { ka: 0, ..p },
                    mvnmf_status::BadParameter,
                ),
                (
                    mvnmf_graph_params { ka: n, ..p },
                    mvnmf_status::BadParameter,
                ),
                (
                    mvnmf_graph_params { ka: 20, ..p },
                    mvnmf_status::TooFewLabeled,
                ),
            ] {
                let st = unsafe {
                    f(
                        cv.as_ptr(),
                        3,
                        CK.as_ptr(),
                        eta.as_ptr(),
                        d.labels.as_ptr(),
                        3,
                        &bad,
                        &ab,
                        &pb,
                        &mut an,
                        &mut pn,
                        w.as_mut_ptr().cast(),
                        w.len(),
                    )
                };
                assert_eq!(st, code);
            }
            let st = unsafe {
                f(
                    cv.as_ptr(),
                    3,
                    CK.as_ptr(),
                    eta.as_ptr(),
                    d.labels.as_ptr(),
                    3,
                    &p,
                    null(),
                    &pb,
                    &mut an,
                    &mut pn,
                    w.as_mut_ptr().cast(),
                    w.len(),
                )
            };
            assert_eq!(st, mvnmf_status::NullPointer);
        }
    }
    // Degrees of an asymmetric graph are refused.
    let (rp, ci, wt) = ([0usize, 1, 1], [1usize], [1.0]);
    let mut deg = [0.0; 2];
    let st =
        unsafe { mvnmf_graph_degrees(2, rp.as_ptr(), ci.as_ptr(), wt.as_ptr(), deg.as_mut_ptr()) };
    assert_eq!(st, mvnmf_status::BadParameter);
    assert_eq!(MVNMF_NO_NEIGHBOR, usize::MAX);
    assert_eq!(MVNMF_NO_NEIGHBOR, similarity::NO_NEIGHBOR);
    let dflt = mvnmf_graph_params_default();
    assert_eq!(
        (dflt.ka, dflt.kp, dflt.penalty, dflt.sigma),
        (5, 3, MVNMF_PENALTY_CLASS_PAIRS, 2.0)
    );
}
