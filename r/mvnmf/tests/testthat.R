library(testthat)
library(mvnmf)
test_check("mvnmf")
