//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpliceReadme(t *testing.T) {
	doc := "# title\n\n## Performance\n\nintro\n\n" + readmeBegin + "\nold table\n" + readmeEnd + "\n\n## Next\n"
	out, err := spliceReadme(doc, "new table\n\n| a |\n")
	require.NoError(t, err)
	assert.Equal(t, "# title\n\n## Performance\n\nintro\n\n"+readmeBegin+"\nnew table\n\n| a |\n"+readmeEnd+"\n\n## Next\n", out)

	again, err := spliceReadme(out, "new table\n\n| a |\n")
	require.NoError(t, err)
	assert.Equal(t, out, again, "splicing is idempotent")
}

func TestSpliceReadmeNeedsMarkers(t *testing.T) {
	for _, doc := range []string{"no markers", readmeEnd + "\n" + readmeBegin, readmeBegin + " only"} {
		_, err := spliceReadme(doc, "x")
		assert.Error(t, err, doc)
	}
}

func TestUpdateReadme(t *testing.T) {
	p := filepath.Join(t.TempDir(), "README.md")
	require.NoError(t, os.WriteFile(p, []byte("a\n"+readmeBegin+"\n"+readmeEnd+"\nb\n"), 0o644))
	require.NoError(t, updateReadme(p, "table"))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "a\n"+readmeBegin+"\ntable\n"+readmeEnd+"\nb\n", string(b))
}
