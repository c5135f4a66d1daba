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

// nodeCheck gathers what is wrong with a file's nodes, to report it all
// at once. A value in error is made null, so that decoding goes on, and
// its path goes into skip, so that validation says nothing more about it.
type nodeCheck struct {
	errs []error
	skip map[string]bool // paths of values left unset or in error
}

// fail reports err about the value n at path and makes the value null.
func (c *nodeCheck) fail(n *yaml.Node, path string, err error) {
	c.errs = append(c.errs, err)
	setNull(n)
	c.skip[path] = true
}

// interpolate expands ${ENV} references in every scalar value below n.
// Keys and comments are left alone, so a commented-out ${VAR} never fails.
//
// A value whose reference cannot be expanded is an error, unless
// keepUnset(path) says to leave it unset: it then becomes null (the
// field's zero value, or its default) and is not validated.
func (c *nodeCheck) interpolate(n *yaml.Node, path string, lookup func(string) (string, bool), keepUnset func(path string) bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, e := range n.Content {
			c.interpolate(e, path, lookup, keepUnset)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			c.interpolate(n.Content[i+1], joinPath(path, n.Content[i].Value), lookup, keepUnset)
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			c.interpolate(e, fmt.Sprintf("%s[%d]", path, i), lookup, keepUnset)
		}
	case yaml.ScalarNode:
		v, err := Interpolate(n.Value, lookup)
		switch {
		case err != nil && keepUnset != nil && keepUnset(path):
			setNull(n)
			c.skip[path] = true
		case err != nil:
			c.fail(n, path, fmt.Errorf("%s: %w (line %d)", nonEmpty(path), err, n.Line))
		case v != n.Value:
			n.Value = v
			// An expanded value is always a string unless it was plainly typed
			// (e.g. max_body_bytes: ${MAX}); re-resolve the tag from the text.
			if n.Style == 0 {
				n.Tag = ""
			}
		}
	}
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

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
)

// check reports mapping keys that the target struct does not declare,
// naming the full path ("providers[0].timeouts.conect"), duplicate keys
// (the later one is dropped) and values of the wrong type.
func (c *nodeCheck) check(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, e := range n.Content {
			c.check(e, t, path)
		}
	case yaml.MappingNode:
		if t.Kind() != reflect.Struct {
			if t.Kind() != reflect.Map {
				c.fail(n, path, fmt.Errorf("%s: expected %s, found a mapping (line %d)", nonEmpty(path), kindName(t), n.Line))
			}
			return
		}
		seen := make(map[string]bool)
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i], n.Content[i+1]
			kpath := joinPath(path, key.Value)
			if seen[key.Value] {
				c.errs = append(c.errs, fmt.Errorf("%s: duplicate key (line %d)", kpath, key.Line))
				continue
			}
			seen[key.Value] = true
			kept = append(kept, key, value)
			f, ok := fieldByTag(t, key.Value)
			if !ok {
				c.errs = append(c.errs, fmt.Errorf("%s: unknown field (line %d); known fields: %s", kpath, key.Line, strings.Join(tagNames(t), ", ")))
				continue
			}
			c.check(value, f.Type, kpath)
		}
		n.Content = kept
	case yaml.SequenceNode:
		if t.Kind() != reflect.Slice {
			c.fail(n, path, fmt.Errorf("%s: expected %s, found a list (line %d)", nonEmpty(path), kindName(t), n.Line))
			return
		}
		for i, e := range n.Content {
			c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return
		}
		if pt := reflect.PointerTo(t); pt.Implements(textUnmarshaler) && !pt.Implements(yamlUnmarshaler) {
			// An enumeration: its own check, reported at its path.
			if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
				c.fail(n, path, fmt.Errorf("%s: %v (line %d)", nonEmpty(path), err, n.Line))
			}
			return
		}
		if t.Kind() == reflect.Struct || t.Kind() == reflect.Slice {
			c.fail(n, path, fmt.Errorf("%s: expected %s, found %q (line %d)", nonEmpty(path), kindName(t), n.Value, n.Line))
			return
		}
		// The decoder's own message names Go types and no path: decode the
		// value alone to say which member is wrong, in the file's terms.
		if n.Decode(reflect.New(t).Interface()) != nil {
			c.fail(n, path, fmt.Errorf("%s: expected %s, found %q (line %d)", nonEmpty(path), scalarName(t), n.Value, n.Line))
		}
	}
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
