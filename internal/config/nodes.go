package config

import (
	"encoding"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

var (
	configType = reflect.TypeFor[Config]()
	errEOF     = io.EOF
)

// interpolateNode expands ${ENV} references in every scalar value below n.
// Keys and comments are left alone, so a commented-out ${VAR} never fails.
//
// A value whose reference cannot be expanded is an error, unless
// keepUnset(path) says to leave it unset: it then becomes null (the
// field's zero value, or its default) and skip records its path, for
// validation to pass it by.
func interpolateNode(n *yaml.Node, path string, lookup func(string) (string, bool), keepUnset func(path string) bool, skip map[string]bool) error {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := interpolateNode(c, path, lookup, keepUnset, skip); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := interpolateNode(n.Content[i+1], joinPath(path, n.Content[i].Value), lookup, keepUnset, skip); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := interpolateNode(c, fmt.Sprintf("%s[%d]", path, i), lookup, keepUnset, skip); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		v, err := Interpolate(n.Value, lookup)
		if err != nil {
			if keepUnset != nil && keepUnset(path) {
				setNull(n)
				skip[path] = true
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if v != n.Value {
			n.Value = v
			// An expanded value is always a string unless it was plainly typed
			// (e.g. max_body_bytes: ${MAX}); re-resolve the tag from the text.
			if n.Style == 0 {
				n.Tag = ""
			}
		}
	}
	return nil
}

// setNull makes n a null scalar: it decodes to its field's zero value.
func setNull(n *yaml.Node) {
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
}

// skipped reports whether path is one of skip's paths or lies below one.
func skipped(skip map[string]bool, path string) bool {
	for p := range skip {
		if path == p || strings.HasPrefix(path, p) && (path[len(p)] == '.' || path[len(p)] == '[') {
			return true
		}
	}
	return false
}

// checkKnownFields rejects mapping keys that the target struct does not
// declare, naming the full path ("providers[0].timeouts.conect").
var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
)

func checkKnownFields(n *yaml.Node, t reflect.Type) error {
	return checkNode(n, t, "")
}

func checkNode(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkNode(c, t, path); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		if t.Kind() != reflect.Struct {
			if t.Kind() == reflect.Map {
				return nil
			}
			return fmt.Errorf("%s: expected %s, found a mapping (line %d)", nonEmpty(path), kindName(t), n.Line)
		}
		seen := make(map[string]bool)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			kpath := joinPath(path, key)
			if seen[key] {
				return fmt.Errorf("%s: duplicate key (line %d)", kpath, n.Content[i].Line)
			}
			seen[key] = true
			f, ok := fieldByTag(t, key)
			if !ok {
				return fmt.Errorf("%s: unknown field (line %d); known fields: %s", kpath, n.Content[i].Line, strings.Join(tagNames(t), ", "))
			}
			if err := checkNode(n.Content[i+1], f.Type, kpath); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		if t.Kind() != reflect.Slice {
			return fmt.Errorf("%s: expected %s, found a list (line %d)", nonEmpty(path), kindName(t), n.Line)
		}
		for i, c := range n.Content {
			if err := checkNode(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		if pt := reflect.PointerTo(t); pt.Implements(textUnmarshaler) && !pt.Implements(yamlUnmarshaler) && n.Tag != "!!null" {
			// An enumeration: its own check, reported at its path.
			if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
				return fmt.Errorf("%s: %v (line %d)", nonEmpty(path), err, n.Line)
			}
			return nil
		}
		if (t.Kind() == reflect.Struct || t.Kind() == reflect.Slice) && n.Tag != "!!null" {
			return fmt.Errorf("%s: expected %s, found %q (line %d)", nonEmpty(path), kindName(t), n.Value, n.Line)
		}
		// The decoder's own message names Go types and no path: decode the
		// value alone to say which member is wrong, in the file's terms.
		if n.Tag != "!!null" && n.Decode(reflect.New(t).Interface()) != nil {
			return fmt.Errorf("%s: expected %s, found %q (line %d)", nonEmpty(path), scalarName(t), n.Value, n.Line)
		}
	}
	return nil
}

// scalarName says what a scalar of type t is written as.
func scalarName(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "a duration with a unit, such as 30s, 5m or 1h"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "a whole number"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.String:
		return "a string"
	}
	return kindName(t)
}

// fieldByTag finds the field for a YAML key, looking into ",inline"
// embedded structs as the decoder does.
func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" {
			if inner, ok := fieldByTag(f.Type, key); ok {
				return inner, true
			}
			continue
		}
		if name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tagNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" {
			names = append(names, tagNames(f.Type)...)
		} else if name != "" {
			names = append(names, name)
		}
	}
	return names
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	default:
		return "a " + t.Kind().String()
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func nonEmpty(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}
