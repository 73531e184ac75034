//! The agreement protocol of the distributed runs (issue 31, E7): a rank
//! whose callback lies — fails after the data moved, returns success without
//! writing its receive buffer, delivers garbage (inconsistent counts, indices
//! out of range) — never leaves another rank waiting in a collective, and the
//! ranks' statuses agree.
//!
//! Ranks are threads; the communicator sums and exchanges in rank order
//! through a barrier, and checks on every call that all ranks make the same
//! call (operation and, for an allreduce, length): a rank in another call
//! than the others is a protocol error (the test fails). One rank lies at
//! one call (or at every call from one on); every call number of an honest
//! run is tried. The harness waits for the ranks with a guard (a rank left
//! waiting in a collective never returns: the guard turns that into a
//! failure instead of a hung test); no time is asserted.
//!
//! Statuses: the liar `CommFailed` and every other rank `PeerFailed`, all
//! leaving after the same call; a lie at the closing agreement (the last
//! call) leaves the liar `CommFailed` and the others with their result (no
//! call follows it); a lie that changes nothing (a receive buffer of zero
//! words left unwritten) leaves every rank `Ok`. A garbage delivery is either
//! caught (as above, or `CommFailed` on every rank when the counts over all
//! ranks do not add up) or, when the garbage is well-formed data, not.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use mvnmf::data::UNLABELED;
use mvnmf::graph::{CsrOut, GraphParams, Penalty};
use mvnmf::models::dist::{self, Comm, DistGraph, ShardRows};
use mvnmf::models::mvsl::MvslParams;
use mvnmf::similarity::{Bandwidth, Kernel};
use mvnmf::{Dense, Error, Real, View};

/// A distributed MvSL fit: [`dist::open`] (agreement and set-up), then the
/// one shallow solver on the shard ([`dist::Shard::fit`]).
#[allow(clippy::too_many_arguments)]
fn dist_fit<T: Real, C: Comm + ?Sized>(
    comm: &mut C,
    views: &[View<'_, T>],
    graph: DistGraph<'_>,
    k: usize,
    params: &MvslParams,
    u: &mut [&mut [T]],
    v: &mut [T],
    w: &mut [u8],
    monitor: Option<mvnmf::Monitor<'_>>,
) -> Result<dist::DistReport, Error> {
    let problem = dist::Problem::Mvsl(params);
    let shard = dist::open(
        comm,
        views,
        graph,
        k,
        problem,
        (&*u, &*v),
        w,
        monitor.is_some(),
    )?;
    shard.fit(views, u, v, monitor)
}

/// How the liar's callback lies.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Lie {
    /// The data move, the callback reports a failure.
    Fails,
    /// As `Fails`, at this call and every later one.
    FailsFromOn,
    /// The data move to the others; the callback reports success without
    /// writing its own result.
    Unwritten,
    /// Success, with every word received `2x + 1` (counts and indices that
    /// no peer sent).
    Garbage,
}

#[derive(Clone, Copy, Debug)]
struct Liar {
    rank: usize,
    call: usize,
    lie: Lie,
}

/// The shared state of the simulated ranks.
struct Hub {
    ranks: usize,
    barrier: Barrier,
    /// Per rank: the operation (0 allreduce, 1 exchange, 2 all-gather) and
    /// the allreduce's length.
    ops: Mutex<Vec<(u8, usize)>>,
    slots: Mutex<Vec<Vec<f64>>>,
    counts: Mutex<Vec<Vec<usize>>>,
    /// The lie changed what the liar received.
    effective: AtomicBool,
}

struct LComm {
    rank: usize,
    hub: Arc<Hub>,
    liar: Option<Liar>,
    calls: usize,
}

impl LComm {
    /// The lie of this call, if this rank lies now.
    fn lie(&mut self) -> Option<Lie> {
        let c = self.calls;
        self.calls += 1;
        match self.liar {
            Some(l) if l.rank == self.rank => match l.lie {
                Lie::FailsFromOn if c >= l.call => Some(l.lie),
                _ if c == l.call => Some(l.lie),
                _ => None,
            },
            _ => None,
        }
    }

