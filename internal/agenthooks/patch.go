package agenthooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Codex's apply_patch (and OpenCode's, for GPT-class models) takes one patch that may
// add, update, delete and move several files:
//
//	*** Begin Patch
//	*** Add File: new.txt
//	+content
//	*** Update File: old.txt
//	*** Move to: renamed.txt
//	@@
//	-a
//	+b
//	*** Delete File: gone.txt
//	*** End Patch
//
// Only the file headers matter here: the bytes before and after are read from the
// files themselves.

// patchFile is one file a patch touches.
type patchFile struct {
	op     string // "add", "update" or "delete"
	path   string // as the patch names it: relative to the cwd, or absolute
	moveTo string // an update's new name, or ""
}

// patchText finds the patch in an apply_patch call's input: tool_input.command as
// Codex gives it (the freeform text, or the JSON form's {"input": …} or argv list
// ["apply_patch", "<patch>"]), OpenCode's patchText, or input/patch.
func patchText(input json.RawMessage) (string, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(input, &in); err != nil {
		var s string
		if json.Unmarshal(input, &s) == nil {
			return unwrapPatch(s), nil
		}
		return "", errors.New("the apply_patch input is not an object")
	}
	for _, key := range []string{"command", "patchText", "input", "patch"} {
		raw, ok := in[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return unwrapPatch(s), nil
		}
		var argv []string
		if json.Unmarshal(raw, &argv) == nil {
			for i := len(argv) - 1; i >= 0; i-- {
				if strings.Contains(argv[i], "*** Begin Patch") {
					return unwrapPatch(argv[i]), nil
				}
			}
		}
	}
	return "", errors.New("the apply_patch call carries no patch (tool_input.command)")
}

// unwrapPatch takes the patch out of a JSON-form string ({"input": "…"}).
func unwrapPatch(s string) string {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") {
		var in struct {
			Input string `json:"input"`
		}
		if json.Unmarshal([]byte(t), &in) == nil && in.Input != "" {
			return in.Input
		}
	}
	return s
}

// parsePatch lists the files of a patch, in its order.
func parsePatch(text string) ([]patchFile, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "*** Begin Patch" {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, errors.New("the patch has no '*** Begin Patch' line")
	}
	var files []patchFile
	ended := false
	for i := start + 1; i < len(lines) && !ended; i++ {
		l := strings.TrimRight(lines[i], " \t")
		header := func(prefix string) (string, bool) {
			rest, ok := strings.CutPrefix(l, prefix)
			return strings.TrimSpace(rest), ok
		}
		if p, ok := header("*** Add File:"); ok {
			files = append(files, patchFile{op: "add", path: p})
		} else if p, ok := header("*** Update File:"); ok {
			files = append(files, patchFile{op: "update", path: p})
		} else if p, ok := header("*** Delete File:"); ok {
			files = append(files, patchFile{op: "delete", path: p})
		} else if p, ok := header("*** Move to:"); ok {
			if len(files) == 0 || files[len(files)-1].op != "update" || files[len(files)-1].moveTo != "" {
				return nil, fmt.Errorf("line %d: '*** Move to:' must follow an '*** Update File:' line", i+1)
			}
			if p == "" {
				return nil, fmt.Errorf("line %d: '*** Move to:' names no file", i+1)
			}
			files[len(files)-1].moveTo = p
		} else if l == "*** End Patch" {
			ended = true
		} else if strings.HasPrefix(l, "*** ") && l != "*** End of File" {
			return nil, fmt.Errorf("line %d: unknown patch header %q", i+1, l)
		} else if len(files) == 0 && strings.TrimSpace(l) != "" {
			return nil, fmt.Errorf("line %d: text before the first file header", i+1)
		}
	}
	if !ended {
		return nil, errors.New("the patch has no '*** End Patch' line")
	}
	if len(files) == 0 {
		return nil, errors.New("the patch names no file")
	}
	for _, f := range files {
		if f.path == "" {
			return nil, errors.New("a patch header names no file")
		}
	}
	return files, nil
}

// patchTargets are the files an apply_patch call writes, absolute.
func patchTargets(input json.RawMessage, cwd string) ([]Target, error) {
	text, err := patchText(input)
	if err != nil {
		return nil, err
	}
	files, err := parsePatch(text)
	if err != nil {
		return nil, fmt.Errorf("the patch does not parse: %w", err)
	}
	var out []Target
	for _, f := range files {
		t := Target{Path: abs(f.path, cwd), MoveTo: abs(f.moveTo, cwd), Whole: f.op == "add", Delete: f.op == "delete"}
		if !filepath.IsAbs(t.Path) {
			return nil, fmt.Errorf("the patch names %q, relative, and the event has no cwd", f.path)
		}
		out = append(out, t)
	}
	return out, nil
}
