# Properties of the R interface: the objective never rises; the fit equals a
# plain-R implementation of the same multiplicative updates from the same start;
# dense and dgCMatrix views give the same fit; the semi-supervised pipeline beats
# joint NMF on real data (when MVNMF_DATA points at the repository's data/);
# errors carry mvnmf's message.

set.seed(1)
views <- list(matrix(runif(12 * 40), 12, 40) + 0.01, matrix(runif(7 * 40), 7, 40) + 0.01)

test_that("the objective never increases", {
  fit <- mvnmf_joint_nmf(views, 4, tol = 0, max_iter = 60L)
  expect_equal(length(fit$trace), 61L)
  expect_true(all(diff(fit$trace) <= 1e-12 * fit$trace[1]))
  expect_equal(dim(fit$V), c(4L, 40L))
  expect_equal(lapply(fit$U, dim), list(c(12L, 4L), c(7L, 4L)))
  kl <- mvnmf_joint_nmf(views, 4, beta = 1, tol = 0, max_iter = 40L)
  expect_true(all(diff(kl$trace) <= 1e-12 * kl$trace[1]))
})

test_that("joint NMF equals the same updates written in R", {
  k <- 3; iters <- 30L
  u0 <- list(matrix(runif(12 * k), 12, k) + 0.05, matrix(runif(7 * k), 7, k) + 0.05)
  v0 <- matrix(runif(k * 40), k, 40) + 0.05
  u <- u0; v <- v0
  for (it in seq_len(iters)) {
    for (i in 1:2) u[[i]] <- u[[i]] * (views[[i]] %*% t(v)) / (u[[i]] %*% (v %*% t(v)))
    num <- Reduce(`+`, lapply(1:2, function(i) t(u[[i]]) %*% views[[i]]))
    den <- Reduce(`+`, lapply(1:2, function(i) t(u[[i]]) %*% u[[i]])) %*% v
    v <- v * num / den
  }
  fit <- mvnmf_joint_nmf(views, k, tol = 0, max_iter = iters, start = list(U = u0, V = v0))
  expect_equal(fit$iterations, iters)
  expect_lt(max(abs(fit$V - v)) / max(abs(v)), 1e-9)
  expect_lt(max(abs(fit$U[[1]] - u[[1]])) / max(abs(u[[1]])), 1e-9)
})

test_that("sparse (dgCMatrix) views equal dense ones", {
  skip_if_not_installed("Matrix")
  x <- views[[1]]; x[x < 0.5] <- 0
  d <- mvnmf_joint_nmf(x, 3, tol = 0, max_iter = 30L, seed = 4)
  s <- mvnmf_joint_nmf(Matrix::Matrix(x, sparse = TRUE), 3, tol = 0, max_iter = 30L, seed = 4)
  expect_lt(max(abs(d$V - s$V)) / max(abs(d$V)), 1e-10)
})

test_that("encode of the training items is close to the fit", {
  fit <- mvnmf_joint_nmf(views, 4, tol = 0, max_iter = 300L)
  v <- mvnmf_encode(fit, views, max_iter = 300L, tol = 0)
  expect_lt(norm(v - fit$V, "F"), 0.05 * norm(fit$V, "F"))
  expect_error(mvnmf_encode(fit, list(views[[1]])), "feature counts")
})

test_that("the semi-supervised pipeline and DMCL run and respect the labels' graph", {
  labels <- rep(c("a", "b", "c", "d"), each = 10)
  labels[seq(1, 40, by = 3)] <- NA
  fit <- mvnmf_pipeline(views, labels, 4, method = "mvsl-t", alpha = 0.5, max_iter = 50L)
  expect_equal(length(fit$eta), 2L)
  expect_equal(sum(fit$eta), 1, tolerance = 1e-12)
  expect_true(all(diff(fit$trace) <= 1e-10 * abs(fit$trace[1])))
  expect_equal(fit$classes, c("a", "b", "c", "d"))
  d <- mvnmf_dmcl(views, labels, 3, hidden = 5, max_iter = 30L)
  expect_true(all(diff(d$trace) <= 1e-10 * abs(d$trace[1])))
  expect_equal(dim(d$V), c(3L, 40L))
})

test_that("the pipeline's graph option: auto is exact on few items, approx fits", {
  labels <- rep(c("a", "b", "c", "d"), each = 10)
  labels[seq(1, 40, by = 3)] <- NA
  run <- function(g) mvnmf_pipeline(views, labels, 4, alpha = 0.5, max_iter = 30L, tol = 0, graph = g)
  exact <- run("exact")
  expect_identical(run("auto")$V, exact$V)
  approx <- run("approx")
  expect_equal(length(approx$trace), 31L) # the set-up phases are not iterates
  expect_true(all(diff(approx$trace) <= 1e-10 * abs(approx$trace[1])))
  expect_error(run("fast"), "should be one of")
})