    /// Every rank is in the same call: its operation (and length).
    fn same_call(&self, op: u8, len: usize) {
        self.hub.ops.lock().unwrap()[self.rank] = (op, len);
        self.hub.barrier.wait();
        let ops = self.hub.ops.lock().unwrap().clone();
        self.hub.barrier.wait();
        assert!(
            ops.iter().all(|&o| o == ops[0]),
            "the ranks are in different calls: {ops:?}"
        );
    }

    /// Hands `got` (what an honest callback writes) to `out` as the lie says.
    fn deliver(&self, lie: Option<Lie>, got: &[f64], out: &mut [f64]) -> Result<(), Error> {
        match lie {
            None => out.copy_from_slice(got),
            Some(Lie::Fails | Lie::FailsFromOn) => {
                out.copy_from_slice(got);
                self.hub.effective.store(true, Ordering::SeqCst);
                return Err(Error::CommFailed);
            }
            Some(Lie::Unwritten) => {
                if out.iter().zip(got).any(|(a, b)| a.to_bits() != b.to_bits()) {
                    self.hub.effective.store(true, Ordering::SeqCst);
                }
            }
            Some(Lie::Garbage) => {
                for (o, &g) in out.iter_mut().zip(got) {
                    *o = 2.0 * g + 1.0;
                }
                if !out.is_empty() {
                    self.hub.effective.store(true, Ordering::SeqCst);
                }
            }
        }
        Ok(())
    }
}

impl Comm for LComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.hub.ranks
    }
    fn allreduce(&mut self, buf: &mut [f64]) -> Result<(), Error> {
        let lie = self.lie();
        self.same_call(0, buf.len());
        self.hub.slots.lock().unwrap()[self.rank] = buf.to_vec();
        self.hub.barrier.wait();
        let sum: Vec<f64> = {
            let s = self.hub.slots.lock().unwrap();
            (0..buf.len())
                .map(|i| s.iter().fold(0.0, |a, r| a + r[i]))
                .collect()
        };
        self.hub.barrier.wait();
        self.deliver(lie, &sum, buf)
    }
    fn exchange(
        &mut self,
        send: &[f64],
        send_counts: &[usize],
        recv: &mut [f64],
        recv_counts: &[usize],
    ) -> Result<(), Error> {
        let lie = self.lie();
        self.same_call(1, 0);
        self.hub.slots.lock().unwrap()[self.rank] = send.to_vec();
        self.hub.counts.lock().unwrap()[self.rank] = send_counts.to_vec();
        self.hub.barrier.wait();
        let got: Vec<f64> = {
            let (s, c) = (
                self.hub.slots.lock().unwrap(),
                self.hub.counts.lock().unwrap(),
            );
            let mut got = vec![];
            for q in 0..self.hub.ranks {
                let from: usize = c[q][..self.rank].iter().sum();
                let len = c[q][self.rank];
                // The library never asks for other counts than its peers
                // send (they are agreed before an exchange).
                assert_eq!(len, recv_counts[q], "rank {} from {q}", self.rank);
                got.extend_from_slice(&s[q][from..from + len]);
            }
            got
        };
        self.hub.barrier.wait();
        self.deliver(lie, &got, recv)
    }
    fn allgather(&mut self, part: &[f64], counts: &[usize], out: &mut [f64]) -> Result<(), Error> {
        let lie = self.lie();
        self.same_call(2, out.len());
        assert_eq!(counts[self.rank], part.len());
        self.hub.slots.lock().unwrap()[self.rank] = part.to_vec();
        self.hub.barrier.wait();
        let got: Vec<f64> = self.hub.slots.lock().unwrap().concat();
        self.hub.barrier.wait();
        self.deliver(lie, &got, out)
    }
}

/// What a simulated rank runs.
type RankFn<R> = Arc<dyn Fn(usize, &mut LComm) -> R + Send + Sync>;

