package stats

// Significant reports whether the difference is significant at the 5%
// level: P < .05 with the 95% interval excluding 0 (the same thing, except
// when SE is 0 and P is the sign test's).
func significant(d Diff) bool { return d.Cases >= 2 && d.P < 0.05 && (d.Lo > 0 || d.Hi < 0) }
