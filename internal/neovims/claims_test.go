package neovims

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/idelock"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// lockFileOf is the lock file a bridge listening at srv would have written.
func lockFileOf(t *testing.T, srv *httptest.Server, token string) idelock.File {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	lf := idelock.File{Path: filepath.Join(t.TempDir(), u.Port()+".lock")}
	lf.AuthToken = token
	return lf
}

// askClaims writes its own HTTP/1.0 (the hook must not start net/http: see
// askClaims); Go's server is what answers it, so these ask one.
func TestAskClaimsOfGosServer(t *testing.T) {
	writes := make([]Written, 3000) // an answer of some 17 KB: no chunks in HTTP/1.0
	want := make([]bool, len(writes))
	for i := range writes {
		writes[i] = Written{Path: "/w/a.txt", Hash: "h"}
		want[i] = i%3 == 0
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got []Written
		if r.Method != http.MethodPost || r.URL.Path != ClaimsPath || r.Header.Get("X-Claude-Code-Ide-Authorization") != "tok" ||
			r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&got) != nil || len(got) != len(writes) {
			http.Error(w, "not the question", http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(want)
	}))
	defer srv.Close()
	body, _ := json.Marshal(writes)
	got, err := askClaims(context.Background(), lockFileOf(t, srv, "tok"), body)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("askClaims = %d answers (%v), want %d", len(got), err, len(want))
	}
}

// Whatever else answers claims nothing and is not silent: a refusal (another IDE's
// server, a wrong token), an answer that is not a list of booleans, a port where
// nothing listens. A token that would break the request into more headers is never
// sent.
func TestAskClaimsOfOthers(t *testing.T) {
	var asked atomic.Int32
	answers := map[string]func(w http.ResponseWriter){
		"refused":   func(w http.ResponseWriter) { http.Error(w, "no", http.StatusUnauthorized) },
		"not JSON":  func(w http.ResponseWriter) { io.WriteString(w, "<html>") },
		"an object": func(w http.ResponseWriter) { io.WriteString(w, `{"a":1}`) },
	}
	for name, answer := range answers {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answer(w) }))
		got, err := askClaims(context.Background(), lockFileOf(t, srv, "tok"), []byte("[]"))
		srv.Close()
		if got != nil || err != nil {
			t.Errorf("%s: askClaims = %v, %v; want no claim, not silent", name, got, err)
		}
	}

	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { asked.Add(1) }))
	defer srv.Close()
	if got, err := askClaims(context.Background(), lockFileOf(t, srv, "tok\r\nX-Other: 1"), []byte("[]")); got != nil || err != nil || asked.Load() != 0 {
		t.Errorf("a token with a line break: askClaims = %v, %v, %d requests; want no claim and no request", got, err, asked.Load())
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	lf := idelock.File{Path: filepath.Join(t.TempDir(), strconv.Itoa(port)+".lock")}
	if got, err := askClaims(context.Background(), lf, []byte("[]")); got != nil || err != nil {
		t.Errorf("nothing listening: askClaims = %v, %v; want no claim, not silent", got, err)
	}
}

// A bridge that takes the question and never answers is silent once ctx ends, and
// askClaims returns then.
func TestAskClaimsOfASilentBridge(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := askClaims(ctx, lockFileOf(t, srv, "tok"), []byte("[]"))
		done <- err
	}()
	if err := testenv.Receive(t, done, "askClaims's return after its deadline"); err == nil {
		t.Fatal("a bridge that never answered is not silent")
	}
}
