package diff

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/record"
)

// A side's runs are held compactly, one fixed-size run each, so that two
// directories of a million runs fit in bounded memory: the strings they
// repeat (case ids, cells, reason codes, rules digests) are interned in
// a table both sides share, and a run keeps what pairing and the
// verdict comparison need as numbers.

// table interns the strings and cells of both sides.
type table struct {
	cases   []string
	caseIdx map[string]uint32
	cells   []record.Cell // seed and tool count zero
	cellIdx map[record.Cell]uint32
	seeds   []int
	seedIdx map[int]uint32
	strs    []string // reason code lists (joined by "\x00"), rules digests, ids that are not 16 hex digits
	strIdx  map[string]uint32
	seed    maphash.Seed
}

func newTable() *table {
	return &table{caseIdx: map[string]uint32{}, cellIdx: map[record.Cell]uint32{}, seedIdx: map[int]uint32{}, strIdx: map[string]uint32{"": 0}, strs: []string{""}, seed: maphash.MakeSeed()}
}

func intern[K comparable](idx map[K]uint32, list *[]K, k K) uint32 {
	i, ok := idx[k]
	if !ok {
		i = uint32(len(*list))
		idx[k] = i
		*list = append(*list, k)
	}
	return i
}

func (t *table) str(s string) uint32 { return intern(t.strIdx, &t.strs, s) }

// ckey is a run's pairing key (see keyOf): the case, the cell without
// seed and tool count, and the seed, each interned. Its order is that of
// the interned numbers: the same for both sides, which is all pairing
// needs (what diff reports is sorted by the readable key).
type ckey struct {
	kase, cell, seed uint32
}

func compareCKeys(x, y ckey) int {
	return cmp.Or(cmp.Compare(x.kase, y.kase), cmp.Compare(x.cell, y.cell), cmp.Compare(x.seed, y.seed))
}

// run is what diff keeps of one record, in 48 bytes.
type run struct {
	key     ckey
	outcome uint8 // outPass, outFail or outError (any other outcome)
	hexID   bool  // id is the run id's 16 hex digits; else an index in table.strs
	id      uint64
	// started is the start time as wrapping nanoseconds since 1970 (the
	// same instant gives the same number; two instants within 292 years
	// of each other differ).
	started int64
	reasons uint64 // a 64-bit hash of the failure reasons, codes and details
	codes   uint32 // the distinct reason codes, interned
	rules   uint32 // the rules digest, interned
}

const (
	outPass uint8 = iota
	outFail
	outError
)

var outcomes = [...]record.Outcome{outPass: record.Pass, outFail: record.Fail, outError: record.Error}

func (r *run) verdict() bool { return r.outcome != outError }

// add appends rec to runs.
func (t *table) add(runs []run, rec *record.Record) []run {
	k := keyOf(rec)
	c := k.Cell
	seed := c.Seed
	c.Seed = 0
	r := run{
		key:     ckey{kase: intern(t.caseIdx, &t.cases, k.Case), cell: intern(t.cellIdx, &t.cells, c), seed: intern(t.seedIdx, &t.seeds, seed)},
		outcome: outError,
		started: rec.Started.Unix()*1e9 + int64(rec.Started.Nanosecond()),
		rules:   t.str(rec.Rules),
	}
	switch rec.Outcome {
	case record.Pass:
		r.outcome = outPass
	case record.Fail:
		r.outcome = outFail
	}
	if len(rec.ID) == 16 && isLowerHex(rec.ID) {
		h, _ := strconv.ParseUint(rec.ID, 16, 64)
		r.hexID, r.id = true, h
	} else {
		r.id = uint64(t.str(rec.ID))
	}
	r.codes = t.str(joinCodes(matchers.ReasonCodes(rec.Reasons)))
	r.reasons = t.hashReasons(rec.Reasons)
	return append(runs, r)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// hashReasons hashes reasons so that equal lists (as reflect.DeepEqual
// compares them: nil is not an empty list) hash alike.
func (t *table) hashReasons(rs []matchers.Reason) uint64 {
	if rs == nil {
		return 0
	}
	var h maphash.Hash
	h.SetSeed(t.seed)
	var n [8]byte
	h.WriteByte(1)
	for _, r := range rs {
		for _, s := range []string{r.Code, r.Detail} {
			binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
			h.Write(n[:])
			h.WriteString(s)
		}
	}
	return h.Sum64() | 1 // never 0, the hash of nil
}

// joinCodes encodes a list of codes as one string, each code after a
// NUL; splitCodes decodes it.
func joinCodes(codes []string) string {
	s := ""
	for _, c := range codes {
		s += "\x00" + c
	}
	return s
}

func splitCodes(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s[1:], "\x00")
}

// settle sorts runs by key and keeps the last run of each key (the last
// record of a key wins, as when the runs were a map filled in order).
func settle(runs []run) []run {
	slices.SortStableFunc(runs, func(x, y run) int { return compareCKeys(x.key, y.key) }) // in read order within a key
	out := runs[:0]
	for i := range runs {
		if i+1 < len(runs) && runs[i+1].key == runs[i].key {
			continue
		}
		out = append(out, runs[i])
	}
	return slices.Clip(out)
}

// pairKey is the readable key of k.
func (t *table) pairKey(k ckey) key {
	c := t.cells[k.cell]
	c.Seed = t.seeds[k.seed]
	return key{Case: t.cases[k.kase], Cell: c}
}

func (t *table) codes(r *run) []string { return splitCodes(t.strs[r.codes]) }

func (t *table) verdictOf(r *run) Recorded {
	return Recorded{Outcome: outcomes[r.outcome], Reasons: t.codes(r), Rules: t.strs[r.rules]}
}

func sameID(a, b *run) bool { return a.hexID == b.hexID && a.id == b.id }
