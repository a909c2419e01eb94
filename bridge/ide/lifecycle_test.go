package ide

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/coder/websocket"

	"github.com/mcpdiff/mcpdiff/bridge/ide/lockfile"
)

func TestLockFileIsPrivateCompactAndComplete(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ide")
	if err := os.Mkdir(dir, 0o755); err != nil { // an old, too open folder
		t.Fatal(err)
	}
	workspace := t.TempDir()
	s := startServer(t, func(o *Options) {
		o.LockDir = dir
		o.Workspace = []string{workspace, "/elsewhere/lsp-root"}
	}, nil)

	if want := filepath.Join(dir, strconv.Itoa(s.Port())+".lock"); s.LockPath() != want {
		t.Fatalf("LockPath() = %q, want %q", s.LockPath(), want)
	}
	assertMode(t, dir, 0o700)
	assertMode(t, s.LockPath(), 0o600)
	data, err := os.ReadFile(s.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	json.Compact(&compact, data)
	if !bytes.Equal(compact.Bytes(), data) {
		t.Errorf("lock file is not compact JSON: %s", data)
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatalf("lock file is not JSON: %v", err)
	}
	want := map[string]any{
		"pid":              float64(os.Getpid()),
		"workspaceFolders": []any{workspace, "/elsewhere/lsp-root"},
		"ideName":          "Neovim",
		"transport":        "ws",
		"authToken":        s.Token(),
	}
	if len(fields) != len(want) {
		t.Errorf("lock file has fields %v, want exactly %v", fields, want)
	}
	for k, v := range want {
		if !reflect.DeepEqual(fields[k], v) {
			t.Errorf("lock file %s = %#v, want %#v", k, fields[k], v)
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(s.Token()) {
		t.Errorf("token %q is not 32 lowercase hex digits", s.Token())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("lock folder holds %d entries, want only the lock file (no temp files)", len(entries))
	}
}

func TestLockDirComesFromClaudeConfigDirOrHome(t *testing.T) {
	config, home := t.TempDir(), t.TempDir()
	tests := []struct {
		name, configDir, want string
	}{
		{"CLAUDE_CONFIG_DIR set", config, filepath.Join(config, "ide")},
		{"CLAUDE_CONFIG_DIR empty", "", filepath.Join(home, ".claude", "ide")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLAUDE_CONFIG_DIR", tt.configDir)
			t.Setenv("HOME", home)
			s := startServer(t, func(o *Options) { o.LockDir = "" }, nil)
			if got := filepath.Dir(s.LockPath()); got != tt.want {
				t.Errorf("lock file in %q, want %q", got, tt.want)
			}
			assertMode(t, tt.want, 0o700)
		})
	}
}

func TestSetWorkspaceRewritesTheLockFile(t *testing.T) {
	s := startServer(t, nil, nil)
	folder := t.TempDir()
	if err := s.SetWorkspace([]string{folder}); err != nil {
		t.Fatal(err)
	}
	var lock lockfile.Content
	data, _ := os.ReadFile(s.LockPath())
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatal(err)
	}
	if len(lock.WorkspaceFolders) != 1 || lock.WorkspaceFolders[0] != folder || lock.AuthToken != s.Token() {
		t.Errorf("lock file after SetWorkspace: %s", data)
	}
	assertMode(t, s.LockPath(), 0o600)
	if err := s.SetWorkspace([]string{"relative"}); err == nil {
		t.Error("SetWorkspace accepted a relative folder")
	}
}

func TestStopRejectsPendingDiffsClosesClientsPortAndLockFile(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	wait := c.openShown(s, writeFile(t, "a.txt", "a\n"), "b\n", tabA)

	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	wantTexts(t, c.texts(wait()), "DIFF_REJECTED", tabA)
	if got := s.editor.waitClosed(t); got != (closeCall{tabA, NothingWritten}) {
		t.Errorf("Close %+v, want the pending diff rejected", got)
	}
	var closeErr websocket.CloseError
	if err := c.waitEnd(); !errors.As(err, &closeErr) || closeErr.Code != websocket.StatusGoingAway || closeErr.Reason != "Server shutting down" {
		t.Errorf("client saw %v, want close 1001 \"Server shutting down\"", err)
	}
	if _, err := os.Stat(s.LockPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock file still there after Stop: %v", err)
	}
	if conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))); err == nil {
		conn.Close()
		t.Error("the port still accepts connections after Stop")
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if s.Status().Running {
		t.Error("Status().Running after Stop")
	}
}

func TestStopLeavesOtherLockFilesAlone(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "12345.lock")
	if err := os.WriteFile(other, []byte(`{"pid":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, func(o *Options) { o.LockDir = dir }, nil)
	s.Stop()
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another editor's lock file was touched: %v", err)
	}
}

func TestRestartKeepsPortAndToken(t *testing.T) {
	first := startServer(t, nil, nil)
	port, token, dir := first.Port(), first.Token(), filepath.Dir(first.LockPath())
	first.Stop()

	second := startServer(t, func(o *Options) {
		o.Port, o.Token, o.LockDir = port, token, dir
	}, nil)
	if second.Port() != port || second.Token() != token || second.LockPath() != first.LockPath() {
		t.Fatalf("restarted on port %d token match %v, want port %d and the same token",
			second.Port(), second.Token() == token, port)
	}
	connectReady(t, second) // a client holding the old lock file's token gets in
}

func TestTakenPortFallsBackToARandomOne(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	s := startServer(t, func(o *Options) { o.Port = takenPort }, nil)
	if s.Port() == takenPort || s.Port() == 0 {
		t.Errorf("Port() = %d, want a random port other than %d", s.Port(), takenPort)
	}
	s.logs.waitFor(t, "is not available")
}

func TestStartRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Options)
	}{
		{"no editor", func(o *Options) { o.Editor = nil }},
		{"no pid", func(o *Options) { o.PID = 0 }},
		{"dead pid", func(o *Options) { o.PID = 1 << 30 }},
		{"relative workspace", func(o *Options) { o.Workspace = []string{"project"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Editor: newFakeEditor(), LockDir: t.TempDir(), PID: os.Getpid()}
			tt.modify(&o)
			s := NewServer(o)
			if err := s.Start(); err == nil {
				s.Stop()
				t.Fatal("Start succeeded")
			}
			if entries, _ := os.ReadDir(o.LockDir); len(entries) != 0 {
				t.Errorf("a refused Start left %d files in the lock folder", len(entries))
			}
		})
	}
}

func TestStatusIsJSON(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	c.openShown(s, writeFile(t, "a.txt", "a\n"), "b\n", tabA)
	data, err := json.Marshal(s.Status())
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Running bool   `json:"running"`
		Port    int    `json:"port"`
		Lock    string `json:"lockPath"`
		Clients []struct {
			ClaudePID int  `json:"claudePid"`
			Ready     bool `json:"ready"`
		} `json:"clients"`
		Diffs []struct {
			TabName string `json:"tabName"`
			Status  string `json:"status"`
		} `json:"diffs"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if !st.Running || st.Port != s.Port() || st.Lock != s.LockPath() ||
		len(st.Clients) != 1 || st.Clients[0].ClaudePID != 4242 || !st.Clients[0].Ready ||
		len(st.Diffs) != 1 || st.Diffs[0].TabName != tabA || st.Diffs[0].Status != "pending" {
		t.Errorf("Status JSON %s", data)
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %o, want %o", path, got, want)
	}
}
