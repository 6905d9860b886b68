# challengeR 1.0.5's bootstrap as an oracle (test/ranking/test_challenger_live.py). Arguments: a folder
# of tables <k>.csv of (alg, case, value), larger better, and the number of resamples. For each table
# and scheme (mean_na0, rank_mean, test_none) it writes <k>.<scheme>.ranks.csv (the resamples' ranks,
# one column per resample) and <k>.<scheme>.cases.csv (the cases each resample drew, one row per
# resample). The draws are recovered by repeating challengeR's own call, sample(cases, replace = TRUE)
# per resample under the same seed: its ranking functions draw no random numbers.
suppressMessages(library(challengeR))
args <- commandArgs(trailingOnly = TRUE)
nboot <- as.integer(args[2])
for (table in list.files(args[1], pattern = "^[0-9]+\\.csv$", full.names = TRUE)) {
  data <- read.csv(table, stringsAsFactors = FALSE)
  challenge <- suppressMessages(as.challenge(data, algorithm = "alg", case = "case", value = "value"))
  rankings <- list(
    mean_na0 = aggregateThenRank(challenge, FUN = mean, na.treat = 0, ties.method = "min"),
    rank_mean = rankThenAggregate(challenge, FUN = mean, ties.method = "min"),
    test_none = testThenRank(challenge, alpha = 0.05, p.adjust.method = "none", na.treat = 0, ties.method = "min")
  )
  for (name in names(rankings)) {
    prefix <- sub("\\.csv$", paste0(".", name), table)
    set.seed(1)
    booted <- suppressMessages(bootstrap(rankings[[name]], nboot = nboot, progress = "none"))
    write.csv(booted$bootsrappedRanks[[1]], paste0(prefix, ".ranks.csv"))
    set.seed(1)
    cases <- unique(rankings[[name]]$data[[1]]$case)
    draws <- t(sapply(seq_len(nboot), function(b) as.character(sample(cases, size = length(cases), replace = TRUE))))
    write.csv(draws, paste0(prefix, ".cases.csv"), row.names = FALSE)
  }
}
