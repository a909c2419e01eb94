package filetools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A call's arguments are checked (withArgsCheck), then decoded into the tool's
// struct (typed), here.
//
// They are checked against each tool's input schema here rather than by
// mcp-go's WithInputSchemaValidation, whose messages are JSON pointers and schema
// keywords ("/start_line: got string, want integer") that a model cannot tell how
// to fix. These say which argument is wrong, what it must be, what it is for, and
// to call the tool again.

// withArgsCheck wraps a tool's handler with the check of its arguments.
func withArgsCheck(tool mcp.Tool, next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := checkArgs(tool, req.Params.Arguments); err != nil {
			return fail(err), nil
		}
		return next(ctx, req)
	}
}

// typed makes a handler of decoded parameters a tool handler: the call's arguments
// are decoded into an A first, and arguments that do not decode are the tool's error.
func typed[A any](h func(context.Context, mcp.CallToolRequest, A) (*mcp.CallToolResult, error)) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a A
		if err := req.BindArguments(&a); err != nil {
			return fail(badArguments(req, err)), nil
		}
		return h(ctx, req, a)
	}
}

// checkArgs lists every problem of a call's arguments, or returns nil. Unknown
// argument names are allowed (as the schemas allow them), but named when something
// else is wrong: a misspelt name is the usual cause of a missing argument.
func checkArgs(tool mcp.Tool, raw any) error {
	schema := tool.InputSchema
	args, ok := raw.(map[string]any)
	if raw != nil && !ok {
		return errorf("the arguments of %s must be a JSON object of named arguments (%s), not %s; call %s again with an object",
			tool.Name, strings.Join(propertyNames(schema.Properties), ", "), describeValue(raw), tool.Name)
	}
	var problems []string
	for _, name := range schema.Required {
		if v, ok := args[name]; !ok || v == nil {
			problems = append(problems, fmt.Sprintf("missing required argument %q for %s.%s", name, tool.Name, describeProperty(name, schema.Properties[name])))
		}
	}
	var unknown []string
	for _, name := range sortedKeys(args) {
		prop, known := schema.Properties[name].(map[string]any)
		if !known {
			unknown = append(unknown, fmt.Sprintf("%q", name))
			continue
		}
		if args[name] == nil {
			continue // absent: a missing required one is reported above
		}
		if msg := checkValue(args[name], prop, name); msg != "" {
			problems = append(problems, fmt.Sprintf("argument %q of %s %s.%s", name, tool.Name, msg, describeProperty(name, prop)))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	if len(unknown) > 0 {
		problems = append(problems, fmt.Sprintf("%s takes no argument %s (check the spelling)", tool.Name, strings.Join(unknown, ", ")))
	}
	required := "none"
	if len(schema.Required) > 0 {
		required = strings.Join(schema.Required, ", ")
	}
	return errorf("%s\nNothing was done. Call %s again with these arguments fixed (required: %s; optional: %s).",
		strings.Join(problems, "\n"), tool.Name, required, strings.Join(optionalNames(schema), ", "))
}

// checkValue checks v against a property's schema and says what is wrong ("must be
// an integer, but a string (\"5\") was given"), or returns "". where names v in
// messages about its parts (operations[1].op).
func checkValue(v any, schema map[string]any, where string) string {
	if alts, ok := schema["oneOf"].([]any); ok {
		for _, alt := range alts {
			if m, ok := alt.(map[string]any); ok && checkValue(v, m, where) == "" {
				return ""
			}
		}
		var kinds []string
		for _, alt := range alts {
			if m, ok := alt.(map[string]any); ok {
				if t, _ := m["type"].(string); t != "" && hasType(v, t) {
					return checkValue(v, m, where) // the right kind, wrong inside: say where
				}
				kinds = append(kinds, describeType(m))
			}
		}
		return fmt.Sprintf("must be %s, but %s was given", strings.Join(kinds, " or "), describeValue(v))
	}
	typ, _ := schema["type"].(string)
	if typ != "" && !hasType(v, typ) {
		return fmt.Sprintf("must be %s, but %s was given", describeType(schema), describeValue(v))
	}
	if enum := stringsOf(schema["enum"]); len(enum) > 0 {
		s, _ := v.(string)
		if !slices.Contains(enum, s) {
			return fmt.Sprintf("must be one of %s, but %s was given", strings.Join(enum, ", "), describeValue(v))
		}
	}
	if min, ok := number(schema["minimum"]); ok {
		if n, _ := number(v); n < min {
			return fmt.Sprintf("must be at least %v, but %v was given", min, n)
		}
	}
	if p, ok := schema["pattern"].(string); ok {
		if s, _ := v.(string); !regexp.MustCompile(p).MatchString(s) {
			return fmt.Sprintf("must match the pattern %s, but %s was given", p, describeValue(v))
		}
	}
	if items, ok := v.([]any); ok {
		if min, ok := number(schema["minItems"]); ok && float64(len(items)) < min {
			return fmt.Sprintf("must hold at least %v item(s), but it is empty", min)
		}
		if itemSchema, ok := schema["items"].(map[string]any); ok {
			for i, item := range items {
				if msg := checkItem(item, itemSchema, fmt.Sprintf("%s[%d]", where, i)); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

// checkItem checks one element of an array; the message names the element.
func checkItem(v any, schema map[string]any, where string) string {
	if msg := checkValue(v, schema, where); msg != "" {
		return fmt.Sprintf("is wrong at %s: it %s", where, msg)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	props, _ := schema["properties"].(map[string]any)
	for _, name := range stringsOf(schema["required"]) {
		if obj[name] == nil {
			return fmt.Sprintf("is wrong at %s: it has no %q%s", where, name, describeAside(props[name]))
		}
	}
	for _, name := range sortedKeys(obj) {
		prop, ok := props[name].(map[string]any)
		if !ok || obj[name] == nil {
			continue
		}
		if msg := checkValue(obj[name], prop, where+"."+name); msg != "" {
			return fmt.Sprintf("is wrong at %s.%s: it %s%s", where, name, msg, describeAside(prop))
		}
	}
	return ""
}

// hasType reports whether a JSON-decoded value has a JSON Schema type.
func hasType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "number":
		_, ok := number(v)
		return ok
	case "integer":
		n, ok := number(v)
		return ok && n == math.Trunc(n)
	}
	return true
}

// number reads a JSON number (float64 once decoded; ints from schema options).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// describeType names what a schema accepts: "a string", "an array of strings".
func describeType(schema map[string]any) string {
	switch t, _ := schema["type"].(string); t {
	case "string":
		return "a string"
	case "integer":
		return "an integer (a JSON number, not a string)"
	case "number":
		return "a number"
	case "boolean":
		return "a boolean (true or false, not a string)"
	case "object":
		return "an object"
	case "array":
		if items, ok := schema["items"].(map[string]any); ok {
			if it, _ := items["type"].(string); it != "" {
				return "an array of " + it + "s"
			}
		}
		return "an array"
	}
	return "a JSON value"
}

// describeValue names what the model sent, with a short quote of it.
func describeValue(v any) string {
	quote := func(s string) string {
		if r := []rune(s); len(r) > 40 {
			s = string(r[:40]) + "…"
		}
		return fmt.Sprintf("%q", s)
	}
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string (" + quote(x) + ")"
	case bool:
		return fmt.Sprintf("a boolean (%v)", x)
	case float64, int, int64, json.Number:
		return fmt.Sprintf("a number (%v)", x)
	case []any:
		return fmt.Sprintf("an array of %d item(s)", len(x))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// describeProperty is " name: its description", to remind the model what it is for.
func describeProperty(name string, prop any) string {
	m, _ := prop.(map[string]any)
	if d, _ := m["description"].(string); d != "" {
		return " " + name + ": " + d
	}
	return ""
}

// describeAside is " (its description)" for a part of an argument.
func describeAside(prop any) string {
	m, _ := prop.(map[string]any)
	if d, _ := m["description"].(string); d != "" {
		return " (" + strings.TrimSuffix(d, ".") + ")"
	}
	return ""
}

func optionalNames(schema mcp.ToolInputSchema) []string {
	var out []string
	for _, name := range propertyNames(schema.Properties) {
		if !slices.Contains(schema.Required, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

func propertyNames(props map[string]any) []string { return sortedKeys(props) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// stringsOf reads a []string or []any of strings from a schema.
func stringsOf(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// badArguments explains arguments the schema check let through but a handler could
// not decode into its parameters.
func badArguments(req mcp.CallToolRequest, err error) error {
	return errorf("the arguments of %s could not be read: %v; check each argument's type against the tool's schema and call %s again",
		req.Params.Name, err, req.Params.Name)
}
