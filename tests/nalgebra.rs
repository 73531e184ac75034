//! The `nalgebra` feature (src/interop.rs; issue 16, item 6): nalgebra
//! matrices as views and factors without copies.
//!
//! * A `DMatrix`, an `SMatrix` and a column of a `DMatrix` give views that
//!   point into the matrix's storage (no copy) and fits bitwise equal to the
//!   fits on the same numbers as plain slices.
//! * A row block of a stacked matrix is a strided view: its fit equals the fit
//!   of the same rows copied out, bitwise.
//! * Factors written into `DMatrix`es (joint NMF, MvSL) equal the slice fits
//!   bitwise; `check_factors` refuses a transposed factor that a length check
//!   cannot see; bad blocks are refused.

mod common;

use common::*;
use mvnmf::graph::Sge;
use mvnmf::interop::{block, check_factors, view};
use mvnmf::models::mvsl::{self, MvslParams};
use mvnmf::models::nmf::{self, NmfParams};
use mvnmf::{Dense, Error, View};
use nalgebra::{DMatrix, SMatrix};

fn params() -> NmfParams {
    NmfParams {
        max_iter: 30,
        tol: 0.0,
        seed: 5,
        ..NmfParams::default()
    }
}

/// Joint NMF of `views` into slices: (U's, V).
fn fit_slices(views: &[View<'_, f64>], k: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
    let n = views[0].cols();
    let p = params();
    let mut us: Vec<Vec<f64>> = views.iter().map(|x| vec![0.0; x.rows() * k]).collect();
    let mut v = vec![0.0; k * n];
    let mut w =
        vec![0u8; nmf::joint_fit_workspace::<f64>(views.iter().map(|x| x.shape()), k, &p).unwrap()];
    let mut refs: Vec<&mut [f64]> = us.iter_mut().map(|u| &mut u[..]).collect();
    nmf::joint_fit(views, k, &p, &mut refs[..], &mut v, &mut w, None).unwrap();
    (us, v)
}

#[test]
fn matrices_are_views_without_copies_and_fit_like_slices() {
    let (m, n, k) = (9, 14, 3);
    let x = random_matrix(m, n, 1.0, 21);
    let dm = DMatrix::from_column_slice(m, n, &x);
    let xv = view(&dm).unwrap();
    assert_eq!((xv.rows(), xv.cols()), (m, n));
    // The view reads the matrix's own storage.
    let View::Dense(d) = xv else {
        panic!("a dense view")
    };
    assert_eq!(d.col(0).as_ptr(), dm.as_slice().as_ptr());
    let plain = View::from(Dense::new(&x, m, n, m).unwrap());
    assert_eq!(fit_slices(&[xv], k), fit_slices(&[plain], k));

    // A statically sized matrix and a view of whole columns.
    let sm = SMatrix::<f64, 4, 6>::from_column_slice(&x[..24]);
    let small = View::from(Dense::new(&x[..24], 4, 6, 4).unwrap());
    assert_eq!(
        fit_slices(&[view(&sm).unwrap()], 2),
        fit_slices(&[small], 2)
    );
    // A column view (contiguous in nalgebra's types) and a range of columns
    // (not, for a DMatrix: through `block`).
    let col = dm.column(2);
    let cv = view(&col).unwrap();
    let View::Dense(c) = cv else {
        panic!("a column view is a dense view")
    };
    assert_eq!(
        (c.col(0).as_ptr(), cv.rows(), cv.cols()),
        (dm.column(2).as_ptr(), m, 1)
    );
    let bv = block(&dm, 0..m, 2..9).unwrap();
    let View::Dense(c) = bv else {
        panic!("a dense view")
    };
    assert_eq!((c.col(0).as_ptr(), bv.cols()), (dm.column(2).as_ptr(), 7));
}

#[test]
fn a_row_block_is_a_strided_view_of_the_stack() {
    // Two views stored stacked in one (m1 + m2) × n matrix.
    let (m1, m2, n, k) = (7, 5, 12, 2);
    let x = random_matrix(m1 + m2, n, 1.0, 33);
    let stack = DMatrix::from_column_slice(m1 + m2, n, &x);
    let (a, b) = (
        block(&stack, 0..m1, 0..n).unwrap(),
        block(&stack, m1..m1 + m2, 0..n).unwrap(),
    );
    let top: Vec<f64> = stack.rows(0, m1).iter().copied().collect();
    let bottom: Vec<f64> = stack.rows(m1, m2).iter().copied().collect();
    let copies = [
        View::from(Dense::new(&top, m1, n, m1).unwrap()),
        View::from(Dense::new(&bottom, m2, n, m2).unwrap()),
    ];
    assert_eq!(fit_slices(&[a, b], k), fit_slices(&copies, k));
    // Out of range, empty.
    assert_eq!(
        block(&stack, 0..m1 + m2 + 1, 0..n).err(),
        Some(Error::DimensionMismatch)
    );
    #[allow(clippy::reversed_empty_ranges)] // a reversed range is refused
    let reversed = block(&stack, 0..m1, 3..2);
    assert_eq!(reversed.err(), Some(Error::DimensionMismatch));
    assert_eq!(block(&stack, 4..4, 0..n).err(), Some(Error::ZeroDimension));
}

#[test]
fn factors_are_written_into_matrices() {
    let (m1, m2, n, k) = (8, 6, 15, 3);
    let x1 = random_matrix(m1, n, 1.0, 41);
    let x2 = random_matrix(m2, n, 1.0, 42);
    let (d1, d2) = (
        DMatrix::from_column_slice(m1, n, &x1),
        DMatrix::from_column_slice(m2, n, &x2),
    );
    let views = [view(&d1).unwrap(), view(&d2).unwrap()];
    let (mut u1, mut u2) = (DMatrix::<f64>::zeros(m1, k), DMatrix::<f64>::zeros(m2, k));
    let mut v = DMatrix::<f64>::zeros(k, n);
    check_factors(&views[..], k, &[&u1, &u2], &v).unwrap();

    // Joint NMF.
    let p = params();
    let mut w =
        vec![0u8; nmf::joint_fit_workspace::<f64>(views.iter().map(|x| x.shape()), k, &p).unwrap()];
    nmf::joint_fit(
        &views,
        k,
        &p,
        &mut [&mut u1, &mut u2][..],
        v.as_mut_slice(),
        &mut w,
        None,
    )
    .unwrap();
    let (us, vs) = fit_slices(&views, k);
    assert_eq!(
        (u1.as_slice(), u2.as_slice(), v.as_slice()),
        (&us[0][..], &us[1][..], &vs[..])
    );

    // MvSL with the SGE graph, into matrices and into slices.
    let labels: Vec<u32> = (0..n).map(|j| (j % 3) as u32).collect();
    let sge = Sge::new(&labels, 3).unwrap();
    let mp = MvslParams {
        max_iter: 20,
        tol: 0.0,
        alpha: 0.3,
        ..MvslParams::mvsl()
    };
    let mut w = vec![
        0u8;
        mvsl::fit_workspace::<f64, _>(views.iter().map(|x| x.shape()), &sge, k, &mp)
            .unwrap()
    ];
    mvsl::fit(
        &views,
        &sge,
        k,
        &mp,
        &mut [&mut u1, &mut u2][..],
        v.as_mut_slice(),
        &mut w,
        None,
    )
    .unwrap();
    let (mut s1, mut s2, mut sv) = (vec![0.0; m1 * k], vec![0.0; m2 * k], vec![0.0; k * n]);
    mvsl::fit(
        &views,
        &sge,
        k,
        &mp,
        &mut [&mut s1[..], &mut s2[..]][..],
        &mut sv,
        &mut w,
        None,
    )
    .unwrap();
    assert_eq!(
        (u1.as_slice(), u2.as_slice(), v.as_slice()),
        (&s1[..], &s2[..], &sv[..])
    );

    // Shapes a length check cannot see: a transposed basis, a transposed V.
    let ut = DMatrix::<f64>::zeros(k, m1);
    assert_eq!(
        check_factors(&views[..], k, &[&ut, &u2], &v),
        Err(Error::DimensionMismatch)
    );
    let vt = DMatrix::<f64>::zeros(n, k);
    assert_eq!(
        check_factors(&views[..], k, &[&u1, &u2], &vt),
        Err(Error::DimensionMismatch)
    );
    assert_eq!(
        check_factors(&views[..], k, &[&u1], &v),
        Err(Error::DimensionMismatch)
    );
}
