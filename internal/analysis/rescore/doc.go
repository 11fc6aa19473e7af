// Package rescore judges the saved runs of a result directory again with
// the cases as they are now, for `toolward score`: no model and no MCP
// server, only the records and the case files.
//
// Dir reads the directory's config.json and runs.jsonl (never writing
// there) and writes a new result directory whose config.json notes
// ScoredFrom. A record is judged again (package matchers/score) only when
// its run is the run the current case would give: a case whose run
// digest changed (prompt, system, messages, needs, avoid, user), whose
// state probes changed, or whose record holds a value scoring reads only in part has
// its runs kept out, for `toolward run --resume` to run again; records of
// cases no longer in the case files are dropped, and error records copied
// as they were (but for those of kind judge, whose judge is asked
// again). A judged answer ({$judge: RUBRIC}) keeps its stored verdict
// while the judge's input digest stands; the others are put to the judge
// DirOptions.Judge opens, once and only when one is needed: analysis
// never links a model client, the caller hands the judge in. A record
// the new rules judge alike is copied as it was read. DirResult counts
// each of these, the judge's requests, and the changed verdicts per
// case. Building the reports is the caller's (package report, from
// DirOptions.Each).
package rescore
