# challengeR 1.0.5's multi-task consensus as an oracle (test/ranking/test_challenger_live.py). Argument:
# a folder of tables <k>.csv of (task, alg, case, value), larger better; each task is ranked
# mean-then-rank (missing = 0, ties min) and the tasks' rankings are joined by consensus(method =
# "euclidean"); writes <k>.consensus.csv of (alg, score) beside each.
suppressMessages(library(challengeR))
folder <- commandArgs(trailingOnly = TRUE)[1]
for (table in list.files(folder, pattern = "^[0-9]+\\.csv$", full.names = TRUE)) {
  data <- read.csv(table, stringsAsFactors = FALSE)
  challenge <- suppressMessages(as.challenge(data, by = "task", algorithm = "alg", case = "case", value = "value"))
  ranking <- aggregateThenRank(challenge, FUN = mean, na.treat = 0, ties.method = "min")
  scores <- suppressMessages(consensus(ranking, method = "euclidean"))
  write.csv(data.frame(alg = names(scores), score = as.numeric(scores)), sub("\\.csv$", ".consensus.csv", table),
            row.names = FALSE)
}
