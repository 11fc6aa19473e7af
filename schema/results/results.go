package results

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
)

// File names inside a result directory.
const (
	ConfigFile = "config.json"
	RunsFile   = "runs.jsonl"
	StderrFile = "server-stderr.log"
)

// MetaVersion is the format version of config.json.
//
// Version 2 (this one): Cases maps each case to its run digest
// (schema.RunDigest, what the model sees), of which run ids are hashes,
// and Rules to the digest of its scoring rules. Version 1, which had no
// version field (read as 0), mapped each case to a digest of its whole
// content and hashed that into run ids; ReadMeta reads it, but its runs
// cannot be matched to cases as they are now (see Meta.Legacy).
const MetaVersion = 2

// Meta is config.json: everything needed to know what a directory holds
// and to resume, merge or re-score it.
type Meta struct {
	Version  int    `json:"version"`  // MetaVersion when written; 0 for version 1
	Toolward string `json:"toolward"` // toolward version
	// ConfigFile is the config's path as given; ConfigDigest a SHA-256 of
	// the resolved config's JSON, which resume and merge compare.
	ConfigFile   string         `json:"config_file"`
	ConfigDigest string         `json:"config_digest"`
	Config       *schema.Config `json:"config"`
	Filters      []string       `json:"filters,omitempty"` // --filter values, as given
	Shard        string         `json:"shard,omitempty"`   // "i/n" or ""
	// Planned is the number of runs this directory's plan holds (after
	// filters and shard); Total the whole plan's (before the shard).
	Planned int64        `json:"planned"`
	Total   int64        `json:"total"`
	Backend *BackendInfo `json:"backend,omitempty"` // preflight facts: server version, model digests
	// Simulator is the preflight facts of the simulated user's backend
	// (config.simulator), when the plan has a simulated user; the same
	// kind of facts as Backend, for the simulator's model.
	Simulator *BackendInfo `json:"simulator,omitempty"`
	// Judge is the preflight facts of the judge's backend (config.judge),
	// when the plan has a judged answer.
	Judge  *BackendInfo `json:"judge,omitempty"`
	Server *Server      `json:"mcp_server,omitempty"` // the MCP server and its tool list
	// Cases maps case id -> run digest (schema.RunDigest) and Rules case
	// id -> scoring rules digest (score.Rules.Digest) of the cases as the
	// directory's records were run and judged.
	Cases   map[string]string `json:"cases"`
	Rules   map[string]string `json:"rules,omitempty"`
	Created time.Time         `json:"created"`
	// MergedFrom lists the shard directories a merged directory joins.
	MergedFrom []string `json:"merged_from,omitempty"`
	// ScoredFrom is the directory `toolward score` re-judged into this
	// one; its records were run there, and judged again here.
	ScoredFrom string `json:"scored_from,omitempty"`
}

// Legacy reports whether m was written by format version 1, whose run
// ids hashed each case's whole content (scoring rules included), so its
// runs cannot be matched to the cases as they are now: it can be
// reported and compared, not resumed or re-scored.
func (m *Meta) Legacy() bool { return m.Version < 2 }

// ErrLegacy explains why a format version 1 directory cannot be resumed
// or re-scored; callers wrap it with the directory.
var ErrLegacy = errors.New("written by an older toolward (config.json format 1), whose run ids hashed the scoring rules too, so its runs cannot be matched to the cases as they are now; start a new run (its reports and diffs still work)")

