package loop

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/flipzero/flipzero/internal/suggest"
)

// unknownKey finds the first key of a YAML document that a value of type
// t has no field for, and names it by its path from the top
// (search.cpucct), with the nearest key its section does have: yaml's
// own error names the key alone, without its section, and a Go type.
// A document with no unknown key is nil.
func unknownKey(doc *yaml.Node, t reflect.Type) error {
	return checkKeys(doc, t, "")
}

// unknownKeyError is a key the config does not have, where it was.
type unknownKeyError struct {
	line     int
	key      string   // with its section: search.cpucct
	section  string   // "" at the top
	known    []string // the section's keys
	nearest  string
	hasGuess bool
}

func (e unknownKeyError) Error() string {
	msg := fmt.Sprintf("line %d: unknown key %s", e.line, e.key)
	if e.hasGuess {
		return msg + "; did you mean " + joinKey(e.section, e.nearest) + "?"
	}
	where := "the top level's keys"
	if e.section != "" {
		where = e.section + "'s keys"
	}
	return msg + " (" + where + ": " + strings.Join(e.known, ", ") + ")"
}

// checkKeys walks node against t, the type it decodes into, path being
// the node's own key path.
func checkKeys(node *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if decodesItself(t) {
		return nil
	}
	switch {
	case node.Kind == yaml.DocumentNode:
		for _, c := range node.Content {
			if err := checkKeys(c, t, path); err != nil {
				return err
			}
		}
	case node.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if err := checkKeys(node.Content[i+1], t.Elem(), joinKey(path, node.Content[i].Value)); err != nil {
				return err
			}
		}
	case node.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		return checkStruct(node, t, path)
	case node.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for i, c := range node.Content {
			if err := checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	// Anything else is a value of the wrong shape, which the decoder
	// itself reports, or an alias, whose keys are checked where its
	// anchor stands (following aliases could take as long as the alias
	// bombs the decoder refuses).
	return nil
}

// checkStruct checks a mapping's keys against the fields of struct type t.
func checkStruct(node *yaml.Node, t reflect.Type, path string) error {
	fields, names, anyKey := yamlFields(t)
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		if key.Value == "<<" { // a merge key: its keys are checked where they are defined
			continue
		}
		field, ok := fields[key.Value]
		if !ok {
			if anyKey {
				continue
			}
			nearest, guessed := suggest.Nearest(key.Value, names)
			return unknownKeyError{line: key.Line, key: joinKey(path, key.Value), section: path, known: names, nearest: nearest, hasGuess: guessed}
		}
		if err := checkKeys(value, field, joinKey(path, key.Value)); err != nil {
			return err
		}
	}
	return nil
}

// yamlFields lists the keys yaml.v3 decodes into struct type t, as it
// names them (the tag's name, else the field's name in lower case;
// inlined structs' keys as the struct's own), in the order of the fields,
// with each one's type. anyKey is true when an inlined map takes every
// other key.
func yamlFields(t reflect.Type) (fields map[string]reflect.Type, names []string, anyKey bool) {
	fields = map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, options, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if strings.Contains(","+options+",", ",inline,") {
			inner := f.Type
			for inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Map {
				anyKey = true
				continue
			}
			innerFields, innerNames, innerAny := yamlFields(inner)
			for _, n := range innerNames {
				fields[n] = innerFields[n]
			}
			names = append(names, innerNames...)
			anyKey = anyKey || innerAny
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
		names = append(names, name)
	}
	return fields, names, anyKey
}

// decodesItself reports whether yaml.v3 hands a value of type t its node
// or text whole rather than walking its fields (a search's mode reads its
// own name).
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(reflect.TypeFor[yaml.Unmarshaler]()) || p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}
