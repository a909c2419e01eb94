package ide

import (
	"path/filepath"
	"testing"
)

// The server writes its lock file where the CLI reads: the folder it picks is the
// first that LockDirs (what checkhealth and the tests list) names.
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
		if err != nil || got != want || LockDirs()[0] != want {
			t.Errorf("CLAUDE_CONFIG_DIR=%q: resolveLockDir = %q, %v; LockDirs = %v; want %s first", config, got, err, LockDirs(), want)
		}
		if got, _ := resolveLockDir("/given"); got != "/given" {
			t.Errorf("a given folder is used as it is, got %q", got)
		}
	}
}
