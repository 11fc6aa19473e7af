package search

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/toolward/toolward/internal/userfile"
)

// BM25 parameters.
const (
	K1 = 1.2
	B  = 0.75
)

// ChunkWords is the default chunk size in words.
const ChunkWords = 120

// stopwords are dropped by Tokenize: frequent function words that carry
// no topic.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for from has have he her his i if in into is it its
		of on or our she so than that the their them then there these they this to was we were what when where which
		who will with would you your do does did not no can could should about how`) {
		stopwords[w] = true
	}
}

// Tokenize lowercases text, splits it on every rune that is not a letter
// or a digit, drops stopwords and folds plurals (see Stem).
func Tokenize(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if !stopwords[w] {
			out = append(out, Stem(w))
		}
	}
	return out
}

// Stem folds a regular English plural onto its singular: "retries" →
// "retry", "budgets" → "budget". Words ending in ss, us or is ("class",
// "status", "analysis") and short words are left alone.
func Stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// Chunk is one indexed passage.
type Chunk struct {
	Source string // document id
	Index  int    // chunk number within the document, from 0
	Text   string
	terms  map[string]int
	length int
}

// Document summarises one indexed document.
type Document struct {
	Source string `json:"source"`
	Chunks int    `json:"chunks"`
	Words  int    `json:"words"`
}

// Hit is one ranked chunk.
type Hit struct {
	Source string  `json:"source"`
	Chunk  int     `json:"chunk"`
	Score  float64 `json:"score"`
	Text   string  `json:"text"`
}

// Index is an immutable BM25 index; it is safe for concurrent use.
type Index struct {
	docs   []Document
	texts  map[string]string
	chunks []Chunk
	df     map[string]int
	avgdl  float64
}

// New indexes docs (source id → text), splitting each into chunks of
// chunkWords words (ChunkWords if chunkWords <= 0).
func New(docs map[string]string, chunkWords int) *Index {
	if chunkWords <= 0 {
		chunkWords = ChunkWords
	}
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ix := &Index{df: map[string]int{}, texts: map[string]string{}}
	total := 0
	for _, id := range ids {
		text := docs[id]
		ix.texts[id] = text
		words := strings.Fields(text)
		n := 0
		// An empty document still gets one (empty) chunk.
		for start := 0; start == 0 || start < len(words); start += chunkWords {
			end := min(start+chunkWords, len(words))
			c := Chunk{Source: id, Index: n, Text: strings.Join(words[start:end], " "), terms: map[string]int{}}
			for _, t := range Tokenize(c.Text) {
				c.terms[t]++
				c.length++
			}
			for t := range c.terms {
				ix.df[t]++
			}
			total += c.length
			ix.chunks = append(ix.chunks, c)
			n++
		}
		ix.docs = append(ix.docs, Document{Source: id, Chunks: n, Words: len(words)})
	}
	if len(ix.chunks) > 0 {
		ix.avgdl = float64(total) / float64(len(ix.chunks))
	}
	return ix
}

// Documents lists the indexed documents sorted by source id.
func (ix *Index) Documents() []Document { return append([]Document(nil), ix.docs...) }

// Text returns a document's full text.
func (ix *Index) Text(source string) (string, bool) {
	t, ok := ix.texts[source]
	return t, ok
}

// IDF returns the inverse document frequency of term t.
func (ix *Index) IDF(t string) float64 {
	n := float64(len(ix.chunks))
	df := float64(ix.df[t])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// Search returns the topK best chunks for query, best first; chunks that
// share no term with the query are left out. Ties break by source, then
// chunk number.
func (ix *Index) Search(query string, topK int) []Hit {
	seen := map[string]bool{}
	var terms []string
	for _, t := range Tokenize(query) {
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	idf := make([]float64, len(terms))
	for i, t := range terms {
		idf[i] = ix.IDF(t)
	}
	var hits []Hit
	for _, c := range ix.chunks {
		s := 0.0
		for i, t := range terms {
			tf := float64(c.terms[t])
			if tf == 0 {
				continue
			}
			s += idf[i] * tf * (K1 + 1) / (tf + K1*(1-B+B*float64(c.length)/ix.avgdl))
		}
		if s > 0 {
			hits = append(hits, Hit{Source: c.Source, Chunk: c.Index, Score: s, Text: c.Text})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		if hits[i].Source != hits[j].Source {
			return hits[i].Source < hits[j].Source
		}
		return hits[i].Chunk < hits[j].Chunk
	})
	if topK > 0 && len(hits) > topK {
		hits = hits[:topK]
	}
	return hits
}

// LoadFS reads every .md and .txt file directly inside dir of fsys; the
// source id is the file name without its extension.
func LoadFS(fsys fs.FS, dir string) (map[string]string, error) {
	return loadDocs(fsys, dir, func(name string) ([]byte, error) { return fs.ReadFile(fsys, path.Join(dir, name)) })
}

// loadDocs lists dir of fsys and reads each document with read.
func loadDocs(fsys fs.FS, dir string, read func(name string) ([]byte, error)) (map[string]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading corpus: %w", err)
	}
	docs := map[string]string{}
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if e.IsDir() || (ext != ".md" && ext != ".txt") {
			continue
		}
		id := strings.TrimSuffix(e.Name(), ext)
		if _, dup := docs[id]; dup {
			return nil, fmt.Errorf("reading corpus: two documents with source id %q", id)
		}
		b, err := read(e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading corpus: %w", err)
		}
		docs[id] = string(b)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("reading corpus: no .md or .txt files in %s", dir)
	}
	return docs, nil
}

// MaxCorpusBytes bounds a corpus read from the filesystem: the JSON
// file, or the .md and .txt files of a directory together.
const MaxCorpusBytes = 64 << 20

// LoadPath reads a corpus from the filesystem: a JSON file holding an
// object {"source id": "text", …}, or a directory of .md/.txt files. Only
// regular files are read, MaxCorpusBytes at most.
func LoadPath(p string) (map[string]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("reading corpus: %w", err)
	}
	if st.IsDir() {
		var total int64
		docs, err := loadDocs(os.DirFS(p), ".", func(name string) ([]byte, error) {
			b, err := userfile.Read(filepath.Join(p, name), "corpus document", MaxCorpusBytes)
			if total += int64(len(b)); total > MaxCorpusBytes {
				return nil, fmt.Errorf("the documents hold more than %s in all", userfile.ByteSize(MaxCorpusBytes))
			}
			return b, err
		})
		if err != nil {
			return nil, fmt.Errorf("%w (corpus %s)", err, p)
		}
		return docs, nil
	}
	b, err := userfile.Read(p, "corpus file", MaxCorpusBytes)
	if err != nil {
		return nil, fmt.Errorf("reading corpus: %w", err)
	}
	var docs map[string]string
	if err := json.Unmarshal(b, &docs); err != nil {
		return nil, fmt.Errorf("reading corpus %s: want a JSON object {\"source id\": \"text\"}: %w", p, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("reading corpus %s: no documents", p)
	}
	return docs, nil
}
