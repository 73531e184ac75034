# MVEL (seed 002): completing incomplete multi-labels from several views.
# The steps and defaults of examples-c/multilabel and of the Python estimator
# (python/mvnmf/mvel.py); docs/multilabel.md has the rule and the tables.

mvnmf_mvel <- function(views, Y, r = 64L, theta1 = 1, theta2 = 0.1, unknown_weight = "auto",
                       decide = c("pu", "count"), label_freq = "holdout", holdout = 0.3, min_held = 10L,
                       standardize = TRUE, max_iter = 100L, tol = 1e-6, nmf_iter = 100L, seed = 0,
                       holdout_seed = 0, graph = c("dense", "knn"), n_neighbors = 10L,
                       graph_build = c("auto", "exact", "approx")) {
  views <- .views(views)
  if (any(vapply(views, inherits, TRUE, "dgCMatrix"))) stop("mvnmf_mvel: dense views only (CCA and RBF on dense features)")
  decide <- match.arg(decide)
  graph <- match.arg(graph)
  # The kNN graph's neighbour search (MVNMF_GRAPH_BUILD_*): exact below 4096 items under "auto".
  build <- c(exact = 0L, approx = 1L, auto = 2L)[[match.arg(graph_build)]]
  if (!is.numeric(n_neighbors) || length(n_neighbors) != 1 || is.na(n_neighbors) || n_neighbors < 1 ||
      n_neighbors != round(n_neighbors))
    stop("n_neighbors: a whole number >= 1")
  if (graph == "knn" && n_neighbors >= ncol(views[[1]]))
    stop("n_neighbors: fewer than the items (", ncol(views[[1]]), ")")
  if (!is.matrix(Y)) stop("Y: a labels x items matrix of 0 (unknown) and 1 (given positive)")
  if (ncol(Y) != ncol(views[[1]])) stop("Y: one column per item (", ncol(views[[1]]), ")")
  mu <- if (identical(unknown_weight, "auto")) -1 else as.double(unknown_weight)
  if (!(mu == -1 || mu >= 0)) stop("unknown_weight: 'auto' or a number >= 0")
  lf <- if (identical(label_freq, "holdout")) -1 else if (identical(label_freq, "auto")) 0 else as.double(label_freq)
  if (!(lf == -1 || lf == 0 || (lf > 0 && lf <= 1))) stop("label_freq: 'holdout', 'auto' or a number in (0, 1]")
  if (decide == "count" && lf == 0) stop("decide = 'count' needs label_freq = 'holdout' or a number")
  if (!(holdout > 0 && holdout < 1)) stop("holdout: a share in (0, 1)")
  if (r < 1) stop("r: at least 1")
  opts <- as.double(c(r, theta1, theta2, mu, decide == "count", lf, holdout, min_held, isTRUE(standardize),
                      max_iter, tol, nmf_iter, seed, holdout_seed, graph == "knn", n_neighbors, build))
  res <- .Call(C_mvel, views, Y, opts)
  dimnames(res$decisions) <- dimnames(res$scores) <- dimnames(Y)
  res$given <- Y
  res$r <- as.integer(r)
  res$decide <- decide
  res$graph <- graph
  structure(res, class = "mvnmf_mvel")
}

predict.mvnmf_mvel <- function(object, type = c("decisions", "scores", "embedding"), ...) {
  switch(match.arg(type), decisions = object$decisions, scores = object$scores, embedding = object$H)
}

print.mvnmf_mvel <- function(x, ...) {
  cat(sprintf("MVEL: %d labels x %d items, r = %d, decisions by the %s rule; %d given and %d decided positives\n",
              nrow(x$decisions), ncol(x$decisions), x$r, x$decide, sum(x$given), sum(x$decisions)))
  invisible(x)
}