test_that("bad input gives mvnmf's message", {
  expect_error(mvnmf_joint_nmf(-views[[1]], 3), "negative")
  bad <- views[[1]]; bad[2, 3] <- NaN
  expect_error(mvnmf_joint_nmf(bad, 3), "NaN or infinite")
  # Issue 33: the error says where (the argument, the view and the entry, 1-based as R indexes).
  bad2 <- views; bad2[[2]][5, 7] <- NaN
  expect_error(mvnmf_joint_nmf(bad2, 3), "(argument 1 'views': views[[2]][5, 7])", fixed = TRUE)
  expect_error(mvnmf_joint_nmf(-views[[1]], 3), "(argument 1 'views': views[[1]][1, 1])", fixed = TRUE)
  expect_error(mvnmf_joint_nmf(list(views[[1]], views[[2]][, 1:5]), 3), "items")
  expect_error(mvnmf_pipeline(views, rep(NA, 40), 3), "unlabeled")
  expect_error(mvnmf_pipeline(views, c(rep("a", 39), "b"), 3), "labeled")
})

test_that("on real data MvSL-T encodes better than joint NMF (mfeat-sample)", {
  dir <- Sys.getenv("MVNMF_DATA")
  skip_if(dir == "", "MVNMF_DATA (the repository's data/ directory) is not set")
  read_view <- function(v, rows) {
    con <- file(file.path(dir, "mfeat-sample", sprintf("view%d.f64", v)), "rb")
    on.exit(close(con))
    x <- matrix(readBin(con, "double", rows * 500, size = 8, endian = "little"), rows, 500)
    x / sqrt(sum(x^2) / 500)  # ||X||_F^2 = N, as the demo
  }
  xs <- mapply(read_view, c(1, 2, 4, 5, 6), c(76, 216, 240, 47, 6), SIMPLIFY = FALSE)
  y <- as.integer(readLines(file.path(dir, "mfeat-sample", "labels.txt")))
  set.seed(0)
  lab <- unlist(lapply(0:9, function(c) sample(which(y == c), 15)))
  given <- rep(NA, 500); given[lab] <- y[lab]
  knn1 <- function(v) {  # 1-NN from the labeled to the unlabeled items
    test <- setdiff(1:500, lab)
    d <- as.matrix(dist(t(v)))[test, lab]
    mean(y[lab][apply(d, 1, which.min)] == y[test])
  }
  ssl <- mvnmf_pipeline(xs, given, 20, method = "mvsl-t", alpha = 1.5, seed = 1)
  joint <- mvnmf_joint_nmf(xs, 20, seed = 1)
  expect_gt(knn1(ssl$V), 0.9)
  expect_gt(knn1(ssl$V), knn1(joint$V) + 0.01)
})

test_that("an error raised while the solver runs (an elapsed-time limit) cancels it and arrives as that error", {
  # R_CheckUserInterrupt raises the time limit's error; the progress callback
  # catches it (R_ToplevelExec around R_tryCatch), cancels the solver, and the
  # glue raises the same error after the library has returned: no jump
  # through its frames, and the error is R's own.
  big <- list(matrix(runif(200 * 300), 200, 300))
  err <- tryCatch({
    setTimeLimit(elapsed = 0.5, transient = TRUE)
    mvnmf_joint_nmf(big, 10, tol = 0, max_iter = 1000000L)
    "finished"
  }, error = function(e) e, finally = setTimeLimit(elapsed = Inf))
  expect_s3_class(err, "error")
  expect_match(conditionMessage(err), "elapsed time limit")
  expect_s3_class(mvnmf_joint_nmf(views, 2, max_iter = 5L), "mvnmf_fit")  # the session goes on
})

test_that("a user interrupt (SIGINT) during a fit arrives as an interrupt condition", {
  skip_on_os("windows")
  skip_if(Sys.which("sh") == "" || Sys.which("kill") == "" && !file.exists("/bin/kill"), "no sh/kill")
  big <- list(matrix(runif(200 * 300), 200, 300))
  for (f in list(function() mvnmf_joint_nmf(big, 10, tol = 0, max_iter = 1000000L),
                 function() mvnmf_encode(mvnmf_joint_nmf(big, 10, max_iter = 2L), big, tol = 0,
                                         max_iter = 1000000000L))) {
    stack <- NULL
    got <- tryCatch(withCallingHandlers({
      # The signal comes 2 s later from another process, while the solver runs
      # (a million iterations: minutes).
      system2("sh", c("-c", shQuote(sprintf("sleep 2; kill -INT %d", Sys.getpid()))), wait = FALSE)
      f()
      "finished"
    }, interrupt = function(cond) stack <<- vapply(sys.calls(), function(cl) deparse(cl[[1]])[1], "")),
    interrupt = function(cond) cond, error = function(e) e)
    expect_s3_class(got, "interrupt")
    expect_false(inherits(got, "error"))
    # It was signalled again by the package after the library returned.
    expect_true(any(grepl(".resignal", stack, fixed = TRUE)), info = paste(stack, collapse = " / "))
  }
  expect_s3_class(mvnmf_joint_nmf(views, 2, max_iter = 5L), "mvnmf_fit")  # the session goes on
})