/// Runs `f(rank, comm)` on `ranks` threads, one of whose callbacks may lie;
/// returns the results and the calls each rank made, and whether the lie
/// changed anything. Panics when a rank does not return (a rank waits in a
/// collective: the guard, not a timing assertion).
fn on_ranks<R: Send + 'static>(
    ranks: usize,
    liar: Option<Liar>,
    f: RankFn<R>,
) -> (Vec<(R, usize)>, bool) {
    let hub = Arc::new(Hub {
        ranks,
        barrier: Barrier::new(ranks),
        ops: Mutex::new(vec![(0, 0); ranks]),
        slots: Mutex::new(vec![vec![]; ranks]),
        counts: Mutex::new(vec![vec![]; ranks]),
        effective: AtomicBool::new(false),
    });
    let (tx, rx) = mpsc::channel();
    for r in 0..ranks {
        let (hub, f, tx) = (hub.clone(), f.clone(), tx.clone());
        std::thread::spawn(move || {
            let mut c = LComm {
                rank: r,
                hub,
                liar,
                calls: 0,
            };
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(r, &mut c)));
            let _ = tx.send((r, out.map(|x| (x, c.calls))));
        });
    }
    let mut out: Vec<Option<(R, usize)>> = (0..ranks).map(|_| None).collect();
    for _ in 0..ranks {
        // A generous guard: a case takes milliseconds.
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok((r, Ok(x))) => out[r] = Some(x),
            Ok((r, Err(_))) => panic!("rank {r} panicked (liar {liar:?})"),
            Err(_) => panic!(
                "a rank never returned: it waits in a collective (liar {liar:?}, returned: {:?})",
                out.iter().map(|x| x.is_some()).collect::<Vec<_>>()
            ),
        }
    }
    let eff = hub.effective.load(Ordering::SeqCst);
    (out.into_iter().map(|x| x.unwrap()).collect(), eff)
}

/// The statuses of one run with a liar: they agree (module docs).
fn check_statuses(st: &[Result<(), Error>], liar: Liar, last: usize, effective: bool) {
    let what = format!("{liar:?} (last call {last}): {st:?}");
    let others = || st.iter().enumerate().filter(|(r, _)| *r != liar.rank);
    let blamed = st[liar.rank] == Err(Error::CommFailed)
        && others().all(|(_, s)| *s == Err(Error::PeerFailed));
    let closing = st[liar.rank] == Err(Error::CommFailed) && others().all(|(_, s)| s.is_ok());
    let all_ok = st.iter().all(|s| s.is_ok());
    let all_failed = st.iter().all(|s| *s == Err(Error::CommFailed));
    match liar.lie {
        Lie::Fails | Lie::FailsFromOn => {
            if liar.call == last {
                assert!(closing, "{what}");
            } else {
                assert!(blamed, "{what}");
            }
        }
        Lie::Unwritten if !effective => assert!(all_ok, "{what}"),
        Lie::Unwritten => {
            if liar.call == last {
                assert!(closing, "{what}");
            } else {
                assert!(blamed, "{what}");
            }
        }
        Lie::Garbage => assert!(
            blamed || closing || all_ok || all_failed,
            "statuses disagree: {what}"
        ),
    }
}

/// Every lie at every call of an honest run of `f` on `ranks` ranks, each
/// rank lying in turn.
fn every_lie<R: Send + 'static>(ranks: usize, f: RankFn<Result<R, Error>>, what: &str) {
    let g: RankFn<Result<(), Error>> = {
        let f = f.clone();
        Arc::new(move |r, c| f(r, c).map(|_| ()))
    };
    let (honest, _) = on_ranks(ranks, None, g.clone());
    let calls = honest[0].1;
    for (s, c) in &honest {
        assert_eq!(*s, Ok(()), "{what}: the honest run");
        assert_eq!(*c, calls, "{what}: every rank makes the same calls");
    }
    let last = calls - 1;
    let mut cases = 0;
    for lie in [Lie::Fails, Lie::FailsFromOn, Lie::Unwritten, Lie::Garbage] {
        for rank in 0..ranks {
            for call in 0..calls {
                let liar = Liar { rank, call, lie };
                let (out, effective) = on_ranks(ranks, Some(liar), g.clone());
                let st: Vec<_> = out.iter().map(|x| x.0).collect();
                check_statuses(&st, liar, last, effective);
                cases += 1;
            }
        }
    }
    println!("{what}: {calls} calls per rank, {cases} lying runs, every rank returned");
}

