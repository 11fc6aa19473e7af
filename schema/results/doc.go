// Package results owns a result directory, results/<config name>/<UTC
// stamp>/: its config.json (what was run, with which versions) and its
// runs.jsonl (one record per finished run), for a new job, a resumed one,
// and the merge of shards.
//
// Layout and rules:
//
//   - Create makes a new directory named by the UTC start time
//     (20261130T082501Z), with a numeric suffix if that name is taken.
//   - config.json is written atomically (temporary file, then rename).
//   - runs.jsonl is opened O_APPEND and written one complete line per
//     finished run, so a crash loses at most the runs in flight; a
//     truncated last line is skipped by readers.
//   - Runs (and RunsSummary, which gives each record with a whole func,
//     and RunsLines, which gives its line too) is the one reader of
//     runs.jsonl, used by resume (Compact), merge, report, diff and
//     score, with one de-duplication rule: a run
//     id is represented by its first pass or fail record, or, when it has
//     none, by its first record of another outcome; later records of the
//     id are duplicates, unreadable lines are skipped. Each consumer then
//     decides what a non-verdict means to it.
//   - Compact, used by resume, rewrites runs.jsonl (atomically) keeping
//     the pass or fail record Runs chose for each run and dropping error
//     records and unreadable lines, and returns the positions kept:
//     exactly the runs that need not run again. Runs that ended in an
//     infrastructure error are therefore re-run on resume, and no id
//     appears twice in the file.
//   - Compact's locate may update a record before it is written back:
//     resume re-scores there the records of cases whose scoring rules
//     changed (package score).
//   - MergeEach joins shard directories of one job into a new directory,
//     checking they share a config, cases, scoring rules, filters and
//     tool list, and writes the records Runs chooses over the directories
//     read as one stream, handing each to the caller (the reports).
//   - config.json carries a format version (MetaVersion); a format 1
//     directory (Meta.Legacy) reads, reports and compares, but its run ids
//     cannot be matched to cases as they are now.
//   - CreateIn and WriteRunLines make the new directory `toolward score`
//     writes, never touching the one it read.
//   - Readers open only regular files: config.json within MaxMetaBytes
//     (ReadMetaBytes), runs.jsonl checked before it is opened, so a named
//     pipe or a device in a result directory is an error, not a hang or
//     an exhausted memory.
//   - Members rebuilds, from config.json alone, which records are runs of
//     the directory's plan (case, cell and run id agree); merge, report
//     and diff leave the others out and count them (Foreign).
package results
