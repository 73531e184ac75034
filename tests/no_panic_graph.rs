//! Regression tests for panics that the link-time proof (scripts/panic_sites.sh,
//! issue 15 item 4) found reachable in a release build from the safe Rust API of
//! the graph layer: each input is refused with an error now.

use mvnmf::graph::{CsrGraph, CsrGraphs, GraphOp};
use mvnmf::{Error, Stack};

/// `n = usize::MAX` with an empty `row_ptr`: `n + 1` wrapped to the length 0,
/// the length check passed and `row_ptr[0]` panicked (index out of bounds).
#[test]
fn csr_graph_new_refuses_an_item_count_that_wraps() {
    let r = CsrGraph::new(usize::MAX, &[], &[], &[]);
    assert_eq!(r.err(), Some(Error::DimensionMismatch));
    // The ordinary refusals are unchanged.
    assert_eq!(
        CsrGraph::new(2, &[0, 1], &[1], &[1.0]).err(),
        Some(Error::DimensionMismatch)
    );
    assert_eq!(
        CsrGraph::new(2, &[0, 2, 2], &[1], &[1.0]).err(),
        Some(Error::BufferTooShort)
    );
    assert_eq!(
        CsrGraph::new(2, &[1, 1, 1], &[1], &[1.0]).err(),
        Some(Error::MalformedCsc)
    );
    assert_eq!(
        CsrGraph::new(usize::MAX, &[0], &[], &[]).err(),
        Some(Error::DimensionMismatch)
    );
    assert_eq!(
        CsrGraph::new(2, &[0, 1, 2], &[1], &[1.0]).err(),
        Some(Error::BufferTooShort)
    );
    assert_eq!(
        CsrGraph::new(2, &[0, 2, 2], &[1, 1], &[1.0, 1.0]).err(),
        Some(Error::MalformedCsc)
    );
    // Not symmetric.
    assert_eq!(
        CsrGraph::new(2, &[0, 1, 2], &[1, 0], &[1.0, 2.0]).err(),
        Some(Error::BadParameter)
    );
    assert!(CsrGraph::new(2, &[0, 1, 2], &[1, 0], &[0.5, 0.5]).is_ok());
}

/// `GraphOp::apply` of CSR graphs with a `v` shorter than `K × N`: it read
/// `v` past its end (a panic); `BufferTooShort` now, as for the dense graph.
#[test]
fn csr_graphs_apply_refuses_a_short_v() {
    let (rp, ci, w) = ([0usize, 1, 2], [1usize, 0], [0.5f64, 0.5]);
    let g = CsrGraph::new(2, &rp, &ci, &w).unwrap();
    let gs = CsrGraphs::new(2, Some(g), None).unwrap();
    let k = 3;
    let mut buf = vec![0u8; GraphOp::<f64>::apply_req(&gs, k).bytes().unwrap()];
    let (mut plus, mut minus) = (vec![0.0; k * 2], vec![0.0; k * 2]);
    let short = vec![1.0; k * 2 - 1];
    let r = gs.apply(&short, k, &mut plus, &mut minus, &mut Stack::new(&mut buf));
    assert_eq!(r.err(), Some(Error::BufferTooShort));
    let v = vec![1.0; k * 2];
    let (ta, tp) = gs
        .apply(&v, k, &mut plus, &mut minus, &mut Stack::new(&mut buf))
        .unwrap();
    // W = [[0, .5], [.5, 0]], v = 1: L v = 0, no penalty graph.
    assert_eq!((ta, tp), (0.0, 0.0));
    assert!(plus.iter().chain(&minus).all(|&x| x == 0.5));
}
