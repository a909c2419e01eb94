package ide

import (
	"path/filepath"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/idelock"
)

// The server writes its lock file where the CLI reads: the folder it picks is the
// first that idelock.Dirs (what checkhealth and the tests list) names.
func TestLockDirIsTheFirstTheCLIReads(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, config := range []string{"", filepath.Join(home, "cfg")} {
		t.Setenv("CLAUDE_CONFIG_DIR", config)
		want := filepath.Join(home, ".claude", "ide")
		if config != "" {
			want = filepath.Join(config, "ide")
		}
		got, err := resolveLockDir("")
		if err != nil || got != want || idelock.Dirs()[0] != want {
			t.Errorf("CLAUDE_CONFIG_DIR=%q: resolveLockDir = %q, %v; idelock.Dirs = %v; want %s first", config, got, err, idelock.Dirs(), want)
		}
		if got, _ := resolveLockDir("/given"); got != "/given" {
			t.Errorf("a given folder is used as it is, got %q", got)
		}
	}
}
