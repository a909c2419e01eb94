// Package userkey is the per-user secret mcpdiff signs with: a random key kept
// outside every workspace, in $XDG_STATE_HOME/mcpdiff/ (~/.local/state/mcpdiff/ by
// default), readable by its owner only. A store of edits, and the plan of a decision
// carried out in it, count as this user's only when they carry a signature made
// with it; a repository can bring a store, but not this key.
package userkey

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpdiff/mcpdiff/internal/atomicfile"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// fileName is the key's file in Dir.
const fileName = "key"

// ErrNoKey means this user has no key yet: nothing was ever signed for them here.
var ErrNoKey = errors.New("no mcpdiff key yet")

// Dir is mcpdiff's folder for per-user state: $XDG_STATE_HOME/mcpdiff, else
// ~/.local/state/mcpdiff (a relative XDG_STATE_HOME is ignored, as the XDG rules say).
func Dir() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "mcpdiff")
}

// Path is where the key is kept.
func Path() string { return filepath.Join(Dir(), fileName) }

// Key signs and checks signatures.
type Key struct{ secret []byte }

// keys caches the key per path: the environment (and so the path) is fixed in a
// real process, but tests give their processes folders of their own.
var keys sync.Map // path → Key

// Load returns the user's key. With orCreate, a missing key is made (0600, in a folder
// only the user can enter); without, a missing key is ErrNoKey. A key file that is
// not a regular file of this user, or that others can read, is refused: whoever can
// read it can make stores this user trusts.
func Load(orCreate bool) (Key, error) {
	path := Path()
	if k, ok := keys.Load(path); ok {
		return k.(Key), nil
	}
	k, err := read(path)
	if errors.Is(err, ErrNoKey) && orCreate {
		k, err = create(path)
	}
	if err != nil {
		return Key{}, err
	}
	keys.Store(path, k)
	return k, nil
}

// read reads the key file without ever blocking on it (a FIFO planted in its place).
func read(path string) (Key, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Key{}, fmt.Errorf("%w (%s does not exist)", ErrNoKey, path)
	}
	if err != nil {
		return Key{}, fmt.Errorf("read the mcpdiff key %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Key{}, fmt.Errorf("read the mcpdiff key %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return Key{}, fmt.Errorf("the mcpdiff key %s is not a regular file; remove it (a new key is made, and stores signed with the old one must be adopted again)", path)
	}
	if fi.Mode().Perm()&0o077 != 0 || !workspace.OwnedByMe(fi) {
		return Key{}, fmt.Errorf("the mcpdiff key %s can be read by other users, or is not yours; run `chmod 600 %s` if it is yours, else remove it", path, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return Key{}, fmt.Errorf("read the mcpdiff key %s: %w", path, err)
	}
	secret, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(secret) < 32 {
		return Key{}, fmt.Errorf("the mcpdiff key %s is damaged; remove it (a new key is made, and stores signed with the old one must be adopted again)", path)
	}
	return Key{secret: secret}, nil
}

// create writes a new key. It takes its name in one step and never replaces a key
// already there, so that two processes making one at once both end up with the one
// that won.
func create(path string) (Key, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Key{}, fmt.Errorf("create the folder of the mcpdiff key: %w", err)
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return Key{}, err
	}
	err := atomicfile.Write(path, []byte(hex.EncodeToString(secret[:])+"\n"), atomicfile.Options{Mode: 0o600, Keep: true})
	if errors.Is(err, fs.ErrExist) {
		return read(path) // another process made it first
	}
	if err != nil {
		return Key{}, fmt.Errorf("write the mcpdiff key %s: %w", path, err)
	}
	return Key{secret: secret[:]}, nil
}

// Sign is the signature of parts for purpose: hex HMAC-SHA256, each part
// length-prefixed so that no two lists of parts sign the same.
func (k Key) Sign(purpose string, parts ...[]byte) string {
	m := hmac.New(sha256.New, k.secret)
	for _, p := range append([][]byte{[]byte(purpose)}, parts...) {
		fmt.Fprintf(m, "%d:", len(p))
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether sig is the signature of parts for purpose.
func (k Key) Verify(sig, purpose string, parts ...[]byte) bool {
	want := k.Sign(purpose, parts...)
	return hmac.Equal([]byte(sig), []byte(want))
}
