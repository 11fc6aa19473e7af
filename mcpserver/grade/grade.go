package grade

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolward/toolward/mcpserver/search"
)

// MinCoverage is the fraction of a sentence's content words that must
// appear in the sources for the sentence to count as supported.
const MinCoverage = 0.5

// Sentence is the verdict on one sentence of the answer.
type Sentence struct {
	Text      string `json:"text"`
	Supported bool   `json:"supported"`
	Reason    string `json:"reason"`
}

// Result is the grade of a whole answer.
type Result struct {
	Score     float64    `json:"score"` // supported sentences / sentences
	Threshold float64    `json:"threshold"`
	Sentences []Sentence `json:"sentences"`
}

var sentenceEnd = regexp.MustCompile(`[.!?]+["')\]]*\s+|\n+`)

// abbreviations end with a period but not a sentence.
var abbreviations = map[string]bool{
	"dr.": true, "mr.": true, "mrs.": true, "ms.": true, "prof.": true, "st.": true,
	"e.g.": true, "i.e.": true, "etc.": true, "vs.": true, "inc.": true, "ltd.": true, "no.": true, "approx.": true,
}

// Sentences splits text into trimmed, non-empty sentences. A period after
// a common abbreviation ("Dr.", "e.g.") does not end a sentence.
func Sentences(text string) []string {
	var out []string
	last := 0
	for _, m := range sentenceEnd.FindAllStringIndex(text, -1) {
		end := m[1]
		if words := strings.Fields(text[last : m[0]+1]); len(words) > 0 && abbreviations[strings.ToLower(words[len(words)-1])] && !strings.Contains(text[m[0]:end], "\n") {
			continue
		}
		if s := strings.TrimSpace(text[last:end]); s != "" {
			out = append(out, s)
		}
		last = end
	}
	if s := strings.TrimSpace(text[last:]); s != "" {
		out = append(out, s)
	}
	return out
}

var figureRE = regexp.MustCompile(`\d+(?:,\d{3})*(?:\.\d+)?`)

// figure is one number found in a text, as written and as a value.
type figure struct {
	text  string
	value float64
}

// figures returns the numbers stated in text. A number glued to a
// preceding letter (Q3, k1, v2) is part of a name, not a figure.
func figures(text string) []figure {
	var out []figure
	for _, m := range figureRE.FindAllStringIndex(text, -1) {
		if m[0] > 0 {
			r, _ := utf8.DecodeLastRuneInString(text[:m[0]])
			if unicode.IsLetter(r) || r == '_' || r == '.' {
				continue
			}
		}
		s := text[m[0]:m[1]]
		v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		if err != nil {
			continue
		}
		out = append(out, figure{text: s, value: v})
	}
	return out
}

// contentWords returns the distinct non-numeric terms of text (plurals
// folded by search.Tokenize).
func contentWords(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range search.Tokenize(text) {
		if isNumeric(t) || len(t) < 2 {
			continue
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func isNumeric(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// Grade grades answer against sources (the source texts themselves).
func Grade(answer string, sources []string) Result {
	vocab := map[string]bool{}
	values := map[float64]bool{}
	for _, src := range sources {
		for _, w := range contentWords(src) {
			vocab[w] = true
		}
		for _, f := range figures(src) {
			values[f.value] = true
		}
	}
	res := Result{Threshold: MinCoverage, Sentences: []Sentence{}}
	supported := 0
	for _, s := range Sentences(answer) {
		v := judge(s, vocab, values)
		if v.Supported {
			supported++
		}
		res.Sentences = append(res.Sentences, v)
	}
	if n := len(res.Sentences); n > 0 {
		res.Score = float64(supported) / float64(n)
	}
	return res
}

func judge(s string, vocab map[string]bool, values map[float64]bool) Sentence {
	var missing []string
	for _, f := range figures(s) {
		if !values[f.value] && !slices.Contains(missing, f.text) {
			missing = append(missing, f.text)
		}
	}
	if len(missing) > 0 {
		return Sentence{Text: s, Reason: "figures not in sources: " + strings.Join(missing, ", ")}
	}
	words := contentWords(s)
	if len(words) == 0 {
		return Sentence{Text: s, Supported: true, Reason: "no checkable claim"}
	}
	found := 0
	for _, w := range words {
		if vocab[w] {
			found++
		}
	}
	cov := float64(found) / float64(len(words))
	reason := fmt.Sprintf("%d of %d content words found in sources (%.0f%%)", found, len(words), 100*cov)
	if cov < MinCoverage {
		return Sentence{Text: s, Reason: "low overlap with sources: " + reason}
	}
	return Sentence{Text: s, Supported: true, Reason: reason}
}
