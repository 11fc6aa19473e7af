package score

import (
	"regexp"

	"github.com/toolward/toolward/schema/record"
)

// scoredPath matches the Truncation paths of values scoring reads: the
// answer, a turn's content (scanned for calls written as text), a call's
// tool or arguments, the turn, call and user-turn lists when they were
// dropped whole (the user turns place calls and answers in a
// conversation), "truncated", the note that stands for more than a
// hundred notes, and the state probes' results.
var scoredPath = regexp.MustCompile(`^(trace\.answer|trace\.turns|trace\.turns\[\d+\]\.content|trace\.calls|trace\.calls\[\d+\]\.(tool|args.*)|trace\.users|state.*|truncated)$`)

// Rescorable reports whether rec holds whole every value scoring reads,
// so that judging it again gives what judging the run's full trace
// would. A record stored in part (record.MaxFieldBytes) may not: its
// verdict was given on values it no longer holds. It returns the first
// such value's path when not.
func Rescorable(rec *record.Record) (bool, string) {
	for _, t := range rec.Truncated {
		if scoredPath.MatchString(t.Path) {
			return false, t.Path
		}
	}
	return true, ""
}
