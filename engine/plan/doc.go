// Package plan expands a run config's matrix, times its cases, into the
// runs a job executes, without ever materialising the list.
//
// A plan is a mixed-radix number: each run index decodes into one value per
// axis, with the model as the outermost (most significant) axis so that a
// job sends all of one model's runs before the next model's, and Ollama does
// not reload models when requests would otherwise alternate. The axes, from
// outermost to innermost, are model, case, seed, temperature, tool subset,
// confirm mode and description set.
//
// Steps:
//
//  1. New builds a Plan from a config and its loaded cases; memory is
//     proportional to the sum of the axis lengths, not their product.
//  2. Filter narrows axes (case id, tag, model, seed, …) by glob; the
//     result is again a lazy product.
//  3. Shard selects a contiguous, deterministic 1/n slice of the indexes.
//  4. Run(i) decodes index i into a Run whose ID is a hash of the case's
//     digest and the cell, so resume and sharding are exact.
package plan
