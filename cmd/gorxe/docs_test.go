package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstallDocs keeps the README's way to the gorxe command true: the Go version go.mod
// requires, go install of the module's command, and the bin/gorxe make build writes (stamped with
// its version, and ignored by git).
func TestInstallDocs(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../../" + name)
		require.NoError(t, err)
		return string(b)
	}
	readme, gomod, makefile, gitignore := read("README.md"), read("go.mod"), read("Makefile"), read(".gitignore")
	module := regexp.MustCompile(`(?m)^module (\S+)$`).FindStringSubmatch(gomod)
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(gomod)
	require.Len(t, module, 2)
	require.Len(t, goVersion, 2)
	text := strings.Join(strings.Fields(readme), " ") // as it reads, whatever the line breaks
	for _, want := range []string{"Go " + goVersion[1] + " or newer", "`go install " + module[1] + "/cmd/gorxe@latest`",
		"`go install ./cmd/gorxe`", "`make build` builds it as `bin/gorxe`"} {
		assert.True(t, strings.Contains(text, want), "the README does not say %q", want)
	}
	assert.Regexp(t, `(?m)^build:\n(\t.*\n)*\t\$\(GO\) build -o bin/gorxe .*-X main\.version=\$\(VERSION\).* \./cmd/gorxe\n`, makefile)
	assert.Contains(t, strings.Split(gitignore, "\n"), "/bin/")
}
