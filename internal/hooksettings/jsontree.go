package hooksettings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// node is a JSON value that keeps the order of object keys, so that a settings file
// mcpdiff changes keeps the user's order. Scalars are kept as their JSON text.
type node struct {
	object []member // for objects (obj true)
	array  []*node  // for arrays (arr true)
	obj    bool
	arr    bool
	scalar json.RawMessage
}

type member struct {
	key string
	val *node
}

// parseTree decodes one JSON value, nested at most maxDepth deep; anything after it
// is an error.
func parseTree(data []byte, maxDepth int) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseNode(dec, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder, depth int) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth <= 0 {
			return nil, errors.New("nested too deeply for a settings file")
		}
		switch t {
		case '{':
			n := &node{obj: true}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseNode(dec, depth-1)
				if err != nil {
					return nil, err
				}
				n.object = append(n.object, member{k.(string), v})
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{arr: true, array: []*node{}}
			for dec.More() {
				v, err := parseNode(dec, depth-1)
				if err != nil {
					return nil, err
				}
				n.array = append(n.array, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		raw, err := marshal(t)
		return &node{scalar: raw}, err
	}
}

// toNode converts a Go value (maps, slices, scalars) into a node; map keys come out
// in the order keys gives them.
func toNode(v any, keys ...string) *node {
	switch t := v.(type) {
	case *node:
		return t
	case []any:
		n := &node{arr: true, array: []*node{}}
		for _, e := range t {
			n.array = append(n.array, toNode(e))
		}
		return n
	case map[string]any:
		n := &node{obj: true}
		for _, k := range keys {
			if e, ok := t[k]; ok {
				n.object = append(n.object, member{k, toNode(e)})
			}
		}
		return n
	default:
		raw, _ := marshal(t)
		return &node{scalar: raw}
	}
}

// get returns the value of key in an object node, or nil.
func (n *node) get(key string) *node {
	if n == nil {
		return nil
	}
	for _, m := range n.object {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// set replaces key's value, or appends key.
func (n *node) set(key string, v *node) {
	for i, m := range n.object {
		if m.key == key {
			n.object[i].val = v
			return
		}
	}
	n.object = append(n.object, member{key, v})
}

func (n *node) remove(key string) {
	for i, m := range n.object {
		if m.key == key {
			n.object = append(n.object[:i], n.object[i+1:]...)
			return
		}
	}
}

// str is the value of a string node, "" for anything else.
func (n *node) str() string {
	var s string
	if n != nil && n.scalar != nil && json.Unmarshal(n.scalar, &s) == nil {
		return s
	}
	return ""
}

// equal compares two nodes as JSON values (key order ignored).
func (n *node) equal(o *node) bool {
	a, errA := decodeValue(n.encode())
	b, errB := decodeValue(o.encode())
	return errA == nil && errB == nil && reflect.DeepEqual(a, b)
}

// decodeValue reads JSON as encoding/json does, except that a number too large for
// a float64 (which a settings file may hold: the tree keeps it as written) stays its
// text instead of failing the whole comparison.
func decodeValue(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return numbersAsFloats(v), nil
}

func numbersAsFloats(v any) any {
	switch t := v.(type) {
	case json.Number:
		if f, err := t.Float64(); err == nil {
			return f
		}
		return string(t)
	case map[string]any:
		for k, e := range t {
			t[k] = numbersAsFloats(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbersAsFloats(e)
		}
	}
	return v
}

// encode writes the value the way Claude Code writes its settings files
// (JSON.stringify with an indent of two spaces), in time linear in its output.
func (n *node) encode() []byte {
	var b bytes.Buffer
	n.write(&b, 0)
	return b.Bytes()
}

// indent writes depth levels of indentation.
func indent(b *bytes.Buffer, depth int) {
	const spaces = "                                                                "
	for w := 2 * depth; w > 0; w -= len(spaces) {
		b.WriteString(spaces[:min(w, len(spaces))])
	}
}

func (n *node) write(b *bytes.Buffer, depth int) {
	switch {
	case n.obj && len(n.object) == 0:
		b.WriteString("{}")
	case n.obj:
		b.WriteString("{\n")
		for i, m := range n.object {
			key, _ := marshal(m.key)
			indent(b, depth+1)
			b.Write(key)
			b.WriteString(": ")
			m.val.write(b, depth+1)
			if i < len(n.object)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		indent(b, depth)
		b.WriteByte('}')
	case n.arr && len(n.array) == 0:
		b.WriteString("[]")
	case n.arr:
		b.WriteString("[\n")
		for i, e := range n.array {
			indent(b, depth+1)
			e.write(b, depth+1)
			if i < len(n.array)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		indent(b, depth)
		b.WriteByte(']')
	default:
		b.Write(n.scalar)
	}
}

// marshal encodes a scalar without Go's HTML escaping (JSON.stringify has none).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}
