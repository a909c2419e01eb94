package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes content to path, making its folders, or fails the test.
func WriteFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// ReadFile is path's content, or fails the test.
func ReadFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// HomeVars are the environment variables that put a program's home and its XDG
// folders inside home, so that it reads nothing of the real user's.
func HomeVars(home string) []string {
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
	}
}

// Dir is a test's folder of files, named by slash-separated paths relative to it.
type Dir struct {
	TB   testing.TB
	Root string
}

// Path is rel's absolute path.
func (d Dir) Path(rel string) string { return filepath.Join(d.Root, filepath.FromSlash(rel)) }

// Write writes content to rel, making its folders, or fails the test.
func (d Dir) Write(rel, content string) {
	d.TB.Helper()
	WriteFile(d.TB, d.Path(rel), content)
}

// Read is rel's content, or fails the test.
func (d Dir) Read(rel string) string {
	d.TB.Helper()
	return ReadFile(d.TB, d.Path(rel))
}

// TempDir is a fresh folder removed when the test ends, by its real path: the
// history and the lock files record real paths, and /tmp may be a link.
func TempDir(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}
