package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// runDigestFormat names the encoding RunDigest hashes. Changing what the
// digest covers changes every run id, orphaning every result directory:
// do it only with a new format name and a plan golden test updated on
// purpose (schema/plan TestPinnedID).
const runDigestFormat = "toolward run digest 2"

// runPart is the part of a case that shapes a run: the conversation the
// model is given and the tools it is offered. The case id, which seeds the
// distractor draw and the tool order, is hashed into run ids beside it.
// Expect, Golden, WhenGoldens, Description and Tags are left out: they
// judge or describe a run, and editing them must not change what was run.
type runPart struct {
	Format   string    `json:"format"`
	Prompt   string    `json:"prompt,omitempty"`
	System   string    `json:"system,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	Needs    []string  `json:"needs,omitempty"`
	Avoid    []string  `json:"avoid,omitempty"`
	// User is the rest of the conversation: scripted replies, or the
	// simulated user's instructions and turn limit. Absent for a single
	// request, so the digests of cases without a user block are those of
	// before it existed.
	User *User `json:"user,omitempty"`
	// Setup loads the world the model acts on; ExecuteUnoffered changes
	// what some of its calls do. Both absent when unset, so older
	// digests stand.
	Setup            []GoldenCall `json:"setup,omitempty"`
	ExecuteUnoffered bool         `json:"execute_unoffered,omitempty"`
}

// RunDigest returns the hex SHA-256 of the part of c that shapes its runs:
// prompt, system, messages, needs, avoid (in their given order, which
// is the order the model sees) and the user block (replies, or the
// simulated user's instructions and max_turns). The simulator's model
// and settings, which come from the run config, are hashed into run ids
// by package schema/plan. A field added to Case that changes the
// conversation or the offered tools must be added here.
func RunDigest(c *Case) string {
	b, err := json.Marshal(runPart{
		Format: runDigestFormat, Prompt: c.Prompt, System: c.System,
		Messages: c.Messages, Needs: c.Needs, Avoid: c.Avoid, User: c.User,
		Setup: c.Setup, ExecuteUnoffered: c.ExecuteUnoffered,
	})
	if err != nil {
		panic("schema: encoding a case's run part: " + err.Error()) // strings and lists of strings only
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
