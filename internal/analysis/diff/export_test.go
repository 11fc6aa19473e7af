package diff

import "strings"

// verdictString names a verdict in test messages.
func verdictString(v Verdict) string {
	if len(v.Reasons) == 0 {
		return v.Outcome
	}
	return v.Outcome + " [" + strings.Join(v.Reasons, ", ") + "]"
}