/// Two views of `n` items (6 and 4 features), positive, deterministic.
fn data(n: usize) -> Vec<(Vec<f64>, usize)> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64 + 0.01
    };
    [6usize, 4]
        .iter()
        .map(|&m| ((0..m * n).map(|_| next()).collect(), m))
        .collect()
}

const N: usize = 30;

/// The cut points of `ranks` shards of `N` items (uneven).
fn cuts(ranks: usize) -> Vec<usize> {
    match ranks {
        2 => vec![0, 13, N],
        _ => vec![0, 9, 20, N],
    }
}

/// Rows `a..b` of a symmetric graph: item `i` linked to the items `i ± d`
/// (mod `N`) for `d` in `ds`.
fn ring(a: usize, b: usize, ds: &[usize]) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let (mut rp, mut ci) = (vec![0], vec![]);
    for i in a..b {
        let mut row: Vec<usize> = ds
            .iter()
            .flat_map(|&d| [(i + d) % N, (i + N - d) % N])
            .collect();
        row.sort();
        row.dedup();
        ci.extend(row);
        rp.push(ci.len());
    }
    let w = vec![1.0; ci.len()];
    (rp, ci, w)
}

#[derive(Clone, Copy, Debug)]
enum G {
    None,
    Sge,
    Csr,
}

/// One rank's distributed fit with this graph (and a monitor that never
/// stops with `Csr`: its votes are calls too), in the scalar `T`.
fn fit_rank<T: Real>(graph: G, ranks: usize, r: usize, comm: &mut LComm) -> Result<(), Error> {
    let views: Vec<(Vec<T>, usize)> = data(N)
        .into_iter()
        .map(|(x, m)| (x.into_iter().map(T::from_f64).collect(), m))
        .collect();
    let c = cuts(ranks);
    let (a, b) = (c[r], c[r + 1]);
    let n_r = b - a;
    let k = 3;
    let owned: Vec<Vec<T>> = views
        .iter()
        .map(|(x, m)| x[a * m..b * m].to_vec())
        .collect();
    let vs: Vec<View<'_, T>> = owned
        .iter()
        .zip(&views)
        .map(|(x, (_, m))| View::Dense(Dense::new(x, *m, n_r, *m).unwrap()))
        .collect();
    let labels: Vec<u32> = (a..b)
        .map(|j| {
            if j % 4 == 0 {
                UNLABELED
            } else {
                (j % 3) as u32
            }
        })
        .collect();
    let aff = ring(a, b, &[1, 2]);
    let pen = ring(a, b, &[N / 2]);
    let g = match graph {
        G::None => DistGraph::None,
        G::Sge => DistGraph::Sge {
            labels: &labels,
            n_classes: 3,
        },
        G::Csr => DistGraph::Csr {
            affinity: Some(ShardRows {
                row_ptr: &aff.0,
                col_idx: &aff.1,
                weights: &aff.2,
            }),
            penalty: Some(ShardRows {
                row_ptr: &pen.0,
                col_idx: &pen.1,
                weights: &pen.2,
            }),
        },
    };
    let p = MvslParams {
        max_iter: 3,
        tol: 0.0,
        beta: if matches!(graph, G::None) { 0.0 } else { 0.5 },
        v_inner: 2,
        ..MvslParams::mvsl()
    };
    let shapes: Vec<_> = vs.iter().map(|x| x.shape()).collect();
    let mut w = vec![0u8; dist::fit_workspace_for::<T>(shapes, &g, k, ranks, &p).unwrap()];
    let mut u: Vec<Vec<T>> = views.iter().map(|(_, m)| vec![T::ZERO; m * k]).collect();
    let mut v = vec![T::ZERO; k * n_r];
    let mut us: Vec<&mut [T]> = u.iter_mut().map(|x| &mut x[..]).collect();
    let mut never = |_: &mvnmf::Progress| std::ops::ControlFlow::Continue(());
    let monitor: Option<mvnmf::Monitor<'_>> = match graph {
        G::Csr => Some(&mut never),
        _ => None,
    };
    dist_fit(
        comm,
        &vs[..],
        g,
        k,
        &p,
        &mut us[..],
        &mut v,
        &mut w,
        monitor,
    )?;
    // OK means finite outputs, whatever a lie delivered (issue 31).
    let finite = |x: &[T]| x.iter().all(|y| y.to_f64().is_finite());
    if !u.iter().all(|x| finite(x)) || !finite(&v) {
        return Err(Error::Internal);
    }
    Ok(())
}

