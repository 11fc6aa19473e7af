package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"unsafe"

	gojson "github.com/goccy/go-json"
)

// wireRecord is Record with every untyped value (any, map[string]any)
// replaced by a type of the same memory layout that decodes it keeping
// its numbers as json.Number (numAny, numMap), which goccy/go-json's
// Unmarshal cannot be told to do. It is built by reflection from Record
// (wireType), so a field added to Record needs no edit here; asWire
// gives goccy a *Record as a *wireRecord. The layouts are checked equal
// when the package loads.
var wireType = wireOf(reflect.TypeFor[Record]())

func init() {
	if !sameLayout(reflect.TypeFor[Record](), wireType) {
		panic("record: the wire form of Record has another memory layout")
	}
}

// asWire returns rec as a value of wireType, for a decoder.
func asWire(rec *Record) any {
	return reflect.NewAt(wireType, unsafe.Pointer(rec)).Interface()
}

// numAny and numMap are an untyped value and an object of them, decoded
// with their numbers as json.Number. Each has the layout of what it
// replaces (an interface, a map).
type (
	numAny struct{ v any }
	numMap struct{ m map[string]any }
)

func (n *numAny) UnmarshalJSON(b []byte) error {
	n.v = nil
	return decodeUntyped(b, &n.v)
}

func (n *numMap) UnmarshalJSON(b []byte) error {
	n.m = nil
	return decodeUntyped(b, &n.m)
}

// decodeUntyped decodes b into v, an *any or a *map[string]any: with
// goccy when b holds no number (most arguments are strings), else with
// encoding/json keeping the numbers' text.
func decodeUntyped(b []byte, v any) error {
	if !hasNumber(b) {
		return gojson.Unmarshal(b, v)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// hasNumber reports whether the JSON value b holds a number: a '-' or a
// digit outside its strings.
func hasNumber(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '-' || '0' <= c && c <= '9':
			return true
		}
	}
	return false
}

var (
	anyType     = reflect.TypeFor[any]()
	mapAnyType  = reflect.TypeFor[map[string]any]()
	unmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// wireOf returns t with every untyped value in it replaced (see
// wireRecord); t itself when it holds none, or decodes itself.
func wireOf(t reflect.Type) reflect.Type {
	switch {
	case t == anyType:
		return reflect.TypeFor[numAny]()
	case t == mapAnyType:
		return reflect.TypeFor[numMap]()
	case reflect.PointerTo(t).Implements(unmarshaler):
		return t
	}
	switch t.Kind() {
	case reflect.Pointer:
		if e := wireOf(t.Elem()); e != t.Elem() {
			return reflect.PointerTo(e)
		}
	case reflect.Slice:
		if e := wireOf(t.Elem()); e != t.Elem() {
			return reflect.SliceOf(e)
		}
	case reflect.Map:
		if e := wireOf(t.Elem()); e != t.Elem() {
			return reflect.MapOf(t.Key(), e)
		}
	case reflect.Struct:
		fields := make([]reflect.StructField, t.NumField())
		changed := false
		for i := range fields {
			f := t.Field(i)
			if w := wireOf(f.Type); w != f.Type {
				if !f.IsExported() || f.Anonymous {
					panic(fmt.Sprintf("record: %s.%s holds an untyped value the wire form cannot replace", t, f.Name))
				}
				f.Type, changed = w, true
			}
			fields[i] = f
		}
		if changed {
			return reflect.StructOf(fields)
		}
	}
	return t
}

// sameLayout reports whether values of a and b lie alike in memory.
func sameLayout(a, b reflect.Type) bool {
	if a.Size() != b.Size() || a.Align() != b.Align() {
		return false
	}
	if b == reflect.TypeFor[numAny]() || b == reflect.TypeFor[numMap]() {
		return true // a leaf replaced: one interface or map word
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if a.Kind() == reflect.Map && a.Key() != b.Key() {
			return false
		}
		return a.Kind() == b.Kind() && sameLayout(a.Elem(), b.Elem())
	}
	if a.Kind() == reflect.Struct && b.Kind() == reflect.Struct {
		if a.NumField() != b.NumField() {
			return false
		}
		for i := range a.NumField() {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Offset != fb.Offset || !sameLayout(fa.Type, fb.Type) {
				return false
			}
		}
	}
	return true
}
