package loop

import (
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// FirstDifference is the first key, in the order a config file lists
// them, whose value differs between two configs, with both values as
// YAML; ok is false when the configs are the same.
func FirstDifference(a, b Config) (key, aValue, bValue string, ok bool) {
	return firstDifference(reflect.ValueOf(a), reflect.ValueOf(b), "")
}

func firstDifference(a, b reflect.Value, prefix string) (key, aValue, bValue string, ok bool) {
	t := a.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		av, bv := a.Field(i), b.Field(i)
		inline := strings.Contains(opts, "inline")
		path := prefix
		if !inline {
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			path = joinKey(prefix, name)
		}
		if f.Type.Kind() == reflect.Struct {
			if k, x, y, ok := firstDifference(av, bv, path); ok {
				return k, x, y, true
			}
			continue
		}
		if !reflect.DeepEqual(av.Interface(), bv.Interface()) {
			return path, yamlValue(av), yamlValue(bv), true
		}
	}
	return "", "", "", false
}

func joinKey(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// yamlValue writes a value as a config file would, on one line.
func yamlValue(v reflect.Value) string {
	raw, err := yaml.Marshal(v.Interface())
	if err != nil {
		return "?"
	}
	s := strings.TrimSpace(string(raw))
	if strings.Contains(s, "\n") {
		var flow any
		if yaml.Unmarshal(raw, &flow) == nil {
			if b, err := yaml.Marshal(flowStyle(flow)); err == nil {
				return strings.TrimSpace(string(b))
			}
		}
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// flowStyle wraps a decoded YAML value in a node that prints on one line.
func flowStyle(v any) *yaml.Node {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return &n
	}
	var set func(*yaml.Node)
	set = func(x *yaml.Node) {
		x.Style |= yaml.FlowStyle
		for _, c := range x.Content {
			set(c)
		}
	}
	set(&n)
	return &n
}
