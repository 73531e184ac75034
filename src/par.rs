//! Parallel work on a fixed partition: the results never depend on the number
//! of threads (issue 18, item 2).
//!
//! A parallel region splits its work into **tasks whose number and extent
//! depend only on the problem's shape** ([`tasks_for`]), never on how many
//! threads run them, and each task's arithmetic is the same whichever thread
//! runs it and in whatever order; a reduction over tasks (a split-`K`
//! product) adds the tasks' partial results in task order after all have run.
//! So serial runs, the built-in pool at any size and a host's own pool give
//! the same bits.
//!
//! Who runs the tasks is a [`Parallel`]:
//!
//! * [`Parallel::Serial`] (the default): in order, on the calling thread;
//! * [`Parallel::Threads`] (`std` builds): a built-in pool of that many
//!   threads (rayon; `0` = one per core). Pools are made on first use and
//!   kept for the process (one per size asked for); without `std` this is
//!   the serial loop. The calling thread takes tasks too, and the workers
//!   keep looking for work (spinning, yielding the core now and then) for
//!   2 ms after each region, so the regions of a running fit find them
//!   awake: a region then costs a few µs instead of a sleeping thread's
//!   wake-up (30–100 µs on a virtual machine). The price: a worker's core
//!   stays busy up to 2 ms after a fit ends;
//! * [`Parallel::Host`]: the caller's own `parallel_for` (a C++ host's TBB or
//!   OpenMP, an embedded system's other cores), which must run every task once
//!   and return when all have finished. The C ABI's `mvnmf_parallel` becomes
//!   this. A host that skips or repeats a task is detected:
//!   [`Error::ParallelFor`], never a wrong result reported as success.
//!
//! Tasks write disjoint parts of an output. To hand them out without `unsafe`,
//! [`Parallel::run_items`] keeps the iterator of those parts (for example
//! `chunks_mut`) behind a spin lock: each task takes the next part and works
//! on it; what a task computes depends only on that part's index, so the order
//! in which tasks take parts does not matter.

use crate::error::Error;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Most tasks one region is split into: divisible by 2, 3, 4 and 6, so that
/// the usual small thread counts get even shares.
pub const MAX_TASKS: usize = 12;

/// Least work (multiply-adds, or element operations) worth one task: a region
/// smaller than two of these runs as one task.
pub const MIN_TASK_WORK: usize = 1 << 20;

/// How many tasks `units` units of `unit_work` operations each are split into:
/// `1..=min(MAX_TASKS, units)`, from the shape alone.
pub fn tasks_for(units: usize, unit_work: usize) -> usize {
    let work = units.saturating_mul(unit_work.max(1));
    (work / MIN_TASK_WORK).clamp(1, MAX_TASKS.min(units.max(1)))
}

/// [`tasks_for`] rounded down to an even count (when it is above one): a
/// pool of two threads, the common small machine, then finishes the region's
/// equal tasks in step instead of waiting on an odd one out. For splits whose
/// parts are summed (a fixed reduction order) and so cannot use many small
/// tasks to even the load.
pub fn even_tasks_for(units: usize, unit_work: usize) -> usize {
    let t = tasks_for(units, unit_work);
    if t > 1 {
        t & !1
    } else {
        t
    }
}

/// `n` split into `tasks` contiguous ranges: the length of all but the last
/// (a multiple of `align`, at least `align`).
pub fn chunk_len(n: usize, tasks: usize, align: usize) -> usize {
    let align = align.max(1);
    let per = n.div_ceil(tasks.max(1)).max(1);
    per.div_ceil(align).saturating_mul(align)
}

/// One task: called with a task number `< n_tasks`.
pub type Task<'a> = &'a (dyn Fn(usize) + Sync);

