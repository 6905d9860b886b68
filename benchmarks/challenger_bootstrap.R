# challengeR's own bootstrap, timed: what benchmarks/ranking_bootstrap.py compares with where R and
# challengeR 1.0.5 are installed. Arguments: a CSV of (alg, case, value), the scheme ("test-then-rank"
# or "rank-then-mean"), the number of resamples. Prints the seconds the resamples took.
suppressMessages(library(challengeR))
args <- commandArgs(trailingOnly = TRUE)
data <- read.csv(args[1], stringsAsFactors = FALSE)
challenge <- suppressMessages(as.challenge(data, algorithm = "alg", case = "case", value = "value",
                                           smallBetter = FALSE))
ranking <- if (args[2] == "test-then-rank") {
  testThenRank(challenge, alpha = 0.05, p.adjust.method = "none", na.treat = 0, ties.method = "min")
} else {
  rankThenAggregate(challenge, FUN = mean, ties.method = "min")
}
set.seed(1)
seconds <- system.time(suppressMessages(bootstrap(ranking, nboot = as.integer(args[3]), progress = "none")))
cat(seconds[["elapsed"]], "\n")
