package search

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	got := Tokenize("The Q3-2024 budgets, for Engineering's teams: $1,200 retries; class status!")
	want := []string{"q3", "2024", "budget", "engineering", "s", "team", "1", "200", "retry", "class", "status"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tokenize = %q, want %q", got, want)
	}
}

// TestBM25ByHand checks scores against values worked out on paper for a
// three-document corpus:
//
//	a: apple banana apple          (3 terms)
//	b: banana cherry               (2 terms)
//	c: cherry date elderberry fig  (4 terms)
//
// N = 3, avgdl = 3.
func TestBM25ByHand(t *testing.T) {
	ix := New(map[string]string{
		"a": "apple banana apple",
		"b": "The banana, cherry.", // "the" is a stopword
		"c": "cherry date elderberry fig",
	}, 0)

	// apple: df 1, idf = ln(1 + 2.5/1.5); in a, tf 2, |a| = avgdl so the
	// length norm is 1: 2·2.2 / (2 + 1.2) = 1.375.
	apple := math.Log(1+2.5/1.5) * 4.4 / 3.2
	// banana: df 2, idf = ln(1 + 1.5/2.5) = ln 1.6.
	// in a: 2.2 / (1 + 1.2·1) = 1; in b: 2.2 / (1 + 1.2·(0.25 + 0.75·2/3)) = 2.2/1.9.
	bananaA := math.Log(1.6) * 1
	bananaB := math.Log(1.6) * 2.2 / 1.9

	check := func(query string, want []Hit) {
		t.Helper()
		got := ix.Search(query, 5)
		if len(got) != len(want) {
			t.Fatalf("Search(%q) = %v, want %v", query, got, want)
		}
		for i := range want {
			if got[i].Source != want[i].Source || math.Abs(got[i].Score-want[i].Score) > 1e-12 {
				t.Errorf("Search(%q)[%d] = %s %.12f, want %s %.12f", query, i, got[i].Source, got[i].Score, want[i].Source, want[i].Score)
			}
		}
	}
	check("apple", []Hit{{Source: "a", Score: apple}})
	check("banana", []Hit{{Source: "b", Score: bananaB}, {Source: "a", Score: bananaA}})
	// Query terms count once however often they repeat.
	check("Apple apple BANANA", []Hit{{Source: "a", Score: apple + bananaA}, {Source: "b", Score: bananaB}})
	check("the of and", nil)
	check("kiwi", nil)

	if got := ix.Search("banana", 1); len(got) != 1 || got[0].Source != "b" {
		t.Errorf("topK 1: %v", got)
	}
}

func TestChunking(t *testing.T) {
	words := make([]string, 25)
	for i := range words {
		words[i] = "w" + string(rune('a'+i))
	}
	ix := New(map[string]string{"long": strings.Join(words, " "), "empty": ""}, 10)
	docs := ix.Documents()
	want := []Document{{"empty", 1, 0}, {"long", 3, 25}}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("Documents = %v, want %v", docs, want)
	}
	hits := ix.Search("wy", 5) // 25th word, in the third chunk
	if len(hits) != 1 || hits[0].Chunk != 2 || hits[0].Text != "wu wv ww wx wy" {
		t.Errorf("Search(wy) = %+v", hits)
	}
}

func TestLoad(t *testing.T) {
	docs, err := LoadPath("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || !strings.Contains(docs["alpha"], "banana") || docs["beta"] != "Cherry notes.\n" {
		t.Errorf("LoadPath(dir) = %q", docs)
	}
	p := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(p, []byte(`{"x": "some text"}`), 0o644)
	docs, err = LoadPath(p)
	if err != nil || docs["x"] != "some text" {
		t.Errorf("LoadPath(json) = %q, %v", docs, err)
	}
	os.WriteFile(p, []byte(`["not", "an object"]`), 0o644)
	if _, err := LoadPath(p); err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("LoadPath(bad json) error = %v", err)
	}
	if _, err := LoadPath(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("LoadPath(missing) succeeded")
	}
	if _, err := LoadPath(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .md or .txt") {
		t.Errorf("LoadPath(empty dir) error = %v", err)
	}
}
