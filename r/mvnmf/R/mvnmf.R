# R interface to libmvnmf. Views are matrices with features in rows and items
# in columns (each column one item), as the library stores them: numeric
# matrices are passed by address, Matrix::dgCMatrix as CSC.

.views <- function(views) {
  if (is.matrix(views) || inherits(views, "dgCMatrix")) views <- list(views)
  if (!is.list(views) || length(views) == 0) stop("views: a matrix or a list of matrices (features x items)")
  lapply(views, function(x) {
    if (inherits(x, "dgCMatrix")) return(x)
    if (!is.matrix(x) || !is.numeric(x)) stop("a view must be a numeric matrix (features x items) or a dgCMatrix")
    if (storage.mode(x) != "double") storage.mode(x) <- "double"
    x
  })
}

.labels <- function(labels, n) {
  if (length(labels) != n) stop("labels: one per item (NA for unlabeled)")
  if (all(is.na(labels))) stop("labels: every item is unlabeled (NA); the semi-supervised models need labels")
  f <- factor(labels)
  codes <- as.integer(f) - 1L
  list(codes = codes, classes = levels(f))
}

.stop_rules <- c(every_iteration = 0L, sklearn = 1L)
.methods <- c("joint-nmf" = 0L, gnmf = 1L, "mvsl-s" = 2L, "mvsl-l" = 3L, "mvsl-t" = 4L, mcl = 5L)

.fit <- function(res, kind, k, views, extra = list()) {
  res$k <- k
  res$kind <- kind
  res$n_features <- vapply(views, nrow, 1)
  structure(c(res, extra), class = "mvnmf_fit")
}


mvnmf_joint_nmf <- function(views, k, beta = 2, max_iter = 200L, tol = 1e-4, seed = 0,
                            stop_rule = c("sklearn", "every_iteration"), start = NULL, verbose = 0L) {
  views <- .views(views)
  stop_rule <- .stop_rules[[match.arg(stop_rule)]]
  u0 <- if (is.null(start)) NULL else lapply(start$U, as.double)
  v0 <- if (is.null(start)) NULL else as.double(start$V)
  res <- .Call(C_joint_nmf, views, k, as.double(beta), max_iter, as.double(tol), as.double(seed), stop_rule,
               u0, v0, as.integer(verbose))
  .fit(res, "joint-nmf", k, views, list(weights = c(alpha = 0, beta = 0, gamma = 0, vmax = Inf)))
}


mvnmf_pipeline <- function(views, labels, k, method = c("mvsl-t", "mvsl-s", "mvsl-l", "gnmf", "mcl", "joint-nmf"),
                           alpha = NA_real_, beta = NA_real_, gamma = NA_real_, max_iter = 200L, tol = 1e-4,
                           seed = 0, verbose = 0L, graph = c("auto", "exact", "approx")) {
  views <- .views(views)
  method <- match.arg(method)
  # MvSL-T's neighbour search: exact below 4096 items under "auto" (MVNMF_GRAPH_BUILD_*).
  graph <- c(exact = 0L, approx = 1L, auto = 2L)[[match.arg(graph)]]
  lab <- .labels(labels, ncol(views[[1]]))
  res <- .Call(C_pipeline, views, lab$codes, length(lab$classes), k, .methods[[method]],
               as.double(c(alpha, beta, gamma)), max_iter, as.double(tol), as.double(seed), as.integer(verbose),
               graph)
  used <- attr(res, "weights")
  .fit(res, method, k, views, list(classes = lab$classes,
                                    weights = c(alpha = used[1], beta = used[2], gamma = used[3], vmax = used[4])))
}


mvnmf_dmcl <- function(views, labels, k, hidden = c(100, 50), alpha = NA_real_, beta = NA_real_, gamma = NA_real_,
                       max_iter = 200L, seed = 0, verbose = 0L) {
  views <- .views(views)
  lab <- .labels(labels, ncol(views[[1]]))
  res <- .Call(C_dmcl, views, lab$codes, length(lab$classes), as.double(c(hidden, k)),
               as.double(c(alpha, beta, gamma)), max_iter, as.double(seed), as.integer(verbose))
  used <- attr(res, "weights")
  .fit(res, "dmcl", k, views, list(classes = lab$classes, layers = c(hidden, k),
                                  weights = c(alpha = used[1], beta = used[2], gamma = used[3], vmax = used[4])))
}


mvnmf_encode <- function(fit, views, max_iter = 200L, tol = 1e-4) {
  if (!inherits(fit, "mvnmf_fit")) stop("fit: the result of mvnmf_joint_nmf, mvnmf_pipeline or mvnmf_dmcl")
  views <- .views(views)
  if (!identical(unname(vapply(views, nrow, 1)), unname(fit$n_features)))
    stop("views: the fit's feature counts (", paste(fit$n_features, collapse = ", "), ") are needed")
  if (fit$kind == "dmcl")  # through the whole stack of layers (mvnmf_deep_encode), no graph
    return(.Call(C_deep_encode, views, fit$U, as.double(fit$layers), as.double(fit$weights), max_iter,
                 as.double(tol)))
  .Call(C_encode, views, fit$U, fit$k, max_iter, as.double(tol), as.double(fit$weights[["gamma"]]),
        as.double(fit$weights[["vmax"]]))
}


mvnmf_version <- function() {
  v <- .Call(C_version)
  list(version = v[[1]], abi = v[[2]])
}

