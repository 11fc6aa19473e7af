package diff

import "strings"

// verdictString names a verdict in test messages.
func verdictString(v Recorded) string {
	if len(v.Reasons) == 0 {
		return string(v.Outcome)
	}
	return string(v.Outcome) + " [" + strings.Join(v.Reasons, ", ") + "]"
}
