//! Out-of-sample encoding (DESIGN §10): the V-steps of the shallow solver with
//! the bases fixed, the solver behind [`crate::models::mvsl::encode`] and the
//! deep model's encode.

use crate::data::ViewShape;
use crate::data::{Factors, ViewSet};
use crate::error::Error;
use crate::graph::GraphOp;
use crate::linalg::gemm;
use crate::linalg::mat::{MatMut, MatRef};
use crate::linalg::real::Real;
use crate::steps::check::{check_graph, check_shapes, validate};
use crate::steps::init::start_scales;
use crate::steps::mu::{dead_views, gram, objective, products_req};
use crate::steps::scale::Scale;
use crate::steps::vstep::{form_pq_encode, v_update};
use crate::steps::{finite_outputs, run, Init, Monitor, MvslParams, Objective, Report};
use crate::work::{Stack, WorkReq};

/// The V-steps with the bases fixed (out-of-sample encoding, DESIGN §10): the
/// contract is [`crate::models::mvsl::encode`]'s; the deep model's encode runs it
/// on the products of its stacks.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode<
    T: Real,
    VS: ViewSet<T> + ?Sized,
    G: GraphOp<T> + ?Sized,
    F: Factors<T> + ?Sized,
>(
    views: &VS,
    graph: &G,
    k: usize,
    params: &MvslParams,
    u: &F,
    v: &mut [T],
    work: &mut [u8],
    monitor: Option<Monitor<'_>>,
) -> Result<Report, Error> {
    params.validate()?;
    let np = params.nmf_params();
    let hv = views.count();
    let shapes = |i| views.shape(i);
    let (n, _, _) = validate(views, k, &np, u, true, v, work.len(), || {
        encode_req::<T>((0..hv).map(shapes), k, graph.apply_req(k))
    })?;
    check_graph(params, graph, (0..hv).map(|i| views.shape(i)))?;
    // The data and the bases times `s` (1 unless they are far above 1), with the
    // weights of that problem (`crate::steps::scale`).
    let scale = Scale::of_encode(views, u)?;
    let params = &scale.mvsl(params);
    let mut st = Stack::new(work).with_par(params.parallel);
    let g: &mut [T] = st.take_matrix(k, k)?;
    let p: &mut [T] = st.take_matrix(k, k)?;
    let q: &mut [T] = st.take_matrix(k, n)?;
    let d: &mut [T] = st.take_matrix(k, n)?;
    let plus: &mut [T] = st.take_matrix(k, n)?;
    let minus: &mut [T] = st.take_matrix(k, n)?;
    let vmax = T::from_f64(params.vmax);
    let half_x2: f64 = scale.half_sq(views);
    match params.init {
        Init::Random => {
            let (sv, _) = start_scales(views, k, params.vmax, scale.get());
            let mut rng = crate::rng::Rng::new(params.seed);
            v.iter_mut()
                .for_each(|x| *x = T::from_f64(rng.uniform() * sv));
        }
        Init::Given => v.iter_mut().for_each(|x| *x = x.min(vmax)),
    }
    let use_graph = params.beta > 0.0;
    let mut sc = st.rest();
    form_pq_encode(views, scale, k, u, p, q, &mut sc)?;
    let eval = |v: &[T],
                g: &mut [T],
                plus: &mut [T],
                minus: &mut [T],
                sc: &mut Stack<'_>|
     -> Result<Objective, Error> {
        gram(v, k, n, g, sc)?;
        let (ta, tp) = if use_graph {
            graph.apply(v, k, plus, minus, sc)?
        } else {
            (0.0, 0.0)
        };
        let rec = objective(half_x2, q, v, p, g).reconstruction();
        let l1 = params.gamma * v.iter().map(|x| x.to_f64()).sum::<f64>();
        let (affinity, penalty) = (0.5 * params.beta * ta, -0.5 * params.beta * tp);
        Ok(Objective::family(
            rec + affinity + penalty + l1,
            rec,
            0.0,
            affinity,
            penalty,
            l1,
        ))
    };
    let obj = scale.objective(eval(v, g, plus, minus, &mut sc)?);
    let mut report = run(params.max_iter, params.stopping(), obj, monitor, |_it| {
        gemm(
            T::ONE,
            MatRef::col_major(p, k, k)?,
            MatRef::col_major(v, k, n)?,
            T::ZERO,
            MatMut::col_major(d, k, n)?,
            &mut sc,
        )?;
        v_update(params, v, d, plus, minus, q, use_graph);
        Ok(scale.objective(eval(v, g, plus, minus, &mut sc)?))
    })?;
    report.dead_views = dead_views(u);
    finite_outputs(report, u, v)
}

/// Workspace of [`encode`]: `G`, `P` (`K × K`), `Q`, `PV` and the graph's two
/// products (`K × N`), and the scratch of the products or of the graph operator.
pub(crate) fn encode_req<T>(
    shapes: impl IntoIterator<Item = ViewShape> + Clone,
    k: usize,
    graph_req: WorkReq,
) -> Result<WorkReq, Error> {
    let (n, _) = check_shapes(shapes.clone(), k)?;
    let kk = WorkReq::matrix::<T>(k, k);
    let kn = WorkReq::matrix::<T>(k, n);
    Ok(WorkReq::all_of(&[
        kk,
        kk,
        kn,
        kn,
        kn,
        kn,
        products_req::<T>(shapes, k, n).or(graph_req),
    ]))
}
