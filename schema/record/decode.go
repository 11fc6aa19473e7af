package record

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
)

// decodeLine decodes one runs.jsonl line into rec, which must be zero,
// giving the record or the error encoding/json (with UseNumber) gives.
//
// It decodes with github.com/goccy/go-json, which takes a runs.jsonl line
// in about a quarter of encoding/json's time (5 µs against 23 µs a record
// of bench/resultgen on the 2-core machine), into rec seen as wireRecord
// (wire.go): Record with every untyped value (a call's arguments and
// structured result, a text call's arguments, a probe's value) decoded
// keeping its numbers as json.Number, as the agent decoded them, so that
// a re-score sees 10.0 where the live run did. encoding/json decodes the
// line instead when goccy cannot be trusted to agree with it:
//   - goccy rejects the line (so the error is encoding/json's message);
//   - the line is not valid UTF-8 (encoding/json puts U+FFFD for each bad
//     byte; goccy keeps them), or holds a control character or an escape
//     JSON has not (encoding/json rejects them; goccy takes them).
//
// decode_test.go holds the result to encoding/json's on a varied corpus,
// every prefix of it and mutations of real records. What differs is on
// lines toolward does not write (it writes every key as declared, and
// valid JSON): goccy matches the keys of a struct of more than 16 fields
// (Record) exactly, where encoding/json also takes them in another
// case, so a top-level "ID" is an unknown key, not the run id (PeekID
// matches exactly too); and goccy skips the value of an unknown key
// without checking it, and takes a number "-", so such a malformed
// line is read where encoding/json rejects it. A line cut short is
// rejected as encoding/json rejects it. The structs inside a record
// have fewer fields, and goccy folds their keys as encoding/json does
// (the corpus holds it to that, so a struct grown past 16 fields fails
// the test).
func decodeLine(b []byte, rec *Record) error {
	if plain(b) && utf8.Valid(b) && gojson.UnmarshalNoEscape(b, asWire(rec)) == nil {
		return nil
	}
	*rec = Record{}
	return unmarshalNumbers(b, rec)
}

// plain reports whether b holds no control character and no escape
// other than JSON's (a written record has neither: encoding/json
// escapes control characters and writes no space; goccy takes both
// where encoding/json rejects them). Control characters are looked for
// eight bytes at a time: x has a byte below 0x20 exactly when
// (x - 0x20…20) &^ x & 0x80…80 is not zero.
func plain(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if x := binary.LittleEndian.Uint64(b[i:]); (x-0x2020202020202020)&^x&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return false
		}
	}
	for i = 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return true
		}
		i += j + 1
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
				return false
			}
			i += 5
		default:
			return false
		}
	}
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// unmarshalNumbers is json.Unmarshal keeping numbers inside untyped
// values (a call's arguments) as json.Number, as the agent decoded them,
// so that a re-score sees 10.0 where the live run did. A bad line gets
// json.Unmarshal's error.
func unmarshalNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err := dec.Decode(v)
	if err == nil {
		if _, end := dec.Token(); end == io.EOF {
			return nil
		}
		err = errors.New("data after the record")
	}
	if uerr := json.Unmarshal(b, v); uerr != nil {
		return uerr // the message json.Unmarshal gives
	}
	return err
}