/// A host's parallel-for (see the module doc): `parallel_for(ctx, n_tasks, task)`
/// must call `task(i)` once for every `i < n_tasks`, on any threads and in any
/// order, and return when all calls have returned. `ctx` is the host's own
/// word (the C ABI keeps a pointer to its `mvnmf_parallel` there).
#[derive(Clone, Copy, Debug)]
pub struct HostPool {
    /// Runs the tasks.
    pub parallel_for: fn(ctx: usize, n_tasks: usize, task: Task<'_>),
    /// Passed back to `parallel_for`.
    pub ctx: usize,
}

/// Same function (by address) and same context.
impl PartialEq for HostPool {
    fn eq(&self, other: &Self) -> bool {
        self.ctx == other.ctx && core::ptr::fn_addr_eq(self.parallel_for, other.parallel_for)
    }
}

impl Eq for HostPool {}

/// Who runs a parallel region's tasks (module doc). The results are the same
/// bits for every choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Parallel {
    /// On the calling thread, in order.
    #[default]
    Serial,
    /// The built-in pool with this many threads (`0`: one per core; `1`:
    /// serial). Serial without `std`.
    Threads(usize),
    /// The host's pool.
    Host(HostPool),
}

impl Parallel {
    /// Does this run tasks on one thread only?
    pub fn is_serial(&self) -> bool {
        match *self {
            Parallel::Serial | Parallel::Threads(1) => true,
            Parallel::Threads(_) => !cfg!(feature = "std"),
            Parallel::Host(_) => false,
        }
    }

    /// Runs `task(i)` for `i < n`; the first error any task returned (tasks
    /// here fail only on an internal inconsistency, so which one is first does
    /// not matter).
    pub fn run(
        &self,
        n: usize,
        task: &(dyn Fn(usize) -> Result<(), Error> + Sync),
    ) -> Result<(), Error> {
        if n <= 1 || self.is_serial() {
            for i in 0..n {
                task(i)?;
            }
            return Ok(());
        }
        let failed = spin::Mutex::new(None);
        let (next, ran) = (AtomicUsize::new(0), AtomicUsize::new(0));
        // The task numbers come from our own counter, not from the pool's
        // argument: a pool that calls twice with the same number and never
        // with another still runs each task once, or fails the count. A task
        // is counted after it returns: one that never returned (a host that
        // swallowed a panic) leaves the count short.
        let body = |_: usize| {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                *failed.lock() = Some(Error::ParallelFor);
                return;
            }
            if let Err(e) = task(i) {
                failed.lock().get_or_insert(e);
            }
            ran.fetch_add(1, Ordering::Release);
        };
        match *self {
            Parallel::Host(h) => (h.parallel_for)(h.ctx, n, &body),
            Parallel::Threads(t) => pool::run(t, n, &body),
            Parallel::Serial => {}
        }
        if let Some(e) = failed.into_inner() {
            return Err(e);
        }
        if ran.load(Ordering::Acquire) != n {
            return Err(Error::ParallelFor);
        }
        Ok(())
    }

    /// Runs `work(item)` for every item of `items` (disjoint parts of an
    /// output, each knowing its place), one task per item.
    ///
    /// Always inlined: the length of a chunked iterator divides by its chunk
    /// size, which the optimiser sees is nonzero only where the iterator is
    /// made (a division-by-zero panic path in an outlined copy).
    #[inline(always)]
    pub fn run_items<I>(
        &self,
        items: I,
        work: &(dyn Fn(I::Item) -> Result<(), Error> + Sync),
    ) -> Result<(), Error>
    where
        I: ExactSizeIterator + Send,
    {
        // `size_hint().0` is the length of an exact-size iterator (`len()`
        // asserts that the upper bound agrees: a panic path).
        let n = items.size_hint().0;
        let items = spin::Mutex::new(items);
        self.run(n, &|_| {
            // The lock is held only to take the next item.
            let next = items.lock().next();
            match next {
                Some(item) => work(item),
                None => Err(Error::ParallelFor),
            }
        })
    }
}

#[cfg(feature = "std")]
mod pool {
    use super::Task;
    use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    use std::boxed::Box;
    use std::sync::{Mutex, OnceLock};
    use std::time::{Duration, Instant};
    use std::vec::Vec;

    /// How long a pool's workers keep looking for work after a region before
    /// they go back to rayon (which puts them to sleep): the gap between two
    /// regions of one iteration is far shorter, so a fit's workers stay awake
    /// from its first region to its end, and stop this long after it. Like
    /// OpenMP's `OMP_WAIT_POLICY`/`GOMP_SPINCOUNT`: waking a sleeping thread
    /// costs 30–70 µs on a virtual machine, and an NMF iteration has about ten
    /// regions of a millisecond or less.
    const WARM: Duration = Duration::from_millis(2);

