# S3 methods of the fits (class "mvnmf_fit": mvnmf_joint_nmf, mvnmf_pipeline,
# mvnmf_dmcl) and the re-signalling of a condition caught during a fit.

# A condition caught by the glue's progress callback while the solver ran (an
# interrupt, or an error such as a time limit's), signalled again once the
# library has returned (src/glue.c): an interrupt reaches tryCatch(interrupt =)
# and withCallingHandlers as the interrupt condition it was, and when nothing
# handles it, goes back to the top level as R's own interrupt does; an error
# is raised again as the same condition object.
.resignal <- function(cond) {
  if (inherits(cond, "interrupt")) {
    signalCondition(cond)
    invokeRestart("abort")
  }
  stop(cond)
}

basis <- function(object, ...) UseMethod("basis")

# The layer factors U_1 (rows x p_1), ..., U_M (p_{M-1} x K) of one view of a
# DMCL fit, from the library's buffer (one after the other, column-major;
# hidden sizes clamped to p_m = min(layers[m], p_{m-1}): mvnmf_deep_factor_len).
.deep_layers <- function(u, rows, layers) {
  dims <- rows
  for (h in layers[-length(layers)]) dims <- c(dims, min(h, dims[length(dims)]))
  dims <- c(dims, layers[length(layers)])
  sizes <- dims[-length(dims)] * dims[-1]
  if (sum(sizes) != length(u)) stop("the fit's factor buffer does not match its layers")
  ends <- cumsum(sizes)
  lapply(seq_along(sizes), function(m) matrix(u[(ends[m] - sizes[m] + 1):ends[m]], dims[m], dims[m + 1]))
}

basis.mvnmf_fit <- function(object, view = NULL, layers = FALSE, ...) {
  us <- if (object$kind == "dmcl") {
    mapply(function(u, rows) {
      f <- .deep_layers(u, rows, object$layers)
      if (layers) f else Reduce(`%*%`, f)
    }, object$U, object$n_features, SIMPLIFY = FALSE)
  } else {
    if (layers) stop("layers = TRUE: only a DMCL fit has layers")
    object$U
  }
  if (is.null(view)) us else us[[view]]
}

coef.mvnmf_fit <- function(object, ...) object$V

predict.mvnmf_fit <- function(object, newdata, max_iter = 200L, tol = 1e-4, ...) {
  if (missing(newdata) || is.null(newdata)) return(object$V)
  mvnmf_encode(object, newdata, max_iter = max_iter, tol = tol)
}

print.mvnmf_fit <- function(x, ...) {
  cat(sprintf("mvnmf %s fit: K = %d, %d view(s) (%s features), %d items; %d iterations (%s), objective %.6g\n",
              x$kind, as.integer(x$k), length(x$U), paste(x$n_features, collapse = ", "), ncol(x$V),
              x$iterations, x$stop, x$objective))
  invisible(x)
}

summary.mvnmf_fit <- function(object, ...) {
  b <- basis(object)
  views <- data.frame(features = unname(object$n_features),
                      basis_nonzero = vapply(b, function(u) mean(u > 0), 1),
                      basis_norm = vapply(b, function(u) sqrt(sum(u^2)), 1))
  if (!is.null(object$eta)) views$eta <- object$eta
  tr <- object$trace
  out <- list(kind = object$kind, k = as.integer(object$k), items = ncol(object$V), views = views,
              iterations = object$iterations, stop = object$stop,
              objective = c(start = tr[1], end = object$objective),
              never_rose = length(tr) < 2 || all(diff(tr) <= 1e-10 * abs(tr[1])),
              encoding_nonzero = mean(object$V > 0), weights = object$weights,
              classes = object$classes, layers = object$layers)
  structure(out, class = "summary.mvnmf_fit")
}

print.summary.mvnmf_fit <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("mvnmf %s fit: K = %d, %d items, %d view(s)\n", x$kind, x$k, x$items, nrow(x$views)))
  if (!is.null(x$layers)) cat("layers:", paste(x$layers, collapse = " -> "), "\n")
  if (!is.null(x$classes)) cat(sprintf("classes (%d): %s\n", length(x$classes), paste(x$classes, collapse = ", ")))
  cat(sprintf("%d iterations (%s); objective %.6g -> %.6g%s\n", x$iterations, x$stop, x$objective[["start"]],
              x$objective[["end"]], if (x$never_rose) ", never rose" else ""))
  w <- x$weights[is.finite(x$weights) & x$weights != 0]
  if (length(w)) cat("weights:", paste(names(w), format(w, digits = digits), sep = " = ", collapse = ", "), "\n")
  cat(sprintf("encoding: %.1f%% nonzero\n", 100 * x$encoding_nonzero))
  print(x$views, digits = digits)
  invisible(x)
}
