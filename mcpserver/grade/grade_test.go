package grade

import (
	"reflect"
	"testing"
)

func TestSentences(t *testing.T) {
	got := Sentences("Revenue grew 3.5% in 2024. Costs fell! Why? \n- item one\n- item two\nDr. Smith signed, e.g. the Q3 plan. Done.")
	want := []string{"Revenue grew 3.5% in 2024.", "Costs fell!", "Why?", "- item one", "- item two", "Dr. Smith signed, e.g. the Q3 plan.", "Done."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sentences = %q, want %q", got, want)
	}
}

func TestGrade(t *testing.T) {
	src := "The Atlas project started in 2019 with a budget of $250,000. It is led by the platform team in Berlin and targets 95% uptime."
	res := Grade("Atlas started in 2019 with a $250000 budget. The platform team in Berlin leads it. It was founded in 2011 with 80 engineers. Customers love its pricing model and marketing campaigns.", []string{src})
	want := []struct {
		ok     bool
		reason string
	}{
		{true, "3 of 3 content words found in sources (100%)"},
		{true, "3 of 4 content words found in sources (75%)"},
		{false, "figures not in sources: 2011, 80"},
		{false, "low overlap with sources: 0 of 6 content words found in sources (0%)"},
	}
	if len(res.Sentences) != len(want) {
		t.Fatalf("got %d sentences: %+v", len(res.Sentences), res.Sentences)
	}
	for i, w := range want {
		s := res.Sentences[i]
		if s.Supported != w.ok || s.Reason != w.reason {
			t.Errorf("sentence %d %q: supported %v reason %q, want %v %q", i, s.Text, s.Supported, s.Reason, w.ok, w.reason)
		}
	}
	if res.Score != 0.5 {
		t.Errorf("score = %v, want 0.5", res.Score)
	}
}

func TestFigures(t *testing.T) {
	var got []string
	for _, f := range figures("Q3 of 2024: 84,960 (12%), v2 and 3.25 and k1=1.2") {
		got = append(got, f.text)
	}
	want := []string{"2024", "84,960", "12", "3.25", "1.2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("figures = %q, want %q", got, want)
	}
	res := Grade("The total is 84960.0 dollars.", []string{"total: 84,960 dollars"})
	if res.Score != 1 {
		t.Errorf("figures compare by value: %+v", res)
	}
}

func TestEmpty(t *testing.T) {
	if res := Grade("", []string{"x"}); res.Score != 0 || len(res.Sentences) != 0 {
		t.Errorf("empty answer: %+v", res)
	}
	if res := Grade("It is.", nil); res.Score != 1 || res.Sentences[0].Reason != "no checkable claim" {
		t.Errorf("no claim: %+v", res)
	}
}
