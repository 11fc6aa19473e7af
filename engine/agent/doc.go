// Package agent runs one conversation between a model and a set of tools:
// the agent loop of a single run, recording everything it does.
//
// Steps:
//
//  1. The conversation starts with the case's system prompt, then its
//     prompt as a user message (or its scripted message prefix).
//  2. Each turn sends the conversation and the offered tools to the
//     backend. A reply without tool calls ends the run: its content is the
//     answer. A reply with tool calls is appended, each call is carried out
//     in order, and each result goes back as a "tool" message.
//  3. A call to a tool that was not offered, or with arguments that are not
//     a JSON object, is not sent to the server; the model gets an error
//     result explaining why, and the call is recorded (NotOffered,
//     Malformed with RawArgs). Empty or null arguments count as {}.
//     Numbers in the arguments stay json.Number, the text the model
//     wrote, all the way to the scorer and runs.jsonl, so an integer
//     matcher can reject 10.0; a number no float64 can hold (1e400)
//     makes the call malformed.
//  4. At most MaxCallsPerTurn calls of one turn (DefaultMaxCallsPerTurn)
//     are sent to the server; the turn's further well-formed calls are
//     recorded with NotExecuted set and answered with an error result.
//     They are the model's calls all the same: the scorer counts them
//     (max_calls, forbid). The backends bound the calls of one reply too
//     (MaxReplyCalls, a cut reply), so a turn's cost stays bounded.
//  5. After MaxIterations model turns without a final answer to the
//     current user message, the run stops with OutOfTurns set (the
//     engine fails it with max_iterations).
//  6. In a conversation (Input.User, from the case's user block), a final
//     answer is not the end: the User (package engine/user: scripted
//     replies or a simulated user) gives the next user message, which is
//     appended after the answer, and the loop goes on; Trace.Users
//     records every user message, the opening first, with the index of
//     the model turn after it. The conversation ends when the User has
//     nothing more (a script's last reply was answered) or writes its
//     stop marker, or, when the answer to the MaxUserTurns-th message
//     still gets a reply, with OutOfUserTurns set (the engine fails it
//     with max_turns); a message that ends it is recorded as unsent.
//     Model turns are numbered across the conversation (backend.Key.Turn).
//  7. The conversation sent is bounded (MaxConversationBytes, every
//     message, call and result counted): before a model turn that would
//     send more, the run ends with an error naming the limit, the
//     simulated user's (kind simulator) when its reply put it over.
//
// The loop owns no policy beyond this: timeouts come from the context (run
// timeout) and Input.CallTimeout (per tool call); retries are the
// engine's. An error return is always an infrastructure failure; the trace
// up to that point is returned with it.
package agent