#[test]
fn a_lying_callback_in_the_fit_never_leaves_a_rank_waiting() {
    for (graph, ranks) in [(G::Csr, 2), (G::Csr, 3), (G::Sge, 2), (G::None, 2)] {
        let f: RankFn<Result<(), Error>> =
            Arc::new(move |r, c| fit_rank::<f64>(graph, ranks, r, c));
        every_lie(ranks, f, &format!("fit, {graph:?} graph, {ranks} ranks"));
    }
}

/// The `f32` fit (its sums widened to the callback's `f64` words) under the
/// same lies.
#[test]
fn a_lying_callback_in_the_f32_fit_never_leaves_a_rank_waiting() {
    for (graph, ranks) in [(G::Csr, 3), (G::Sge, 2), (G::None, 2)] {
        let f: RankFn<Result<(), Error>> =
            Arc::new(move |r, c| fit_rank::<f32>(graph, ranks, r, c));
        every_lie(
            ranks,
            f,
            &format!("f32 fit, {graph:?} graph, {ranks} ranks"),
        );
    }
}

/// One rank's `dist::tge` (median bandwidth, class pairs, item neighbours).
fn tge_rank(penalty: Penalty, ranks: usize, r: usize, comm: &mut LComm) -> Result<(), Error> {
    let views = data(N);
    let c = cuts(ranks);
    let (a, b) = (c[r], c[r + 1]);
    let n_r = b - a;
    let owned: Vec<Vec<f64>> = views
        .iter()
        .map(|(x, m)| x[a * m..b * m].to_vec())
        .collect();
    let vs: Vec<View<'_, f64>> = owned
        .iter()
        .zip(&views)
        .map(|(x, (_, m))| View::Dense(Dense::new(x, *m, n_r, *m).unwrap()))
        .collect();
    let labels: Vec<u32> = (0..N)
        .map(|j| {
            if j % 4 == 0 {
                UNLABELED
            } else {
                (j % 3) as u32
            }
        })
        .collect();
    let kernels = [Kernel::Rbf(Bandwidth::Median), Kernel::Linear];
    let eta = [0.5, 0.5];
    let p = GraphParams {
        ka: 3,
        kp: 2,
        penalty,
        block: 8,
        ..GraphParams::default()
    };
    let shapes: Vec<_> = vs.iter().map(|x| x.shape()).collect();
    let wb = dist::tge_workspace(shapes, &kernels[..], N, &labels, 3, ranks, &p).unwrap();
    let mut w = vec![0u8; wb];
    let cap = dist::tge_capacity(N, n_r, 3, &p).unwrap();
    let (mut ra, mut ca, mut wa) = (
        vec![0; n_r + 1],
        vec![0; cap.affinity],
        vec![0.0; cap.affinity],
    );
    let (mut rq, mut cq, mut wq) = (
        vec![0; n_r + 1],
        vec![0; cap.penalty],
        vec![0.0; cap.penalty],
    );
    dist::tge(
        comm,
        &vs[..],
        &kernels[..],
        &eta,
        &labels,
        N,
        3,
        &p,
        CsrOut {
            row_ptr: &mut ra,
            col_idx: &mut ca,
            weights: &mut wa,
        },
        CsrOut {
            row_ptr: &mut rq,
            col_idx: &mut cq,
            weights: &mut wq,
        },
        &mut w,
    )?;
    // OK means this rank's rows are a valid CSR (a lie that passed as data
    // must not leave columns out of range or rows out of order: issue 31,
    // seed 0x17227954); anything else fails the run.
    for (ptr, col, wt) in [(&ra, &ca, &wa), (&rq, &cq, &wq)] {
        let ordered = ptr[0] == 0 && ptr.windows(2).all(|w| w[0] <= w[1]) && ptr[n_r] <= col.len();
        let nnz = if ordered { ptr[n_r] } else { 0 };
        if !ordered
            || col[..nnz].iter().any(|&j| j >= N)
            || wt[..nnz].iter().any(|x| !x.is_finite())
        {
            return Err(Error::Internal);
        }
    }
    Ok(())
}