    /// The longest the calling thread spins for the workers' jobs at the end of
    /// a region before it blocks in rayon (a job that has not started by then
    /// waits for a sleeping worker to wake).
    const JOIN_SPIN: Duration = Duration::from_micros(200);

    /// A built-in pool: rayon's threads, and while a fit runs, the "warm"
    /// loop each of them is in (see [`WARM`]).
    struct Pool {
        rayon: rayon::ThreadPool,
        /// Until when (ns after [`epoch`]) the workers look for work.
        warm_until: AtomicU64,
        /// Workers in the warm loop now.
        warm: AtomicUsize,
    }

    /// The time base of [`Pool::warm_until`].
    fn epoch() -> Instant {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        *EPOCH.get_or_init(Instant::now)
    }

    fn now_ns() -> u64 {
        u64::try_from(epoch().elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    impl Pool {
        /// Keeps the workers looking for work until [`WARM`] from now, and
        /// starts the warm loop on every worker that is not in it.
        fn keep_warm(&'static self) {
            let until = now_ns().saturating_add(WARM.as_nanos() as u64);
            self.warm_until.fetch_max(until, Ordering::Relaxed);
            if self.warm.load(Ordering::Acquire) < self.rayon.current_num_threads() {
                // One loop per worker; a worker already in one leaves the
                // second at once (the count says so).
                self.rayon.spawn_broadcast(move |_| self.warm_loop());
            }
        }

        /// On a worker: runs the pool's jobs as they come (the regions' jobs,
        /// injected by the calling thread) until [`Pool::warm_until`] passes.
        /// Between jobs it spins, and yields the core now and then so that an
        /// oversubscribed machine still runs the calling thread.
        fn warm_loop(&self) {
            if self.warm.fetch_add(1, Ordering::AcqRel) >= self.rayon.current_num_threads() {
                self.warm.fetch_sub(1, Ordering::AcqRel);
                return;
            }
            let mut idle = 0u32;
            loop {
                match rayon::yield_now() {
                    Some(rayon::Yield::Executed) => idle = 0,
                    _ => {
                        idle = idle.wrapping_add(1);
                        if idle.is_multiple_of(64) {
                            if now_ns() > self.warm_until.load(Ordering::Relaxed) {
                                break;
                            }
                            std::thread::yield_now();
                        } else {
                            core::hint::spin_loop();
                        }
                    }
                }
            }
            self.warm.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// One pool per size asked for (the workers besides the calling thread),
    /// made on first use and kept (leaked) for the life of the process: a
    /// pool's threads cost about 0.1 ms to start, too much for every region.
    static POOLS: Mutex<Vec<(usize, &'static Pool)>> = Mutex::new(Vec::new());

    /// The pool of `workers` threads (made on first use).
    fn get(workers: usize) -> Option<&'static Pool> {
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(_, p)) = pools.iter().find(|(t, _)| *t == workers) {
            return Some(p);
        }
        let rayon = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| std::format!("mvnmf-{i}"))
            .build()
            .ok()?;
        let p: &'static Pool = Box::leak(Box::new(Pool {
            rayon,
            warm_until: AtomicU64::new(0),
            warm: AtomicUsize::new(0),
        }));
        pools.push((workers, p));
        Some(p)
    }

    /// Every task on `threads` threads: the calling thread and `threads − 1`
    /// pool workers take task numbers from one counter until none is left
    /// (the caller starts at once; a worker that wakes late finds less to
    /// do). Which thread runs a task does not change what the task computes.
    pub(super) fn run(threads: usize, n: usize, task: Task<'_>) {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        let next = AtomicUsize::new(0);
        let drain = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            task(i);
        };
        let helpers = threads.min(n).saturating_sub(1);
        let pool = match helpers {
            0 => None,
            h => get(h),
        };
        let Some(pool) = pool else {
            return drain();
        };
        pool.keep_warm();
        let done = AtomicUsize::new(0);
        pool.rayon.in_place_scope(|s| {
            for _ in 0..helpers {
                s.spawn(|_| {
                    drain();
                    done.fetch_add(1, Ordering::Release);
                });
            }
            drain();
            // Wait for the helpers' jobs by spinning (a warm worker finishes
            // within microseconds) before rayon's wait blocks this thread,
            // whose wake-up would cost as much as a worker's.
            // (Not on one of the pool's own workers — a nested region —
            // whose unstarted job may sit in its own queue, run by that wait.)
            let nested = pool.rayon.current_thread_index().is_some();
            // The clock is read every 64 rounds, not every round (a profile
            // showed the reads).
            let t0 = Instant::now();
            let mut spins = 0u32;
            while !nested && done.load(Ordering::Acquire) < helpers {
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(64) && t0.elapsed() >= JOIN_SPIN {
                    break;
                }
                core::hint::spin_loop();
            }
        });
    }
}

