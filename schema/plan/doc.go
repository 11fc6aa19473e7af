// Package plan expands a run config's matrix, times its cases, into the
// runs a job executes, without ever materialising the list.
//
// A plan is a mixed-radix number: each run index decodes into one value per
// axis, with the model as the outermost (most significant) axis so that a
// job sends all of one model's runs before the next model's, and Ollama does
// not reload models when requests would otherwise alternate. The axes, from
// outermost to innermost, are those of package schema/cell's table in its
// order, with the case axis after the model (AxisNames): model, case,
// seed, temperature, tool subset, confirm mode, description set, options
// set. The plan holds every axis as a list of formatted values read from
// the config's matrix through the table; the tools axis also keeps its
// subsets, the one axis whose values are more than their names.
//
// Steps:
//
//  1. New builds a Plan from a config and its loaded cases; memory is
//     proportional to the sum of the axis lengths, not their product.
//  2. Filter narrows axes (case id, tag, model, seed, …) by patterns of
//     the selector language of package schema/cell, the one cassettes and
//     case `when` entries use; the result is again a lazy product. Axis
//     values are formatted by schema/cell's table, in ids as in filters.
//  3. Shard selects a contiguous, deterministic 1/n slice of the indexes.
//  4. Run(i) decodes index i into a Run whose ID is a hash of the case id,
//     its run digest (schema.RunDigest: prompt, system, messages, needs,
//     avoid, user), the simulator's settings for a simulated case and the
//     cell, so resume and sharding are exact, and editing
//     how a case judges its runs (expect, golden) or describes itself
//     (description, tags) keeps every id (TestPinnedID pins one).
//  5. A Locator finds a record's run in a plan in O(1) from its case and
//     cell, and tells a run whose case changed what the model sees (the
//     id differs) from one the plan does not hold.
//
// Build does steps 1 to 3 as a job does: the config's own filter, then
// the command line's, then the shard.
package plan
