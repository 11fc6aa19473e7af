// Package toolset decides which of a server's tools a run offers the model,
// in which order, and with which descriptions.
//
// Steps, for one run:
//
//  1. Select cuts the server's tool list to the cell's subset: needed (the
//     case's needs), count N (needs plus distractors), include (needs plus
//     named tools) or all.
//  2. Distractors are drawn per (case id), not per seed: the server's other
//     tools are ranked by a hash of (case id, tool name) and the first
//     N - len(needs) are taken, so the draw is prefix-stable: n8 ⊂ n16 ⊂ n32.
//  3. Unless the subset says order "given", the offered list is shuffled
//     with a generator seeded by (case id, subset name), identically on
//     every run and machine. Order "given" keeps the case's needs first,
//     in the case's order, then the other tools in draw order (count),
//     include order (include) or the server's listing order (all).
//  4. Descriptions.Apply replaces descriptions from a named set (a YAML
//     map of tool name to description, read by LoadDescriptions) before
//     the model sees them.
package toolset
