package mcpdiff

import (
	"regexp"
	"testing"
)

func TestVersionIsReadFromTheLuaPlugin(t *testing.T) {
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(Version) {
		t.Fatalf("Version %q, read from lua/mcpdiff/version.lua, is not X.Y.Z", Version)
	}
	if got := parseVersion("-- a comment\nreturn \"1.2.3\"\n"); got != "1.2.3" {
		t.Fatalf("parseVersion: %q", got)
	}
}