#[test]
fn a_lying_callback_in_the_graph_build_never_leaves_a_rank_waiting() {
    for (penalty, ranks) in [
        (Penalty::ClassPairs, 2),
        (Penalty::ItemNeighbors, 2),
        (Penalty::ClassPairs, 3),
    ] {
        let f: RankFn<Result<(), Error>> = Arc::new(move |r, c| tge_rank(penalty, ranks, r, c));
        every_lie(ranks, f, &format!("tge, {penalty:?}, {ranks} ranks"));
    }
}

#[test]
fn the_workspace_queries_refuse_zero_ranks() {
    let views = data(N);
    let vs: Vec<View<'_, f64>> = views
        .iter()
        .map(|(x, m)| View::Dense(Dense::new(x, *m, N, *m).unwrap()))
        .collect();
    let shapes: Vec<_> = vs.iter().map(|x| x.shape()).collect();
    let p = MvslParams::mvsl();
    assert_eq!(
        dist::fit_workspace(shapes.clone(), &DistGraph::None, 3, 0, &p),
        Err(Error::BadParameter)
    );
    assert!(dist::fit_workspace(shapes.clone(), &DistGraph::None, 3, 1, &p).is_ok());
    let kernels = [Kernel::Linear, Kernel::Linear];
    let gp = GraphParams::default();
    assert_eq!(
        dist::tge_workspace(shapes.clone(), &kernels[..], N, &[], 0, 0, &gp),
        Err(Error::BadParameter)
    );
    assert!(dist::tge_workspace(shapes, &kernels[..], N, &[], 0, 1, &gp).is_ok());
}

// ---- The C ABI (issue 31, E7 as reported) ----

use mvnmf::ffi::{
    mvnmf_csr_buffers, mvnmf_dist_comm, mvnmf_dist_mvsl_fit, mvnmf_dist_mvsl_fit_workspace,
    mvnmf_dist_tge, mvnmf_dist_tge_capacity, mvnmf_dist_tge_workspace, mvnmf_graph,
    mvnmf_graph_params_default, mvnmf_kernel, mvnmf_mvsl_params_default, mvnmf_report,
    mvnmf_status, mvnmf_view, MVNMF_GRAPH_CSR, MVNMF_KERNEL_RBF, MVNMF_VIEW_DENSE,
};
use std::ffi::c_void;

unsafe extern "C" fn c_allreduce(buf: *mut f64, len: usize, ctx: *mut c_void) -> i32 {
    // SAFETY: `ctx` is the rank's `LComm`, `buf` holds `len` doubles.
    unsafe {
        let c = &mut *(ctx as *mut LComm);
        c.allreduce(std::slice::from_raw_parts_mut(buf, len))
            .map_or(1, |_| 0)
    }
}

unsafe extern "C" fn c_exchange(
    send: *const f64,
    send_counts: *const usize,
    recv: *mut f64,
    recv_counts: *const usize,
    ctx: *mut c_void,
) -> i32 {
    // SAFETY: `ctx` is the rank's `LComm`; the counts have `ranks` entries,
    // the buffers their sums.
    unsafe {
        let c = &mut *(ctx as *mut LComm);
        let p = c.hub.ranks;
        let (sc, rc) = (
            std::slice::from_raw_parts(send_counts, p),
            std::slice::from_raw_parts(recv_counts, p),
        );
        let s = std::slice::from_raw_parts(send, sc.iter().sum());
        let r = std::slice::from_raw_parts_mut(recv, rc.iter().sum());
        c.exchange(s, sc, r, rc).map_or(1, |_| 0)
    }
}

/// The C views of rank `r`'s columns.
fn c_views(owned: &[(Vec<f64>, usize)], n_r: usize) -> Vec<mvnmf_view> {
    owned
        .iter()
        .map(|(x, m)| mvnmf_view {
            kind: MVNMF_VIEW_DENSE,
            rows: *m,
            cols: n_r,
            values: x.as_ptr(),
            col_stride: *m,
            col_ptr: std::ptr::null(),
            row_idx: std::ptr::null(),
        })
        .collect()
}