// DigestConfig returns the hex SHA-256 of cfg's JSON encoding.
func DigestConfig(cfg *schema.Config) (string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("results: encoding config: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Stamp formats t as a directory name: 20261130T082501Z.
func Stamp(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// Create makes root/<name>/<stamp> (suffixed -2, -3, … if taken) and
// returns its path.
func Create(root, name string, now time.Time) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "", fmt.Errorf("results: config name %q cannot name a directory", name)
	}
	return CreateIn(filepath.Join(root, name), now)
}

// CreateIn makes parent/<stamp> (suffixed -2, -3, … if taken), creating
// parent if needed, and returns its path.
func CreateIn(parent string, now time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	base := Stamp(now)
	for i := 1; ; i++ {
		dir := filepath.Join(parent, base)
		if i > 1 {
			dir += "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			return "", fmt.Errorf("results: %w", err)
		}
	}
}

// CreateAt makes dir as a new result directory: it must not exist, or be
// an empty directory.
func CreateAt(dir string) error {
	if err := mkdirEmpty(dir); err != nil {
		if errors.Is(err, errNotEmpty) {
			err = fmt.Errorf("%w; choose a new directory, or continue it with --resume", err)
		}
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

var errNotEmpty = errors.New("not empty")

// mkdirEmpty creates dir, or accepts it when it exists and is empty, or
// holds only a lock file (LockOnly): a job killed before it wrote
// config.json leaves that, and the caller's Lock then refuses the
// directory if that job is in fact still alive.
func mkdirEmpty(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 && !LockOnly(dir) {
		return fmt.Errorf("%s is %w", dir, errNotEmpty)
	}
	return nil
}

// LockOnly reports whether dir holds nothing but a regular LockFile.
func LockOnly(dir string) bool {
	ents, err := os.ReadDir(dir)
	return err == nil && len(ents) == 1 && ents[0].Name() == LockFile && ents[0].Type().IsRegular()
}

// WriteMeta writes dir/config.json atomically. A new directory's Meta
// has Version MetaVersion; a merged one keeps its inputs'.
func WriteMeta(dir string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("results: encoding %s: %w", ConfigFile, err)
	}
	return writeAtomic(filepath.Join(dir, ConfigFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadMeta reads dir/config.json (through ReadMetaBytes: a regular file
// of at most MaxMetaBytes).
func ReadMeta(dir string) (*Meta, error) {
	b, err := ReadMetaBytes(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errNoMeta(dir)
		}
		return nil, err
	}
	return DecodeMeta(dir, b)
}

// DecodeMeta decodes b, the bytes of dir/config.json, as ReadMeta does.
func DecodeMeta(dir string, b []byte) (*Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ConfigFile), err)
	}
	if m.Config == nil {
		return nil, fmt.Errorf("%s: no config", filepath.Join(dir, ConfigFile))
	}
	if m.Version > MetaVersion {
		return nil, fmt.Errorf("%s: format version %d is newer than this toolward reads (%d); upgrade toolward", filepath.Join(dir, ConfigFile), m.Version, MetaVersion)
	}
	return &m, nil
}

// OpenRuns opens dir/runs.jsonl for appending, creating it if needed.
func OpenRuns(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, RunsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}

// Compacted says what Compact kept and dropped.
type Compacted struct {
	// Done holds the plan positions of the kept records: one pass or
	// fail record per run.
	Done       map[int64]struct{}
	Errors     int // error records dropped: those runs run again
	Duplicates int // records of a run already represented (see Runs), or of a position already kept
	Foreign    int // records locate did not place in the plan
	Unknown    int // records whose outcome is not pass, fail or error
	Bad        int // unreadable lines (a crash mid-write, typically)
}

// Compact rewrites dir/runs.jsonl for a resume, keeping the record Runs
// chooses for each run of the job's plan when it is a pass or fail
// record, and says what it dropped. locate gives a record's position in
// the plan, or false for a record of a run the plan does not hold (or
// that must run again); it is called once per chosen record, and may
// update the record (the engine re-judges one judged by older scoring
// rules), which is then written back as updated. Memory is proportional
// to the records kept, not to the plan. When ctx ends, Compact returns
// its error and leaves the file as it was.
func Compact(ctx context.Context, dir string, locate func(*record.Record) (int64, bool)) (*Compacted, error) {
	res := &Compacted{Done: map[int64]struct{}{}}
	path := filepath.Join(dir, RunsFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	err := writeAtomic(path, func(w io.Writer) error {
		st, err := Runs(func(rec *record.Record) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !res.add(rec, locate) {
				return nil
			}
			return writeLine(w, rec)
		}, dir)
		if st != nil {
			res.Duplicates += st.Duplicates
			res.Bad = st.BadLines
		}
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// add counts rec, a record Runs chose, and reports whether Compact keeps
// it.
func (c *Compacted) add(rec *record.Record, locate func(*record.Record) (int64, bool)) bool {
	if !record.KnownOutcome(rec.Outcome) {
		c.Unknown++
		return false
	}
	i, ok := locate(rec)
	switch {
	case !ok:
		c.Foreign++
		return false
	case rec.Outcome == record.Error:
		c.Errors++
		return false
	}
	if _, dup := c.Done[i]; dup {
		c.Duplicates++
		return false
	}
	c.Done[i] = struct{}{}
	return true
}

// MergeResult says what Merge did.
type MergeResult struct {
	Runs, Errors int // records written; of which outcome error
	Duplicates   int // records dropped as duplicates of an id
	Bad          int // unreadable lines skipped
	Unknown      int // records skipped for an outcome other than pass, fail or error
	// Foreign counts the records skipped because they are not runs of
	// the shards' plan (see Members).
	Foreign Foreign
	// MissingShards lists shards of the job absent from the inputs
	// ("2/4"); empty when the inputs cover the whole plan.
	MissingShards []string
}

// MergeEach joins the result directories dirs, shards of one job, into
// out, which must not exist or be empty. It refuses shards that ran
// different configs, case files, scoring rules, filters or tool lists
// (Meta.Server, kept in out when every shard recorded it). It does not
// build reports; it calls each, when not nil, with every record it
// writes to out/runs.jsonl, in order: the line as written, decoded (see
// RunsSummary), for a reader that would otherwise read the file back,
// such as the reports.
func MergeEach(out string, dirs []string, each func(rec *record.Record, whole func() (*record.Record, error))) (*MergeResult, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no directories to merge")
	}
	metas, err := readMetas(dirs)
	if err != nil {
		return nil, err
	}
	if err := sameJob(dirs, metas); err != nil {
		return nil, err
	}
	server, err := mergedServer(dirs, metas)
	if err != nil {
		return nil, err
	}
	res := &MergeResult{}
	planned, err := shardCoverage(dirs, metas, res)
	if err != nil {
		return nil, err
	}
	first := metas[0]
	members, err := first.Members()
	if err != nil {
		return nil, fmt.Errorf("merge: %s: %w", dirs[0], err)
	}
	if err := mkdirEmpty(out); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	unlock, err := Lock(out) // a second merge into out at once refuses
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	defer unlock()
	err = writeAtomic(filepath.Join(out, RunsFile), func(w io.Writer) error {
		return mergeRuns(w, dirs, members, res, each)
	})
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	m := *first
	m.Shard = ""
	m.Planned = planned
	m.Created = time.Now().UTC()
	m.MergedFrom = slices.Clone(dirs)
	m.Server = server
	if err := WriteMeta(out, &m); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return res, nil
}

// readMetas reads the config.json of each of dirs.
func readMetas(dirs []string) ([]*Meta, error) {
	metas := make([]*Meta, len(dirs))
	for i, d := range dirs {
		m, err := ReadMeta(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		metas[i] = m
	}
	return metas, nil
}

// sameJob refuses shards that are not of one job: each must have run
// the first's config, format, case files, scoring rules and filters.
func sameJob(dirs []string, metas []*Meta) error {
	first := metas[0]
	for i, m := range metas[1:] {
		d := dirs[i+1]
		switch {
		case m.ConfigDigest != first.ConfigDigest:
			return fmt.Errorf("merge: %s and %s ran different configs (digests %.12s, %.12s)", dirs[0], d, first.ConfigDigest, m.ConfigDigest)
		case m.Legacy() != first.Legacy():
			return fmt.Errorf("merge: %s and %s were written by different toolward formats (config.json version %d, %d)", dirs[0], d, first.Version, m.Version)
		case !maps.Equal(m.Cases, first.Cases):
			return fmt.Errorf("merge: %s and %s ran different case files (case ids, prompts or tools differ)", dirs[0], d)
		case !maps.Equal(m.Rules, first.Rules):
			return fmt.Errorf("merge: %s and %s judged runs with different scoring rules; re-score both with toolward score against the same cases, then merge the results", dirs[0], d)
		case !slices.Equal(m.Filters, first.Filters):
			return fmt.Errorf("merge: %s and %s used different filters (%v, %v)", dirs[0], d, first.Filters, m.Filters)
		}
	}
	return nil
}

// shardCoverage returns how many runs the merged job planned: the sum
// over its distinct shards, or the first input's total when an input is
// no shard. It notes in res the shards of the split that no input holds,
// and refuses shards of different splits.
func shardCoverage(dirs []string, metas []*Meta, res *MergeResult) (planned int64, err error) {
	shards := map[string]bool{}
	n := 0 // shards in the split; -1 when an input is no shard
	for i, m := range metas {
		if m.Shard == "" {
			n = -1
			continue
		}
		if shards[m.Shard] {
			continue // the same shard twice (e.g. a retried job): dedup handles the runs
		}
		shards[m.Shard] = true
		planned += m.Planned
		sh, err := plan.ParseShard(m.Shard)
		if err != nil {
			return 0, fmt.Errorf("merge: %s: %w", filepath.Join(dirs[i], ConfigFile), err)
		}
		if n == 0 {
			n = sh.Count
		} else if n > 0 && sh.Count != n {
			return 0, fmt.Errorf("merge: shards of different splits (%s of /%d)", m.Shard, n)
		}
	}
	if n < 0 {
		return metas[0].Total, nil
	}
	for i := range n {
		if s := fmt.Sprintf("%d/%d", i, n); !shards[s] {
			res.MissingShards = append(res.MissingShards, s)
		}
	}
	return planned, nil
}

// mergeRuns writes to w the runs of dirs read as one stream, under the
// de-duplication rule of Runs, and counts them in res: records with an
// outcome MergeEach does not know and records that are not runs of the
// plan (members) are skipped. Each record goes to each as written (see
// copyRun).
func mergeRuns(w io.Writer, dirs []string, members *Members, res *MergeResult, each func(rec *record.Record, whole func() (*record.Record, error))) error {
	st, err := read(func(r *record.Reader) error {
		rec, _ := r.Record() // a record: read chose it
		if !record.KnownOutcome(rec.Outcome) {
			res.Unknown++
			return nil
		}
		if !members.Holds(rec) {
			res.Foreign.Add(rec)
			return nil
		}
		res.Runs++
		if rec.Outcome == record.Error {
			res.Errors++
		}
		return copyRun(w, r, rec, each)
	}, dirs)
	if st != nil {
		res.Duplicates, res.Bad = st.Duplicates, st.BadLines
	}
	return err
}

// copyRun writes r's current record (rec) to w. It is
// copied as the line it was read from; only a line longer than a record
// may be is decoded whole and written again within
// record.MaxRecordBytes. each, when not nil, sees the record as written.
func copyRun(w io.Writer, r *record.Reader, rec *record.Record, each func(rec *record.Record, whole func() (*record.Record, error))) error {
	if line := r.Line(); len(line) <= record.MaxRecordBytes {
		if each != nil {
			each(rec, r.Record)
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		_, err := w.Write([]byte{'\n'})
		return err
	}
	whole, err := r.Record()
	if err != nil {
		return err
	}
	b, err := record.Marshal(whole)
	if err != nil {
		return err
	}
	if each != nil { // the record as written, clipped
		wr := record.NewReader(bytes.NewReader(b), RunsFile)
		if wr.Scan() {
			if rec, err := wr.Record(); err == nil {
				each(rec, wr.Record)
			}
		}
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// withReader calls fn with a reader of dir/runs.jsonl; a missing file
// is not read.
func withReader(dir string, fn func(*record.Reader) error) error {
	path := filepath.Join(dir, RunsFile)
	f, err := openRuns(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(record.NewReader(f, path))
}

// writeLine writes rec as one JSON line, as it was read (the version it
// carries is kept), within record.MaxRecordBytes.
func writeLine(w io.Writer, rec *record.Record) error {
	b, err := record.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeAtomic replaces path with what fill writes (buffered), through a
// temporary file in the same directory and a rename, so readers see the
// old file or the new one, never a part.
func writeAtomic(path string, fill func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	bw := bufio.NewWriter(tmp)
	if err := fill(bw); err != nil {
		tmp.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// BackendInfo is what a model backend's preflight learned, as config.json
// records it.
type BackendInfo struct {
	Server  string            `json:"server"`            // e.g. "ollama 0.17.4 at http://127.0.0.1:11434"
	Digests map[string]string `json:"digests,omitempty"` // model -> digest
	// Models holds what the server says about each model when it gives
	// no digest (OpenAI-compatible servers' GET /models).
	Models map[string]ModelInfo `json:"models,omitempty"`
	// Warnings are problems that do not stop the job, e.g. a server
	// without a model list.
	Warnings []string `json:"warnings,omitempty"`
	// Unseeded says that the backend's API takes no seed (Anthropic's):
	// the seeds of a matrix still make distinct runs, but runs of one
	// cell differ only by sampling, and no run can be repeated exactly.
	Unseeded bool `json:"unseeded,omitempty"`
}

// ModelInfo is what a server's model list says about one model.
type ModelInfo struct {
	ID      string `json:"id"`                 // the id the server lists it under
	OwnedBy string `json:"owned_by,omitempty"` // e.g. "library", "vllm", "llamacpp"
	Created int64  `json:"created,omitempty"`  // Unix seconds, as the server reports it
}
