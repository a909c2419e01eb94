package install

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff"
)

const module = "github.com/mcpdiff/mcpdiff"

// `go install github.com/mcpdiff/mcpdiff/cmd/mcpdiff@VERSION` works: the checkout,
// served as the module proxy serves a release (a file:// proxy in front of the
// module cache's own downloads, for the dependencies), installs with Go's own tools
// and runs. Go refuses this for a module whose go.mod has a replace directive.
func TestGoInstall(t *testing.T) {
	t.Parallel()
	version := "v" + mcpdiff.Version
	proxy := filepath.Join(t.TempDir(), "proxy")
	if err := writeModuleProxy(proxy, srcRepo, module, version); err != nil {
		t.Fatal(err)
	}
	modcache := filepath.Join(t.TempDir(), "modcache") // this fake release stays out of the real cache
	gobin := t.TempDir()
	env := append(os.Environ(), goEnv...)
	env = append(env, "GOMODCACHE="+modcache, "GOBIN="+gobin, "GOSUMDB=off", "GOFLAGS=-trimpath",
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(modCache, "cache", "download")))
	t.Cleanup(func() {
		clean := exec.Command("go", "clean", "-modcache")
		clean.Env = env
		clean.Run() // the cache's files are read-only
	})
	cmd := exec.Command("go", "install", module+"/cmd/mcpdiff@"+version)
	cmd.Dir, cmd.Env = t.TempDir(), env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install %s/cmd/mcpdiff@%s: %v\n%s", module, version, err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "mcpdiff"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "mcpdiff "+mcpdiff.Version+" ") {
		t.Fatalf("the installed mcpdiff version: %v %q", err, out)
	}
}

// writeModuleProxy lays out dir as a GOPROXY serving version of module, made of the
// files committed in repo: the module's zip (every file but those of nested modules,
// such as tests/bench), its go.mod, its .info and the version list.
func writeModuleProxy(dir, repo, module, version string) error {
	at := filepath.Join(dir, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	list, err := exec.Command("git", "-C", repo, "ls-files", "-z").Output()
	if err != nil {
		return err
	}
	files := strings.Split(strings.TrimRight(string(list), "\x00"), "\x00")
	var nested []string
	for _, f := range files {
		if strings.HasSuffix(f, "/go.mod") {
			nested = append(nested, strings.TrimSuffix(f, "go.mod"))
		}
	}
	zf, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		return err
	}
	defer zf.Close()
	z := zip.NewWriter(zf)
files:
	for _, f := range files {
		for _, n := range nested {
			if strings.HasPrefix(f, n) {
				continue files
			}
		}
		info, err := os.Lstat(filepath.Join(repo, f))
		if err != nil || !info.Mode().IsRegular() {
			continue // the module zip holds regular files only
		}
		data, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			return err
		}
		w, err := z.Create(module + "@" + version + "/" + f)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		return err
	}
	for name, data := range map[string]string{
		version + ".mod":  string(gomod),
		version + ".info": `{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`,
		"list":            version + "\n",
	} {
		if err := os.WriteFile(filepath.Join(at, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}