/// Rank `r`'s columns of the test data on 2 ranks.
fn shard(r: usize) -> (Vec<(Vec<f64>, usize)>, usize, usize) {
    let c = cuts(2);
    let (a, b) = (c[r], c[r + 1]);
    let views = data(N);
    let owned = views
        .iter()
        .map(|(x, m)| (x[a * m..b * m].to_vec(), *m))
        .collect();
    (owned, a, b)
}

/// `mvnmf_dist_mvsl_fit` with the rank's rows of a CSR graph; the report
/// pre-filled with 0xA7 bytes, returned as bytes.
fn c_fit_rank(r: usize, comm: &mut LComm) -> (mvnmf_status, Vec<u8>) {
    let (owned, a, b) = shard(r);
    let n_r = b - a;
    let views = c_views(&owned, n_r);
    let (aff, pen) = (ring(a, b, &[1, 2]), ring(a, b, &[N / 2]));
    let g = mvnmf_graph {
        kind: MVNMF_GRAPH_CSR,
        n: n_r,
        labels: std::ptr::null(),
        n_classes: 0,
        affinity_row_ptr: aff.0.as_ptr(),
        affinity_col_idx: aff.1.as_ptr(),
        affinity_weights: aff.2.as_ptr(),
        penalty_row_ptr: pen.0.as_ptr(),
        penalty_col_idx: pen.1.as_ptr(),
        penalty_weights: pen.2.as_ptr(),
    };
    let mut p = mvnmf_mvsl_params_default();
    p.max_iter = 3;
    let k = 3;
    let cc = mvnmf_dist_comm {
        allreduce: Some(c_allreduce),
        exchange: Some(c_exchange),
        ctx: (comm as *mut LComm).cast(),
        rank: r,
        n_ranks: 2,
        allgather: None,
    };
    let mut u: Vec<Vec<f64>> = owned.iter().map(|(_, m)| vec![0.0; m * k]).collect();
    let up: Vec<*mut f64> = u.iter_mut().map(|x| x.as_mut_ptr()).collect();
    let mut v = vec![0.0; k * n_r];
    let mut rep = [0xA7u8; std::mem::size_of::<mvnmf_report>()];
    // SAFETY: valid descriptors and buffers of the documented sizes.
    let st = unsafe {
        let mut wb = 0;
        assert_eq!(
            mvnmf_dist_mvsl_fit_workspace(views.as_ptr(), 2, &g, k, 2, &p, &mut wb),
            mvnmf_status::Ok
        );
        assert_eq!(
            mvnmf_dist_mvsl_fit_workspace(views.as_ptr(), 2, &g, k, 0, &p, &mut wb),
            mvnmf_status::BadParameter
        );
        let mut w = vec![0u8; wb];
        mvnmf_dist_mvsl_fit(
            &cc,
            views.as_ptr(),
            2,
            &g,
            k,
            &p,
            up.as_ptr(),
            v.as_mut_ptr(),
            w.as_mut_ptr().cast(),
            wb,
            None,
            std::ptr::null_mut(),
            rep.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        )
    };
    (st, rep.to_vec())
}