#[cfg(not(feature = "std"))]
mod pool {
    use super::Task;

    /// Without `std` there is no built-in pool: in order.
    pub(super) fn run(_threads: usize, n: usize, task: Task<'_>) {
        (0..n).for_each(task);
    }
}

/// The rows `r0..r1` of a column-major `m × k` matrix (`k ≤ 64`) as `k`
/// mutable column pieces.
pub(crate) struct RowBlock<'a, T> {
    /// The first row.
    pub r0: usize,
    /// Column `t`'s rows `r0..r0 + len` (the first `k` of the 64 are used).
    pub cols: [&'a mut [T]; 64],
}

/// An iterator with the length its caller counted (for
/// [`Parallel::run_items`]): `Counted::new(parts.chunks_mut(len).zip(slots), n)`.
/// A chunked iterator's own length divides by its chunk size; when the
/// optimiser does not inline that `size_hint` next to the chunk size's
/// check, a division-by-zero panic path survives (the link-time proof finds
/// it). Ends after `n` items or with the inner iterator, whichever comes
/// first (a short inner iterator makes `run_items` fail, never panic).
pub(crate) struct Counted<I> {
    inner: I,
    left: usize,
}

impl<I> Counted<I> {
    pub(crate) fn new(inner: I, n: usize) -> Self {
        Counted { inner, left: n }
    }
}

impl<I: Iterator> Iterator for Counted<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<I: Iterator> ExactSizeIterator for Counted<I> {}

/// `s` cut into consecutive pieces of `len` elements (the last shorter; a
/// `len` of 0 is taken as 1): `chunks_mut` without its division, whose
/// zero-size panic path the link-time proof finds in outlined copies of
/// `zip` over chunk iterators (`scripts/panic_sites.sh`).
pub(crate) fn pieces_mut<T>(s: &mut [T], len: usize) -> impl Iterator<Item = &mut [T]> {
    let mut rest = s;
    core::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let n = len.max(1).min(rest.len());
        let (a, b) = core::mem::take(&mut rest).split_at_mut_checked(n)?;
        rest = b;
        Some(a)
    })
}

/// [`pieces_mut`] of a shared slice (`chunks` without its division).
pub(crate) fn pieces<T>(s: &[T], len: usize) -> impl Iterator<Item = &[T]> {
    let mut rest = s;
    core::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (a, b) = rest.split_at_checked(len.max(1).min(rest.len()))?;
        rest = b;
        Some(a)
    })
}

/// Splits a column-major `m × k` matrix (`k ≤ 64`) into blocks of `rows` rows,
/// each handed out as [`RowBlock`] (for [`Parallel::run_items`]).
pub(crate) struct RowBlocks<'a, T> {
    cols: [Option<core::slice::ChunksMut<'a, T>>; 64],
    k: usize,
    rows: usize,
    next: usize,
    left: usize,
}

impl<'a, T> RowBlocks<'a, T> {
    /// `None` unless `1 ≤ k ≤ 64`, `rows ≥ 1` and `data.len() ≥ m·k`.
    pub(crate) fn new(data: &'a mut [T], m: usize, k: usize, rows: usize) -> Option<Self> {
        if k == 0 || k > 64 || rows == 0 || m == 0 || data.len() < m.checked_mul(k)? {
            return None;
        }
        let mut it = data.get_mut(..m * k)?.chunks_mut(m);
        let cols = core::array::from_fn(|t| {
            if t < k {
                it.next().map(|c| c.chunks_mut(rows))
            } else {
                None
            }
        });
        Some(RowBlocks {
            cols,
            k,
            rows,
            next: 0,
            left: m.div_ceil(rows),
        })
    }
}

