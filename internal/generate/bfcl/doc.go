// Package bfcl converts the single-turn categories of the Berkeley
// Function Calling Leaderboard (BFCL, v3/v4 data layout) into toolward
// cases, a tool catalog for the bundled MCP server and replay cassettes.
//
// Its position: `toolward import bfcl DATA_DIR --out DIR` calls Read, then
// Convert, then Write; nothing here runs a model or a server.
//
// Steps:
//
//  1. Read finds BFCL_v<N>_<category>.json question files in DATA_DIR and
//     possible_answer/BFCL_v<N>_<category>.json answer files, JSON lines
//     each; categories out of scope (multi-turn, memory, web search,
//     format sensitivity) and unknown ones are skipped with a reason.
//  2. Convert turns every entry into one case whose id is the BFCL id:
//     the question becomes the prompt (or messages), the functions become
//     catalog tools (BFCL types converted to JSON Schema the way BFCL
//     converts them for function-calling models, dotted names mapped to
//     underscores), and the possible answer becomes expectations whose
//     matchers give the verdicts of BFCL's AST checker: $int for integer
//     parameters, $norm (BFCL's string normalisation) for strings,
//     $absent_or where "" marks an optional parameter, strict_args,
//     unordered calls matched one to one, max_calls equal to the number
//     of answer calls. The golden is the first acceptable answer, and a
//     cassette replays it.
//  3. Write lays the result out under DIR: cases/, catalog/, cassettes/,
//     bfcl.cue and case.schema.json.
//
// docs/bfcl.md lists every deliberate difference from BFCL's verdicts.
package bfcl
