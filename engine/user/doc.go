// Package user is the user's side of a conversation: what the user says
// after each final answer of the model under test.
//
// A case's user block picks one of two kinds:
//
//   - Script sends the case's scripted replies (user.replies), one after
//     each final answer, in order; the conversation ends when the last
//     one has been answered. Deterministic, and no model is asked.
//   - Simulator asks a model (the run config's simulator) to play the
//     user from the case's instructions (user.instructions). It sees the
//     conversation from the user's side: its system prompt (the config's
//     framing with the instructions and the stop marker put in), its own
//     messages (the opening prompt first) as assistant turns and the
//     model's final answers as user turns; tool calls, tool results and
//     what the model wrote alongside a tool call are hidden. A reply
//     containing the stop marker ends the conversation. Its requests
//     carry backend.Key.Side = backend.SideUser, so a replay cassette
//     answers them from its turns with role user and the recorder writes
//     them there.
//
// The agent loop (package engine/agent) asks a User for the next message
// and owns the limits: user.max_turns and what happens at them.
package user
