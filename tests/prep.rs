//! Per-view preprocessing (`mvnmf::prep`, C: `mvnmf_prepare_view`): the shift
//! makes each feature's minimum 0 and leaves nonnegative features alone, the
//! normalisation gives ‖X‖²_F = N, bad input leaves the buffer untouched.

use mvnmf::ffi::{
    mvnmf_prep_params, mvnmf_prep_params_default, mvnmf_prep_report, mvnmf_prepare_view,
    mvnmf_status,
};
use mvnmf::prep::{prepare_view, PrepParams};
use mvnmf::Error;

/// A 3 × 4 view (column-major): row 0 nonnegative, row 1 with negatives
/// (minimum −2), row 2 nonnegative with a zero.
fn view() -> Vec<f64> {
    vec![
        1.0, -2.0, 0.0, //
        2.0, 1.0, 3.0, //
        0.5, -1.0, 4.0, //
        3.0, 0.0, 1.0,
    ]
}

#[test]
fn shift_makes_each_negative_feature_start_at_zero_and_keeps_the_others() {
    let mut x = view();
    let p = PrepParams {
        shift: true,
        normalize: false,
    };
    let r = prepare_view(&mut x, 3, 4, &p).unwrap();
    assert_eq!(r.min, -2.0);
    assert_eq!(r.shifted, 1);
    assert_eq!(r.scale, 1.0);
    let raw = view();
    for j in 0..4 {
        assert_eq!(x[3 * j], raw[3 * j], "row 0 untouched");
        assert_eq!(
            x[3 * j + 1],
            raw[3 * j + 1] + 2.0,
            "row 1 shifted by its minimum"
        );
        assert_eq!(x[3 * j + 2], raw[3 * j + 2], "row 2 untouched");
    }
    assert!(x.iter().all(|&v| v >= 0.0));
    assert_eq!(
        (0..4).map(|j| x[3 * j + 1]).fold(f64::INFINITY, f64::min),
        0.0
    );
}

#[test]
fn normalisation_gives_squared_norm_n_and_keeps_ratios() {
    for n in [1usize, 4, 37] {
        let mut x: Vec<f64> = (0..5 * n)
            .map(|t| 1e4 * ((t * 7 % 11) as f64 + 0.5))
            .collect();
        let raw = x.clone();
        let r = prepare_view(&mut x, 5, n, &PrepParams::default()).unwrap();
        let ss: f64 = x.iter().map(|v| v * v).sum();
        assert!(
            (ss - n as f64).abs() <= 1e-12 * n as f64,
            "‖X‖² = {ss}, N = {n}"
        );
        assert_eq!(r.shifted, 0);
        for (a, b) in x.iter().zip(&raw) {
            assert_eq!(*a, b * r.scale);
        }
    }
}

#[test]
fn shift_then_normalise_is_the_straightforward_loops_bit_for_bit() {
    let mut x = view();
    let r = prepare_view(
        &mut x,
        3,
        4,
        &PrepParams {
            shift: true,
            normalize: true,
        },
    )
    .unwrap();
    let mut y = view();
    for j in 0..4 {
        y[3 * j + 1] -= -2.0;
    }
    let mut ss = 0.0;
    for v in &y {
        ss += v * v;
    }
    let s = (4.0 / ss).sqrt();
    assert_eq!(r.scale, s);
    for (a, b) in x.iter().zip(&y) {
        assert_eq!(*a, b * s);
    }
}

#[test]
fn bad_input_gives_its_error_and_leaves_the_view_untouched() {
    let no_shift = PrepParams::default();
    let shift = PrepParams {
        shift: true,
        normalize: true,
    };
    let cases: Vec<(Vec<f64>, usize, usize, PrepParams, Error)> = vec![
        (view(), 3, 4, no_shift, Error::NegativeInput),
        (
            {
                let mut v = view();
                v[7] = f64::NAN;
                v
            },
            3,
            4,
            shift,
            Error::NonFiniteInput,
        ),
        (
            {
                let mut v = view();
                v[11] = f64::INFINITY;
                v
            },
            3,
            4,
            shift,
            Error::NonFiniteInput,
        ),
        (view(), 3, 5, shift, Error::DimensionMismatch),
        (view(), 0, 4, shift, Error::ZeroDimension),
        (vec![0.0; 6], 2, 3, no_shift, Error::BadParameter),
        // Constant negative rows are all zero after the shift.
        (vec![-1.0, 0.0, -1.0, 0.0], 2, 2, shift, Error::BadParameter),
        (vec![1e-200, 0.0], 1, 2, no_shift, Error::NonFiniteInput),
        (vec![1e200, 1e200], 1, 2, no_shift, Error::NonFiniteInput),
    ];
    for (mut x, rows, cols, p, want) in cases {
        let before = x.clone();
        assert_eq!(prepare_view(&mut x, rows, cols, &p), Err(want));
        assert_eq!(
            x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            before.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
    // Without normalisation an all-zero view is fine.
    let mut z = vec![0.0; 6];
    let p = PrepParams {
        shift: false,
        normalize: false,
    };
    assert_eq!(prepare_view(&mut z, 2, 3, &p).unwrap().scale, 1.0);
}

#[test]
fn c_abi_matches_the_rust_function_and_checks_its_arguments() {
    let mut x = view();
    let mut y = view();
    let mut rep = mvnmf_prep_report::default();
    let p = mvnmf_prep_params {
        shift: 1,
        normalize: 1,
    };
    let s = unsafe { mvnmf_prepare_view(3, 4, x.as_mut_ptr(), &p, &mut rep) };
    assert_eq!(s, mvnmf_status::Ok);
    let r = prepare_view(
        &mut y,
        3,
        4,
        &PrepParams {
            shift: true,
            normalize: true,
        },
    )
    .unwrap();
    assert_eq!(
        (rep.min, rep.shifted, rep.scale),
        (r.min, r.shifted, r.scale)
    );
    assert_eq!(x, y);
    // NULL params = the defaults: no shift, so negative values are refused.
    let d = mvnmf_prep_params_default();
    assert_eq!((d.shift, d.normalize), (0, 1));
    let mut x = view();
    rep.shifted = 4242;
    let s = unsafe { mvnmf_prepare_view(3, 4, x.as_mut_ptr(), core::ptr::null(), &mut rep) };
    assert_eq!(s, mvnmf_status::NegativeInput);
    assert_eq!((x, rep.shifted), (view(), 4242));
    let bad = mvnmf_prep_params {
        shift: 2,
        normalize: 1,
    };
    let mut x = view();
    let s = unsafe { mvnmf_prepare_view(3, 4, x.as_mut_ptr(), &bad, core::ptr::null_mut()) };
    assert_eq!((s, &x), (mvnmf_status::BadParameter, &view()));
    let s = unsafe { mvnmf_prepare_view(3, 4, core::ptr::null_mut(), &p, core::ptr::null_mut()) };
    assert_eq!(s, mvnmf_status::NullPointer);
    let s = unsafe { mvnmf_prepare_view(usize::MAX, 4, x.as_mut_ptr(), &p, core::ptr::null_mut()) };
    assert_eq!(s, mvnmf_status::SizeOverflow);
}
