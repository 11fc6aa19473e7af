package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// rawRecord is a run record with the trace left undecoded: what the
// decode floor decodes each line into.
type rawRecord struct {
	Version   int                 `json:"version"`
	ID        string              `json:"id"`
	Case      string              `json:"case"`
	Tags      []string            `json:"tags,omitempty"`
	Cell      record.Cell         `json:"cell"`
	Outcome   record.Outcome      `json:"outcome"`
	Reasons   []matchers.Reason   `json:"reasons,omitempty"`
	Error     *record.InfraError  `json:"error,omitempty"`
	Rules     string              `json:"rules,omitempty"`
	Attempts  int                 `json:"attempts"`
	Trace     json.RawMessage     `json:"trace"`
	Tokens    record.Tokens       `json:"tokens"`
	State     json.RawMessage     `json:"state,omitempty"`
	Started   time.Time           `json:"started"`
	Duration  record.Millis       `json:"duration_ms"`
	Truncated []record.Truncation `json:"truncated,omitempty"`
}

// floor decodes dir/runs.jsonl line by line into rawRecord (encoding/json,
// as the record reader does) and prints the count: the cost below which no
// analysis of the file can go while it decodes records with encoding/json.
func floor(dir string) error {
	f, err := os.Open(filepath.Join(dir, results.RunsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	n, pass := 0, 0
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 1 {
			var r rawRecord
			if err := json.Unmarshal(line, &r); err != nil {
				return fmt.Errorf("line %d: %w", n+1, err)
			}
			n++
			if r.Outcome == record.Pass {
				pass++
			}
		}
		if err != nil {
			break
		}
	}
	fmt.Printf("decoded %d records (%d pass)\n", n, pass)
	return nil
}
