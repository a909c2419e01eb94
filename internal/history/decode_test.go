package history

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeEntry must give exactly what encoding/json gives, for any input.
func FuzzDecodeEntry(f *testing.F) {
	e := Entry{EditID: "3f2a9c1b-aaaa-4bbb-8ccc-000000000000", ConversationID: "conv_1_ab", ToolCallIndex: 3, Seq: 1795326139810,
		Timestamp: "2026-11-22T05:18:00.123Z", Operation: Edit, FilePath: "/w/a \"b\"\n\u00e9\U0001F600.txt", ToolName: "edit_file",
		Status: Pending, DiffFile: strPtr("diffs/c/x.diff"), HashBefore: strPtr("ab"), Source: SourceMCP,
		Added: new(int), Removed: new(int), BlockStatus: []Status{Pending, Rejected}}
	good, _ := json.Marshal(e)
	for _, seed := range []string{
		string(good),
		`{"edit_id":"x","file_path":"/a","source_path":null,"extra":[1,2],"seq":-5}`,
		`{"EDIT_ID":"x","file_path":"/a"}`,
		`{"edit_id":"x","file_path":"/a","operation":"delete","mode":"0755"}`, `{"edit_id":"x","file_path":"/a","Mode":"0755"}`,
		`{"edit_id":"\ud83d\ude00","file_path":"/a","n":1.5e3,"t":true,"f":false}`,
		`{"edit_id":"x","file_path":"/a","tool_call_index":1.0}`,
		`{"edit_id":"x","file_path":"/a","added":3,"removed":null,"hunk_status":["pending","rejected"]}`,
		`{"edit_id":"x","file_path":"/a","added":1e2,"Removed":2}`, `{"edit_id":"x","file_path":"/a","added":99999999999999999999}`,
		`{"edit_id":"bad \x01","file_path":"/a"}`,
		`{}`, `[]`, `{"edit_id":"x"`, `{"edit_id":"x"} x`, `{"edit_id":"\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) { readsAsJSON(t, line, "decodeEntry", decodeEntry) })
}

// readsAsJSON fails the test unless decode reads line exactly as encoding/json does:
// both fail, or both give the same T.
func readsAsJSON[T any](t *testing.T, line []byte, name string, decode func(string, *T) error) {
	t.Helper()
	var want, got T
	wantErr := json.Unmarshal(line, &want)
	gotErr := decode(string(line), &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: encoding/json err %v, %s err %v", line, wantErr, name, gotErr)
	}
	if wantErr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("%q:\n json %+v\n fast %+v", line, want, got)
	}
}

func FuzzDecodeHead(f *testing.F) {
	good, _ := json.Marshal(head{Path: "/w/a \"b\"\n\u00e9.txt", Seq: 1795326139810, Exists: true, Hash: "ab", Ino: 1 << 40, Size: 12, Mtime: -3})
	for _, seed := range []string{
		string(good),
		`{"path":"/a","forget":true,"exists":false,"hash":null,"seq":null}`,
		`{"PATH":"/a"}`, `{"path":"/a","Exists":true}`, `{"path":"/a","extra":[1,{"x":2}],"t":true}`,
		`{"path":"/a","ino":18446744073709551615}`, `{"path":"/a","ino":-1}`, `{"ino":-0}`, `{"ino":null}`, `{"path":"/a","seq":1.5}`, `{"path":"/a","seq":1e3}`,
		`{"path":"/a","exists":"yes"}`, `{"path":"\ud800"}`, `{}`, `[]`, `{"path":"/a"`, `{"path":"/a"} x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) { readsAsJSON(t, line, "decodeHead", decodeHead) })
}

func BenchmarkDecodeEntry(b *testing.B) {
	e := Entry{EditID: "3f2a9c1b-aaaa-4bbb-8ccc-000000000000", ConversationID: "conv_1795326139810_60915602", ToolCallIndex: 3,
		Seq: 1795326139810000000, Timestamp: "2026-11-22T05:18:00.123Z", Operation: Edit, FilePath: "/home/user/project/src/main.go",
		ToolName: "edit_file", Status: Pending, DiffFile: strPtr("diffs/conv_1795326139810_60915602/3f2a9c1b-aaaa-4bbb-8ccc-000000000000.diff"),
		HashBefore: strPtr("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
		HashAfter:  strPtr("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"), Source: SourceMCP}
	raw, _ := json.Marshal(e)
	line := string(raw)
	for _, name := range []string{"fast", "encoding/json"} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var got Entry
				if name == "fast" {
					decodeEntry(line, &got)
				} else {
					json.Unmarshal(raw, &got)
				}
			}
		})
	}
}
