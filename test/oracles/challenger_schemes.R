# challengeR 1.0.5 as an oracle for the ranking schemes (test/ranking/test_challenger_live.py).
# Argument: a folder of tables <k>.csv of (alg, case, value), each beside <k>.direction ("smaller" or
# "larger" is better); writes <k>.ranks.csv of (scheme, alg, score, rank) beside each.
suppressMessages(library(challengeR))
folder <- commandArgs(trailingOnly = TRUE)[1]
for (table in list.files(folder, pattern = "^[0-9]+\\.csv$", full.names = TRUE)) {
  data <- read.csv(table, stringsAsFactors = FALSE)
  smaller <- readLines(sub("\\.csv$", ".direction", table)) == "smaller"
  challenge <- suppressMessages(as.challenge(data, algorithm = "alg", case = "case", value = "value",
                                             smallBetter = smaller))
  rankings <- list(
    mean_na0 = aggregateThenRank(challenge, FUN = mean, na.treat = 0, ties.method = "min"),
    median_na0 = aggregateThenRank(challenge, FUN = median, na.treat = 0, ties.method = "min"),
    mean_drop = aggregateThenRank(challenge, FUN = mean, na.treat = "na.rm", ties.method = "min"),
    rank_mean = rankThenAggregate(challenge, FUN = mean, ties.method = "min"),
    rank_median = rankThenAggregate(challenge, FUN = median, ties.method = "min"),
    rank_mean_average = rankThenAggregate(challenge, FUN = mean, ties.method = "average"),
    test_none = testThenRank(challenge, alpha = 0.05, p.adjust.method = "none", na.treat = 0, ties.method = "min"),
    test_holm = testThenRank(challenge, alpha = 0.05, p.adjust.method = "holm", na.treat = 0, ties.method = "min")
  )
  rows <- lapply(names(rankings), function(name) {
    m <- as.data.frame(rankings[[name]]$matlist[[1]])
    data.frame(scheme = name, alg = rownames(m), score = m[[1]], rank = m$rank)
  })
  write.csv(do.call(rbind, rows), sub("\\.csv$", ".ranks.csv", table), row.names = FALSE)
}