impl<'a, T> Iterator for RowBlocks<'a, T> {
    type Item = RowBlock<'a, T>;

    fn next(&mut self) -> Option<RowBlock<'a, T>> {
        if self.left == 0 {
            return None;
        }
        let mut cols: [&'a mut [T]; 64] = core::array::from_fn(|_| <&mut [T]>::default());
        for (dst, src) in cols.iter_mut().zip(self.cols.iter_mut().take(self.k)) {
            *dst = src.as_mut()?.next()?;
        }
        let r0 = self.next * self.rows;
        self.next += 1;
        self.left -= 1;
        Some(RowBlock { r0, cols })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> ExactSizeIterator for RowBlocks<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn partition_depends_on_shape_only() {
        assert_eq!(tasks_for(10, 1), 1);
        assert_eq!(tasks_for(1 << 20, 1 << 10), MAX_TASKS);
        assert_eq!(tasks_for(3, 1 << 30), 3);
        let c = chunk_len(1000, 12, 8);
        assert_eq!(c % 8, 0);
        assert!(c * 12 >= 1000 && (c - 8) * 12 < 1000);
    }

    #[test]
    fn every_item_once_whatever_the_pool() {
        for par in [
            Parallel::Serial,
            Parallel::Threads(1),
            Parallel::Threads(2),
            Parallel::Threads(3),
        ] {
            let mut data: Vec<u32> = (0..100).collect();
            par.run_items(data.chunks_mut(7).enumerate(), &|(i, c)| {
                c.iter_mut().for_each(|x| *x += 1000 * i as u32);
                Ok(())
            })
            .unwrap();
            for (j, &x) in data.iter().enumerate() {
                assert_eq!(x, j as u32 + 1000 * (j / 7) as u32);
            }
        }
    }

    #[test]
    fn nested_regions_on_the_built_in_pool_complete() {
        // A task that opens a region of its own on the same pool (its worker
        // is then the caller): every inner task runs once.
        let count = AtomicUsize::new(0);
        let par = Parallel::Threads(2);
        for _ in 0..50 {
            par.run(6, &|_| {
                par.run(5, &|_| {
                    count.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                })
            })
            .unwrap();
        }
        assert_eq!(count.load(Ordering::Relaxed), 50 * 6 * 5);
    }

    fn skips_last(_ctx: usize, n: usize, task: Task<'_>) {
        (0..n - 1).for_each(task);
    }

    fn repeats_first(_ctx: usize, n: usize, task: Task<'_>) {
        task(0);
        (0..n).for_each(task);
    }

    fn repeats_first_skips_second(_ctx: usize, n: usize, task: Task<'_>) {
        task(0);
        (0..n).filter(|&i| i != 1).for_each(task);
    }

    #[test]
    fn a_host_that_skips_or_repeats_a_task_is_an_error() {
        for f in [skips_last as fn(usize, usize, Task<'_>), repeats_first] {
            let par = Parallel::Host(HostPool {
                parallel_for: f,
                ctx: 0,
            });
            assert_eq!(par.run(4, &|_| Ok(())), Err(Error::ParallelFor));
        }
    }

    #[test]
    fn every_task_runs_once_whatever_numbers_the_host_passes() {
        // Called n times, but with 0 twice and never with 1: each task once.
        let par = Parallel::Host(HostPool {
            parallel_for: repeats_first_skips_second,
            ctx: 0,
        });
        let seen: Vec<AtomicUsize> = (0..5).map(|_| AtomicUsize::new(0)).collect();
        par.run(5, &|i| {
            seen[i].fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
        assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn row_blocks_cover_the_matrix() {
        let (m, k) = (10, 3);
        let mut a: Vec<usize> = (0..m * k).collect();
        let blocks: Vec<(usize, Vec<usize>)> = RowBlocks::new(&mut a, m, k, 4)
            .unwrap()
            .map(|b| {
                (
                    b.r0,
                    b.cols[..k].iter().flat_map(|c| c.iter().copied()).collect(),
                )
            })
            .collect();
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[2].0, 8);
        assert_eq!(blocks[2].1, std::vec![8, 9, 18, 19, 28, 29]);
        assert!(RowBlocks::new(&mut a, m, 0, 4).is_none());
    }
}
