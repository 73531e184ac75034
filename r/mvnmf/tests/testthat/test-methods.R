# The S3 methods of every fit the package returns (joint NMF, the pipeline,
# DMCL): predict encodes new items through the library's encode entry points
# (the encoding of the training items comes back close to the fit's V, and
# new items made of the bases get their codes back), coef/basis give V and
# the bases (DMCL: the product of its layers, which reconstructs as the fit
# does), print/summary report the fit.

set.seed(2)
views <- list(matrix(runif(12 * 40), 12, 40) + 0.01, matrix(runif(7 * 40), 7, 40) + 0.01)
labels <- rep(c("a", "b", "c", "d"), each = 10)
labels[seq(1, 40, by = 3)] <- NA

fits <- list(
  joint = mvnmf_joint_nmf(views, 4, tol = 0, max_iter = 200L),
  kl = mvnmf_joint_nmf(views, 4, beta = 1, tol = 0, max_iter = 100L),
  mvsl = mvnmf_pipeline(views, labels, 4, method = "mvsl-t", alpha = 0.5, max_iter = 50L),
  dmcl = mvnmf_dmcl(views, labels, 3, hidden = 5, max_iter = 30L)
)

test_that("coef is V and basis gives one features x k matrix per view", {
  for (f in fits) {
    expect_identical(coef(f), f$V)
    b <- basis(f)
    expect_length(b, 2L)
    expect_equal(lapply(b, dim), list(c(12L, f$k), c(7L, f$k)))
    expect_identical(basis(f, view = 2), b[[2]])
    expect_true(all(unlist(b) >= 0))
  }
  expect_identical(basis(fits$joint), fits$joint$U)
  expect_error(basis(fits$joint, layers = TRUE), "DMCL")
})

test_that("a DMCL basis is the product of its layers, and the layers fill the library's buffer", {
  d <- fits$dmcl
  l <- basis(d, view = 1, layers = TRUE)
  expect_equal(lapply(l, dim), list(c(12L, 5L), c(5L, 3L)))
  expect_equal(c(unlist(lapply(l, as.vector))), d$U[[1]])
  expect_equal(basis(d, view = 1), l[[1]] %*% l[[2]])
  # The clamp of a hidden size above the features (mvnmf_deep_factor_len).
  d7 <- mvnmf_dmcl(views, labels, 2, hidden = 9, max_iter = 5L)
  expect_equal(lapply(basis(d7, view = 2, layers = TRUE), dim), list(c(7L, 7L), c(7L, 2L)))
})

test_that("predict without new data is the fit's encoding; with new data it is the library's encoding", {
  for (f in fits) expect_identical(predict(f), f$V)
  j <- fits$joint
  v <- predict(j, views, max_iter = 500L, tol = 0)
  expect_equal(dim(v), c(4L, 40L))
  expect_lt(norm(v - j$V, "F"), 0.05 * norm(j$V, "F"))
  expect_identical(v, mvnmf_encode(j, views, max_iter = 500L, tol = 0))
  # New items made exactly of the bases: their codes come back.
  codes <- matrix(runif(4 * 5), 4, 5) + 0.2
  new <- lapply(j$U, function(u) u %*% codes)
  expect_lt(max(abs(predict(j, new, max_iter = 3000L, tol = 0) - codes)), 1e-2 * max(codes))
  for (f in fits[c("kl", "mvsl", "dmcl")]) {
    e <- predict(f, lapply(views, function(x) x[, 1:6]), max_iter = 100L)
    expect_equal(dim(e), c(f$k, 6L))
    expect_true(all(e >= 0) && any(e > 0))
  }
  expect_error(predict(j, list(views[[1]])), "feature counts")
})

test_that("DMCL's predict encodes through the stack: its training items land near its V", {
  d <- mvnmf_dmcl(views, labels, 3, hidden = 5, max_iter = 100L, gamma = 0, alpha = 0, beta = 0)
  v <- predict(d, views, max_iter = 1000L, tol = 0)
  # The encoding with the fit's bases reconstructs no worse than the fit's own V.
  err <- function(vv) sum(mapply(function(x, u) sum((x - u %*% vv)^2), views, basis(d)))
  expect_lte(err(v), err(d$V) * 1.01)
})

test_that("print and summary describe the fit", {
  for (f in fits) {
    out <- capture.output(print(f))
    expect_match(out[1], sprintf("mvnmf %s fit: K = %d", f$kind, as.integer(f$k)), fixed = TRUE)
    s <- summary(f)
    expect_s3_class(s, "summary.mvnmf_fit")
    expect_equal(s$views$features, c(12, 7))
    expect_equal(s$objective[["end"]], f$objective)
    expect_true(s$never_rose)
    so <- capture.output(print(s))
    expect_true(any(grepl("never rose", so)))
  }
  expect_equal(summary(fits$mvsl)$views$eta, fits$mvsl$eta)
  expect_equal(summary(fits$mvsl)$classes, c("a", "b", "c", "d"))
  expect_equal(summary(fits$dmcl)$layers, c(5, 3))
})
