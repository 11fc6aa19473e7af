package schema

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// decodeFields fills the struct dst from the checked mapping m through
// dst's yaml tags, the keys the types write: a field of the format is
// read by the type that carries it, with no decoding code of its own.
// Values are yamlValue's (string, bool, int64, float64, json.Number,
// []any, map[string]any); a value the Go field cannot hold is an error
// naming the field, a disagreement of toolward.cue and the type.
func decodeFields(dst reflect.Value, m map[string]any, at []any) error {
	t := dst.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		v, ok := m[name]
		if !ok {
			continue
		}
		if err := decodeValue(dst.Field(i), v, append(at, name)); err != nil {
			return err
		}
	}
	return nil
}

func decodeValue(dst reflect.Value, v any, at []any) error {
	fail := func() error {
		return fmt.Errorf("%s: Go type %s cannot hold %s (toolward.cue and the schema types disagree)", pathString(at), dst.Type(), kindOf(v))
	}
	switch dst.Kind() {
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return fail()
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return fail()
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, ok := v.(int64)
		if f, isFloat := v.(float64); isFloat && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			n, ok = int64(f), true // 3.0: JSON Schema's integer, as the schema checked it
		}
		if !ok || dst.OverflowInt(n) {
			return fail()
		}
		dst.SetInt(n)
	case reflect.Float64:
		switch n := v.(type) {
		case float64:
			dst.SetFloat(n)
		case int64:
			dst.SetFloat(float64(n))
		default:
			return fail()
		}
	case reflect.Interface:
		if v == nil {
			return nil
		}
		if !reflect.TypeOf(v).AssignableTo(dst.Type()) {
			return fail()
		}
		dst.Set(reflect.ValueOf(v))
	case reflect.Map:
		mv, ok := v.(map[string]any)
		if !ok || dst.Type().Key().Kind() != reflect.String {
			return fail()
		}
		if dst.Type() == reflect.TypeOf(mv) {
			dst.Set(reflect.ValueOf(mv))
			break
		}
		out := reflect.MakeMapWithSize(dst.Type(), len(mv))
		for k, x := range mv {
			e := reflect.New(dst.Type().Elem()).Elem()
			if err := decodeValue(e, x, append(at, k)); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(dst.Type().Key()), e)
		}
		dst.Set(out)
	case reflect.Slice:
		l, ok := v.([]any)
		if !ok {
			return fail()
		}
		out := reflect.MakeSlice(dst.Type(), len(l), len(l))
		for i, x := range l {
			if err := decodeValue(out.Index(i), x, append(at, i)); err != nil {
				return err
			}
		}
		dst.Set(out)
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		if err := decodeValue(p.Elem(), v, at); err != nil {
			return err
		}
		dst.Set(p)
	case reflect.Struct:
		mv, ok := v.(map[string]any)
		if !ok {
			return fail()
		}
		return decodeFields(dst, mv, at)
	default:
		return fail()
	}
	return nil
}
