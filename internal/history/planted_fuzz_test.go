package history

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No store content makes a history command panic: a store of the user's whose log,
// heads.log, rebuilds.log, diff and plan hold anything at all is listed, inspected,
// decided on and cleaned up, each either working or failing with an error.
func FuzzStoreContent(f *testing.F) {
	seed := func() (log, heads, rebuilds, diff string) {
		w, c := oneFile(f, "a.txt", "1\n2\n3\n")
		e := w.edit(c, "a.txt", "1\ntwo\n3\n")
		if _, err := w.decide(Rejected, false, e.EditID); err != nil {
			f.Fatal(err)
		}
		read := func(name string) string {
			b, _ := os.ReadFile(filepath.Join(w.store.dir, name))
			return string(b)
		}
		return read("logs/" + c + ".log"), read(headsLog), read("rebuilds.log"), read(*e.DiffFile)
	}
	log, heads, rebuilds, diff := seed()
	f.Add(log, heads, rebuilds, diff, "")
	f.Add(strings.ReplaceAll(log, `"rejected"`, `"pending"`), heads, "", diff, `{"store":"x","plan":{},"signature":"y"}`)
	f.Add(strings.ReplaceAll(log, "a.txt", "../../etc/passwd"), heads, rebuilds, "@@ -1,2 +1 @@\n-1\n", "{")
	f.Add(strings.ReplaceAll(log, `"mode":`, `"hunk_status":["rejected","rejected"],"mode":`), "", rebuilds, "", "")
	f.Add(`{"edit_id":"e","conversation_id":"conv_1_a","file_path":"/x","operation":"move","source_path":"/x"}`+"\n", "", "", "", "")
	f.Fuzz(func(t *testing.T, log, heads, rebuilds, diff, plan string) {
		w, c := oneFile(t, "a.txt", "1\n2\n3\n")
		e := w.edit(c, "a.txt", "1\ntwo\n3\n")
		for name, content := range map[string]string{"logs/" + c + ".log": log, headsLog: heads, "rebuilds.log": rebuilds, *e.DiffFile: diff, planName: plan} {
			os.MkdirAll(filepath.Dir(filepath.Join(w.store.dir, name)), 0o700)
			if err := os.WriteFile(filepath.Join(w.store.dir, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		ctx := context.Background()
		list, _ := w.store.Review(ctx, Filter{})
		_, _ = w.store.Inspect()
		_, _ = w.store.PendingChanges(w.abs("a.txt"))
		var ids []string
		if list != nil {
			for _, x := range list.Entries {
				ids = append(ids, x.EditID)
			}
		}
		for _, to := range []Status{Rejected, Accepted} {
			_, _ = w.store.Decide(ctx, Selection{Conversation: c}, to, true)
			_, _ = w.store.Decide(ctx, Selection{IDs: ids, WithLater: true}, to, false)
			_, _ = w.store.Decide(ctx, Selection{File: w.abs("a.txt"), Lines: []LineRange{{Start: 1, End: 3}}}, to, false)
		}
		_, _, _ = w.store.Cleanup(ctx, 0)
	})
}