/// `mvnmf_dist_tge` on the rank's columns (median bandwidth, no penalty).
fn c_tge_rank(r: usize, comm: &mut LComm) -> mvnmf_status {
    let (owned, a, b) = shard(r);
    let n_r = b - a;
    let views = c_views(&owned, n_r);
    let labels: Vec<u32> = (0..N)
        .map(|j| {
            if j % 4 == 0 {
                UNLABELED
            } else {
                (j % 3) as u32
            }
        })
        .collect();
    let kern = [mvnmf_kernel {
        kind: MVNMF_KERNEL_RBF,
        gamma: 0.0,
    }; 2];
    let eta = [0.5, 0.5];
    let mut gp = mvnmf_graph_params_default();
    gp.block = 8;
    let cc = mvnmf_dist_comm {
        allreduce: Some(c_allreduce),
        exchange: Some(c_exchange),
        ctx: (comm as *mut LComm).cast(),
        rank: r,
        n_ranks: 2,
        allgather: None,
    };
    // SAFETY: valid descriptors and buffers of the documented sizes.
    unsafe {
        let (mut ca, mut cq, mut wb) = (0, 0, 0);
        assert_eq!(
            mvnmf_dist_tge_capacity(N, n_r, 3, &gp, &mut ca, &mut cq),
            mvnmf_status::Ok
        );
        let ws = |ranks, wb: &mut usize| {
            mvnmf_dist_tge_workspace(
                views.as_ptr(),
                2,
                kern.as_ptr(),
                labels.as_ptr(),
                N,
                3,
                ranks,
                &gp,
                wb,
            )
        };
        assert_eq!(ws(0, &mut wb), mvnmf_status::BadParameter);
        assert_eq!(ws(2, &mut wb), mvnmf_status::Ok);
        let (mut ra, mut ci, mut wa) = (vec![0; n_r + 1], vec![0; ca], vec![0.0; ca]);
        let (mut rq, mut cp, mut wq) = (vec![0; n_r + 1], vec![0; cq], vec![0.0; cq]);
        let ab = mvnmf_csr_buffers {
            row_ptr: ra.as_mut_ptr(),
            col_idx: ci.as_mut_ptr(),
            weights: wa.as_mut_ptr(),
            capacity: ca,
        };
        let pb = mvnmf_csr_buffers {
            row_ptr: rq.as_mut_ptr(),
            col_idx: cp.as_mut_ptr(),
            weights: wq.as_mut_ptr(),
            capacity: cq,
        };
        let (mut an, mut pn) = (0, 0);
        let mut w = vec![0u8; wb];
        mvnmf_dist_tge(
            &cc,
            views.as_ptr(),
            2,
            kern.as_ptr(),
            eta.as_ptr(),
            labels.as_ptr(),
            N,
            3,
            &gp,
            &ab,
            &pb,
            &mut an,
            &mut pn,
            w.as_mut_ptr().cast(),
            wb,
            std::ptr::null_mut(),
        )
    }
}

#[test]
fn c_abi_an_exchange_that_returns_0_unwritten_fails_every_rank_alike() {
    // The fit: the exchanges are the halo plan's index lists and the halo of
    // each V-step; the graph build: the edge counts and the edges.
    let fit: RankFn<(mvnmf_status, Vec<u8>)> = Arc::new(c_fit_rank);
    let (honest, _) = on_ranks(2, None, fit.clone());
    let pad = std::mem::offset_of!(mvnmf_report, dead_views) + 4;
    for ((st, rep), _) in &honest {
        assert_eq!(*st, mvnmf_status::Ok);
        // The 4 padding bytes after `dead_views` are written (zero).
        assert_eq!(&rep[pad..pad + 4], &[0, 0, 0, 0]);
    }
    let tge: RankFn<mvnmf_status> = Arc::new(c_tge_rank);
    let (honest, _) = on_ranks(2, None, tge.clone());
    assert!(honest.iter().all(|x| x.0 == mvnmf_status::Ok));
    let exchanges = |calls: usize, f: &dyn Fn(Liar) -> (Vec<mvnmf_status>, bool)| {
        let mut seen = 0;
        for call in 0..calls {
            for rank in 0..2 {
                let liar = Liar {
                    rank,
                    call,
                    lie: Lie::Unwritten,
                };
                let (st, effective) = f(liar);
                if !effective {
                    assert!(
                        st.iter().all(|&s| s == mvnmf_status::Ok),
                        "{liar:?}: {st:?}"
                    );
                    continue;
                }
                seen += 1;
                for (r, &s) in st.iter().enumerate() {
                    let want = if r == rank {
                        mvnmf_status::CommFailed
                    } else {
                        mvnmf_status::PeerFailed
                    };
                    assert_eq!(s, want, "{liar:?}: {st:?}");
                }
            }
        }
        seen
    };
    let calls = honest[0].1;
    let n = exchanges(calls - 1, &|l| {
        let (o, e) = on_ranks(2, Some(l), tge.clone());
        (o.iter().map(|x| x.0).collect(), e)
    });
    assert!(n > 0);
    let (h, _) = on_ranks(2, None, fit.clone());
    let n = exchanges(h[0].1 - 1, &|l| {
        let (o, e) = on_ranks(2, Some(l), fit.clone());
        (o.iter().map(|x| x.0 .0).collect(), e)
    });
    assert!(n > 0);
}
