# MVEL from R (mvnmf_mvel, glue in src/mvel.c): on real multi-label data — the
# first 300 genes of the yeast sample shipped in data/yeast-sample
# (MVNMF_DATA/yeast-sample), 103 features split 79 + 24 into two views, a third of each
# gene's labels given — the decisions are not one constant label set, keep
# every given positive and add others, and the scores rank the hidden labels
# better than the given labels do; the count rule adds each label's count;
# standardisation (the default) removes a view's units; the kNN-sparsified graph (exact
# and NN-descent) ranks the hidden labels about as well as the dense graph; errors carry a
# message.

skip_if_not(exists("C_mvel", envir = asNamespace("mvnmf")),
            "C_mvel is not registered in src/glue.c's CALLS yet")

yeast <- function(n = 300L) {
  data <- Sys.getenv("MVNMF_DATA")
  skip_if(data == "", "MVNMF_DATA (the repository's data/ directory) is not set")
  dir <- file.path(normalizePath(data), "yeast-sample")
  f <- file.path(dir, "view1.f64")
  skip_if_not(file.exists(f), paste("the yeast set is not at", dir))
  x <- matrix(readBin(f, "double", 103 * 600, endian = "little"), 103, 600)[, seq_len(n)]
  y <- matrix(readBin(file.path(dir, "labels.f64"), "double", 14 * 600, endian = "little"), 14, 600)[, seq_len(n)]
  set.seed(7)
  given <- matrix(0L, 14, n)
  for (u in seq_len(n)) {
    pos <- which(y[, u] == 1)
    keep <- min(max(round(length(pos) / 3), 1), length(pos))
    given[pos[sample.int(length(pos), keep)], u] <- 1L
  }
  list(views = list(x[1:79, ], x[80:103, ]), truth = y, given = given)
}

auroc <- function(scores, truth) {
  mean(unlist(lapply(seq_len(nrow(truth)), function(s) {
    t <- truth[s, ] == 1
    if (all(t) || !any(t)) return(NULL)
    r <- rank(scores[s, ])
    (sum(r[t]) - sum(t) * (sum(t) + 1) / 2) / (sum(t) * sum(!t))
  })))
}

test_that("MVEL on yeast: non-constant decisions, given positives kept, scores that rank", {
  d <- yeast()
  fit <- mvnmf_mvel(d$views, d$given, max_iter = 60L)
  p <- predict(fit)
  expect_equal(dim(p), dim(d$given))
  expect_true(all(p %in% c(0L, 1L)))
  expect_true(all(p >= d$given))
  expect_true(any(p > d$given))
  expect_gt(nrow(unique(t(p))), 10)
  s <- predict(fit, "scores")
  expect_true(all(abs(s) <= 1 + 1e-12))
  expect_gt(auroc(s, d$truth), auroc(d$given, d$truth) + 0.02)
  expect_equal(dim(predict(fit, "embedding")), c(64L, 300L))
  expect_true(all(fit$label_freq >= 0 & fit$label_freq <= 1))
  # The count rule with c = 0.5: each label gets round(P) more (no ties).
  cnt <- mvnmf_mvel(d$views, d$given, decide = "count", label_freq = 0.5, max_iter = 60L)
  pc <- predict(cnt)
  expect_true(all(pc >= d$given))
  for (s in seq_len(14)) {
    P <- sum(d$given[s, ])
    expect_equal(sum(pc[s, ] > d$given[s, ]), if (P == 0) 0 else min(floor(P + 0.5), 300 - P))
  }
  # Standardised (the default), a view's units do not matter.
  big <- mvnmf_mvel(list(d$views[[1]], 1000 * d$views[[2]]), d$given, max_iter = 60L)
  expect_lt(max(abs(big$scores - fit$scores)), 1e-8)
})

test_that("the kNN graph, exact or by NN-descent, ranks the hidden labels as the dense graph", {
  d <- yeast()
  dense <- mvnmf_mvel(d$views, d$given, max_iter = 60L)
  hidden <- function(fit) {
    # AUROC over the unknown entries only: hidden positives against true negatives.
    s <- fit$scores
    s[d$given == 1] <- NA
    t <- d$truth
    t[d$given == 1] <- NA
    mean(unlist(lapply(seq_len(nrow(t)), function(k) {
      u <- !is.na(t[k, ])
      if (all(t[k, u] == 1) || !any(t[k, u] == 1)) return(NULL)
      auroc(matrix(s[k, u], 1), matrix(t[k, u], 1))
    })))
  }
  exact <- mvnmf_mvel(d$views, d$given, max_iter = 60L, graph = "knn", graph_build = "exact")
  approx <- mvnmf_mvel(d$views, d$given, max_iter = 60L, graph = "knn", graph_build = "approx")
  auto <- mvnmf_mvel(d$views, d$given, max_iter = 60L, graph = "knn")
  expect_identical(auto$scores, exact$scores)  # "auto" below 4096 items: the exact graph
  expect_identical(exact$graph, "knn")
  a <- c(dense = hidden(dense), exact = hidden(exact), approx = hidden(approx))
  message(sprintf("yeast, 300 genes, s = 10: AUROC of the hidden positives dense %.4f, kNN exact %.4f, approx %.4f",
                  a[["dense"]], a[["exact"]], a[["approx"]]))
  # The sparsified graph is no worse than the dense one, NN-descent's as the exact one.
  expect_gt(a[["dense"]], 0.55)
  expect_gt(a[["exact"]], a[["dense"]] - 0.01)
  expect_gt(a[["approx"]], a[["dense"]] - 0.01)
  expect_lt(abs(a[["approx"]] - a[["exact"]]), 0.005)
  expect_false(identical(approx$scores, exact$scores))
  expect_true(all(predict(approx) >= d$given))
})

test_that("bad input gets an error with mvnmf's message", {
  d <- yeast(60L)
  bad <- d$given
  bad[1, 1] <- 2L
  expect_error(mvnmf_mvel(d$views, bad), "0 \\(unknown\\) or 1")
  v <- d$views
  v[[1]][2, 3] <- NaN
  expect_error(mvnmf_mvel(v, d$given, max_iter = 5L), "standardize")
  expect_error(mvnmf_mvel(d$views, d$given[, -1]), "one column per item")
  expect_error(mvnmf_mvel(d$views, d$given, decide = "count", label_freq = "auto"), "count")
  expect_error(mvnmf_mvel(d$views, d$given, graph = "sparse"), "should be one of")
  expect_error(mvnmf_mvel(d$views, d$given, graph = "knn", graph_build = "fast"), "should be one of")
  expect_error(mvnmf_mvel(d$views, d$given, graph = "knn", n_neighbors = 60L), "fewer than the items")
  expect_error(mvnmf_mvel(d$views, d$given, graph = "knn", n_neighbors = 0L), "n_neighbors")
})
