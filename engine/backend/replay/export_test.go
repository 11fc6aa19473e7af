package replay

import "github.com/toolward/toolward/schema"

// Parse reads the cassettes in one file: one YAML document per case,
// documents separated by ---. The format is schema.ParseCassettes'; the
// error, when any, is a schema.Errors listing every mistake at
// file:line:col.
func parse(file string, data []byte) ([]*Cassette, error) {
	cs, errs := schema.ParseCassettes(file, data)
	if len(errs) > 0 {
		return nil, errs
	}
	out := make([]*Cassette, len(cs))
	for i, c := range cs {
		out[i] = fromSchema(c)
	}
	return out, nil
}
